/**
 * The live status from the loop's events: the run's phase, every running agent (iteration,
 * progress, worktree) and the merge queue. Pure (no `vscode`): the run controller applies it to
 * each event, the status bar and the tree render what comes out.
 */
import type { RalphEvent } from '../core/events';
import { undecided } from '../core/util/exhaustive';
import { warningRule } from '../core/warningPolicy';
import type { AgentLive, LiveStatus, QueuedLive, QueuedState } from './liveStatus';

const QUEUED: ReadonlySet<string> = new Set<QueuedState>(['queued', 'merging', 'checking', 'waiting']);

function focus(live: LiveStatus, agent: AgentLive | undefined): LiveStatus {
  return {
    ...live,
    taskId: agent?.taskId,
    title: agent?.title,
    iteration: agent?.iteration,
    maxIterations: agent?.maxIterations,
    progress: agent?.progress,
    model: agent?.model,
    agent: agent?.agent,
  };
}

function withAgent(live: LiveStatus, taskId: string, update: (agent: AgentLive) => AgentLive): LiveStatus {
  const agents = live.agents ?? [];
  const index = agents.findIndex((a) => a.taskId === taskId);
  const agent = update(index >= 0 ? agents[index] : { taskId });
  const next = index >= 0 ? agents.map((a, i) => (i === index ? agent : a)) : [...agents, agent];
  return focus({ ...live, agents: next, queue: (live.queue ?? []).filter((q) => q.taskId !== taskId) }, agent);
}

function withoutAgent(live: LiveStatus, taskId: string): LiveStatus {
  const agents = (live.agents ?? []).filter((a) => a.taskId !== taskId);
  const next = { ...live, agents };
  return live.taskId === taskId ? focus(next, agents[agents.length - 1]) : next;
}

/** An agent's slot moved (given away while its gates run, waited for, taken back): the agent keeps its place and the focus stays. */
function slotMoved(live: LiveStatus, taskId: string, slot: AgentLive['slot']): LiveStatus {
  const agents = live.agents ?? [];
  const index = agents.findIndex((a) => a.taskId === taskId);
  if (index < 0 || agents[index].slot === slot) return live;
  return { ...live, agents: agents.map((a, i) => (i === index ? { ...a, slot } : a)) };
}

function withQueued(live: LiveStatus, entry: QueuedLive | undefined, taskId: string): LiveStatus {
  const queue = (live.queue ?? []).filter((q) => q.taskId !== taskId);
  const index = (live.queue ?? []).findIndex((q) => q.taskId === taskId);
  if (entry) {
    if (index >= 0) queue.splice(index, 0, entry);
    else queue.push(entry);
  }
  return { ...live, queue };
}

/** The queue moved a task: while the queue holds it, it is no agent any more. */
function merged(live: LiveStatus, event: Extract<RalphEvent, { type: 'merge' }>): LiveStatus {
  // checked ahead of its own gates, the task's agent is still at work on them
  const queued =
    QUEUED.has(event.state) && !event.provisional
      ? {
          taskId: event.taskId,
          state: event.state as QueuedState,
          ...(event.detail ? { detail: event.detail } : {}),
          ...(event.state === 'waiting' && event.files?.length ? { files: event.files } : {}),
        }
      : undefined;
  const next = withQueued(live, queued, event.taskId);
  return queued ? withoutAgent(next, event.taskId) : next;
}

export function reduceLive(live: LiveStatus, event: RalphEvent): LiveStatus {
  switch (event.type) {
    case 'run.started':
      return { state: live.state, agents: [], queue: [], ...(live.attention ? { attention: live.attention } : {}) };
    case 'task.started':
      return withAgent(live, event.taskId, (a) => ({
        ...a,
        title: event.title,
        iteration: event.iteration,
        maxIterations: event.maxIterations,
      }));
    case 'iteration.started':
      return withAgent(live, event.taskId, (a) => ({
        ...a,
        iteration: event.iteration,
        maxIterations: event.maxIterations,
        model: event.model,
        agent: event.agent,
        slot: undefined,
      }));
    case 'agent.slot':
      return slotMoved(live, event.taskId, event.state === 'model' ? undefined : event.state);
    case 'signal':
      return event.signal.kind === 'PROGRESS'
        ? withAgent(live, event.taskId, (a) => ({ ...a, progress: event.signal.kind === 'PROGRESS' ? event.signal.percent : a.progress }))
        : live;
    case 'worktree':
      if (event.state !== 'ready' || !(live.agents ?? []).some((a) => a.taskId === event.taskId)) return live;
      return withAgent(live, event.taskId, (a) => ({ ...a, worktree: event.path }));
    case 'merge':
      return merged(live, event);
    case 'task.finished':
      return withQueued(withoutAgent(live, event.taskId), undefined, event.taskId);
    case 'run.paused':
      return live.state === 'running' ? { ...live, state: 'paused' } : live;
    case 'run.resumed':
      return live.state === 'paused' ? { ...live, state: 'running', attention: undefined } : live;
    case 'warning':
      // a safeguard's warning asks for an answer (Continue / Stop, Increase max, Review errors) until answered
      return warningRule(event.code) ? { ...live, attention: event.message } : live;
    // the rest changes nothing the status bar or the tree shows
    case 'run.finished':
    case 'task.status':
    case 'iteration.finished':
    case 'model.delta':
    case 'model.response':
    case 'model.retry':
    case 'model.fault':
    case 'model.fallback':
    case 'wind-down':
    case 'agent.session':
    case 'tool.call':
    case 'tool.result':
    case 'delegation.started':
    case 'delegation.result':
    case 'compaction':
    case 'git.commit':
    case 'checkpoint':
    case 'gate.started':
    case 'gate.finished':
    case 'proof':
    case 'integrity.baseline':
    case 'report.written':
    case 'escalation':
    case 'council.started':
    case 'council.finished':
    case 'budget':
    case 'warning.answered':
    case 'error':
    case 'plan.started':
    case 'plan.finished':
      return live;
    default:
      return undecided(event, live);
  }
}
