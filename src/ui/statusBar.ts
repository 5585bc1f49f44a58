import * as vscode from 'vscode';
import type { Task } from '../core/tasks/schema';
import { DisposableBase } from './disposableBase';
import { iterationAgentWords } from './iterationAgent';
import type { AgentLive, LiveStatus } from './liveStatus';

/** What the item shows; `attention` wins over the others when something waits for an answer. */
export type StatusBarState = 'idle' | 'running' | 'paused' | 'stopping' | 'attention';

/** The status bar item; its text is derived from the live status and the task counts only. Click: the progress panel. */
export class RalphStatusBar extends DisposableBase {
  private readonly item = this.register(vscode.window.createStatusBarItem('ralph.status', vscode.StatusBarAlignment.Left, 50));
  private live: LiveStatus = { state: 'idle' };
  private tasks: readonly Task[] = [];
  private shown: StatusBarState = 'idle';
  /** An agent CLI that works on the tasks (`agent.kind`), with its model; undefined: the built-in agent. */
  private agent: string | undefined;

  constructor() {
    super();
    this.item.name = 'Ralph Loop';
    this.item.command = 'ralph.openPanel';
    this.render();
    this.item.show();
  }

  /** The text as shown, for tests and logs. */
  get text(): string {
    return this.item.text;
  }

  get state(): StatusBarState {
    return this.shown;
  }

  /** The agent CLI of the workspace's config (Select Agent), shown beside the state; undefined for the built-in agent. */
  setAgent(agent: string | undefined): void {
    if (agent === this.agent) return;
    this.agent = agent;
    this.render();
  }

  update(live: LiveStatus, tasks?: readonly Task[]): void {
    this.live = live;
    if (tasks) this.tasks = tasks;
    this.render();
  }

  private render(): void {
    const { live } = this;
    const questions = this.tasks.filter((t) => t.status === 'blocked' || t.status === 'needs_help').length;
    const reviews = this.tasks.filter((t) => t.status === 'review').length;
    // what waits for the person, in words: `1 question · 2 to review`
    const wanted = [questions ? `${questions} question${questions === 1 ? '' : 's'}` : '', reviews ? `${reviews} to review` : '']
      .filter(Boolean)
      .join(' · ');
    const needYou = wanted ? ` · ${wanted}` : '';
    const agents = live.agents ?? [];
    const queued = (live.queue ?? []).length;
    const several = agents.length > 1;
    // one agent: its iteration and progress; several: how many talk to the model, are on their gates, wait in the merge queue
    const position = several ? agentCounts(agents) : live.iteration ? ` ${live.iteration}/${live.maxIterations ?? '?'}` : '';
    const progress =
      (!several && live.progress !== undefined ? ` · ${live.progress}%` : '') + (queued > 0 ? ` · ${queued} queued` : '') + needYou;
    const task = several ? agentLines(agents) : live.taskId ? `${live.taskId}${live.title ? ` ${live.title}` : ''}` : '';
    let state: StatusBarState;
    let text: string;
    let tooltip: string;
    if (live.attention !== undefined) {
      state = 'attention';
      text = `$(warning) Ralph${position} · needs attention`;
      tooltip = `**Ralph Loop needs an answer**\n\n${escape(live.attention)}\n\n[Open Progress Panel](command:ralph.openPanel)`;
    } else if (live.state === 'running') {
      state = 'running';
      text = `$(sync~spin) Ralph${position}${progress}`;
      tooltip = `**Ralph Loop is running** ${escape(task)}\n\n[$(debug-pause) Pause](command:ralph.pause) · [$(debug-stop) Stop](command:ralph.stop) · [Open Progress Panel](command:ralph.openPanel)`;
    } else if (live.state === 'paused') {
      state = 'paused';
      text = `$(debug-pause) Ralph${position} · paused`;
      tooltip = `**Ralph Loop is paused** ${escape(task)}\n\n[$(debug-continue) Resume](command:ralph.resume) · [$(debug-stop) Stop](command:ralph.stop)`;
    } else if (live.state === 'stopping') {
      state = 'stopping';
      text = `$(loading~spin) Ralph${position} · stopping`;
      tooltip = 'Ralph Loop is stopping after the current step; the task will be `halted` with its state saved.';
    } else if (wanted) {
      state = 'attention';
      text = `$(bell-dot) Ralph · ${wanted}`;
      tooltip = `**Waiting for you:** ${wanted}.\n\n${questions ? '[$(reply) Answer](command:ralph.answerTask) · ' : ''}${reviews ? '[$(git-pull-request-draft) Show Review List](command:ralph.showReviews) · ' : ''}[Open Progress Panel](command:ralph.openPanel)`;
    } else {
      state = 'idle';
      const todo = this.tasks.filter((t) => t.status === 'todo').length;
      text = `$(debug-start) Ralph${todo ? ` · ${todo} to do` : ''}`;
      tooltip = `**Ralph Loop is idle.**\n\n[$(run-all) Start Autopilot](command:ralph.startAutopilot) · [Open Progress Panel](command:ralph.openPanel)`;
    }
    this.shown = state;
    // a run: the agent and model of the iteration at work (the ladder may have moved it); else the config's agent CLI
    const working = state === 'running' || state === 'paused' ? iterationAgentWords(live) : undefined;
    if (working?.short) text = `${text} · ${working.short}`;
    else if (!working && this.agent && (state === 'idle' || state === 'running')) text = `${text} · ${this.agent.split(':')[0]}`;
    if (working) tooltip = `${tooltip}\n\nThis iteration: ${escape(working.full)}`;
    if (this.agent) tooltip = `${tooltip}\n\nAgent: ${escape(this.agent)} ([Select Agent](command:ralph.selectAgent))`;
    this.item.text = text;
    const markdown = new vscode.MarkdownString(tooltip, true);
    markdown.isTrusted = {
      enabledCommands: [
        'ralph.openPanel',
        'ralph.pause',
        'ralph.resume',
        'ralph.stop',
        'ralph.startAutopilot',
        'ralph.answerTask',
        'ralph.showReviews',
        'ralph.selectAgent',
      ],
    };
    this.item.tooltip = markdown;
    const where = several ? `,${position}` : position ? `, iteration${position}` : '';
    const percent = !several && live.progress !== undefined ? `, ${live.progress} percent` : '';
    this.item.accessibilityInformation = {
      label: `Ralph Loop: ${state}${where}${percent}${queued > 0 ? `, ${queued} queued for merge` : ''}${wanted ? `, ${wanted}` : ''}`,
      role: 'button',
    };
    this.item.backgroundColor = state === 'attention' ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}

/**
 * ` 3 agents`, or ` 2 agents · 1 on gates · 1 waiting` when tasks gave their agent slot away while
 * their gates run (issue 34): agents are the model conversations, the others count apart.
 */
function agentCounts(agents: readonly AgentLive[]): string {
  const talking = agents.filter((a) => a.slot === undefined).length;
  const gates = agents.filter((a) => a.slot === 'gates').length;
  const waiting = agents.length - talking - gates;
  return ` ${talking} agent${talking === 1 ? '' : 's'}${gates ? ` · ${gates} on gates` : ''}${waiting ? ` · ${waiting} waiting` : ''}`;
}

/** `T-1 (3/50 · 40%), T-2 (1/50 · gates running)` for the tooltip of a parallel run. */
function agentLines(agents: readonly AgentLive[]): string {
  return agents
    .map(
      (a) =>
        `${a.taskId} (${a.iteration ?? 0}/${a.maxIterations ?? '?'}${a.progress !== undefined ? ` · ${a.progress}%` : ''}${a.slot ? ` · ${SLOT_WORDS[a.slot]}` : ''})`,
    )
    .join(', ');
}

const SLOT_WORDS: Record<NonNullable<AgentLive['slot']>, string> = {
  gates: 'gates running',
  waiting: 'waiting for an agent slot',
};

function escape(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, (c) => `\\${c}`);
}
