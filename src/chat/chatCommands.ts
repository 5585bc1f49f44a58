/**
 * What `@ralph` does for each of its commands, on the same core actions as the editor's
 * commands. Nothing that changes the workspace happens without the person: a run starts from
 * a button they click, a drafted task is added from a button, a plan is saved from its review.
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { IntakeCommandServices } from '../commands/intakeCommands';
import { planFromDocumentCommand } from '../commands/intakeCommands';
import type { RunController } from '../commands/runController';
import { errorMessage } from '../core/errors';
import { findHeading, headings } from '../core/intake/markdownOutline';
import type { RalphPaths } from '../core/paths';
import type { TaskActions } from '../core/record/actions';
import { pendingDependencies } from '../core/tasks/select';
import type { TaskStore } from '../core/tasks/store';
import type { ChatOutput } from './chatRecorder';
import { answerQuestion, awaitingReview, waitingQuestions } from './personBridge';
import { readyTasks, statusMarkdown } from './statusText';

export interface ChatServices {
  paths: RalphPaths;
  store: TaskStore;
  actions: TaskActions;
  runs: RunController;
  intake: IntakeCommandServices;
}

/** The task id named in `text` (its first word that is one), matched without regard to case. */
export function taskIdIn(text: string, ids: readonly string[]): { id: string; rest: string } | undefined {
  const words = text.trim().split(/\s+/);
  const id = ids.find((candidate) => candidate.toLowerCase() === words[0]?.replace(/[.,:;]$/, '').toLowerCase());
  return id ? { id, rest: words.slice(1).join(' ') } : undefined;
}

export async function chatStatus(s: ChatServices, stream: ChatOutput): Promise<void> {
  const tasks = await s.store.list();
  stream.markdown(statusMarkdown(tasks, s.runs.status));
  stream.button({ command: 'ralph.openPanel', title: 'Open Progress Panel' });
  if (!s.runs.running && readyTasks(tasks).length > 0) stream.button({ command: 'ralph.startAutopilot', title: 'Start Autopilot' });
}

/** `/run [id]`: says what would run and offers the button that starts it; never starts by itself. */
export async function chatRun(s: ChatServices, prompt: string, stream: ChatOutput): Promise<void> {
  const tasks = await s.store.list();
  if (s.runs.running)
    return void stream.markdown(`Ralph is already running in this window (${s.runs.status.state}). \`@ralph /status\` shows where it is.`);
  const named = taskIdIn(
    prompt,
    tasks.map((t) => t.id),
  );
  if (prompt.trim() && !named)
    return void stream.markdown(`There is no task "${prompt.trim().split(/\s+/)[0]}". \`@ralph /status\` lists the tasks.`);
  if (named) {
    const task = tasks.find((t) => t.id === named.id)!;
    if (!['todo', 'in_progress', 'halted'].includes(task.status))
      return void stream.markdown(
        `**${task.id}** is ${task.status}; only a task that is to do or halted can run${task.status === 'needs_help' ? ` (answer it first: \`@ralph /answer ${task.id} …\`)` : ''}.`,
      );
    const pending = pendingDependencies(task, tasks);
    if (pending.length > 0) return void stream.markdown(`**${task.id}** waits for ${pending.join(', ')} to be done first.`);
    stream.markdown(
      `Run **${task.id}** — ${task.title}?\n\nRalph will work on it in this workspace: edit files, run commands and commit each iteration, until its promise is met (at most ${task.maxIterations ?? 'the configured'} iterations). It starts when you click **Run ${task.id}**.`,
    );
    return void stream.button({ command: 'ralph.runSelectedTask', title: `Run ${task.id}`, arguments: [task.id] });
  }
  const ready = readyTasks(tasks);
  if (ready.length === 0)
    return void stream.markdown('No task is ready to run (none is to do with its dependencies done). `@ralph /status` shows why.');
  stream.markdown(
    `Start the autopilot? It runs the ${ready.length} ready task${ready.length === 1 ? '' : 's'} (${ready
      .slice(0, 6)
      .map((t) => `**${t.id}** ${t.title}`)
      .join(
        ', ',
      )}${ready.length > 6 ? ', …' : ''}) and those that become ready, editing files and committing in this workspace. It starts when you click **Start Autopilot**.`,
  );
  stream.button({ command: 'ralph.startAutopilot', title: 'Start Autopilot' });
}

/** `/answer [id] <text>`: lists the waiting questions, or answers one. */
export async function chatAnswer(s: ChatServices, prompt: string, stream: ChatOutput): Promise<void> {
  const waiting = await waitingQuestions(s.store);
  if (waiting.length === 0) return void stream.markdown('No task is waiting for an answer.');
  const named = taskIdIn(
    prompt,
    waiting.map((w) => w.task.id),
  );
  const target = named ? waiting.find((w) => w.task.id === named.id) : waiting.length === 1 ? waiting[0] : undefined;
  const answer = named ? named.rest : prompt.trim();
  const list = () => waiting.map((w) => `- **${w.task.id}** ${w.task.title} asks: ${w.question}`).join('\n');
  if (!target || !answer) {
    const how =
      waiting.length === 1 ? `\`@ralph /answer ${waiting[0].task.id} <your answer>\`` : '`@ralph /answer <task id> <your answer>`';
    return void stream.markdown(
      `${waiting.length === 1 ? 'A task is' : `${waiting.length} tasks are`} waiting for an answer:\n\n${list()}\n\nAnswer with ${how}.`,
    );
  }
  const task = await answerQuestion(s.actions, target.task.id, answer);
  stream.markdown(
    `Answered **${task.id}**: your answer is pinned in its next iteration's context. It ${task.status === 'halted' ? 'resumes from its checkpoint' : 'starts again'} at the next run (or now, in a run that is going).`,
  );
  stream.button({ command: 'ralph.runSelectedTask', title: `Run ${task.id}`, arguments: [task.id] });
}

/** `/review`: the tasks whose finished work waits for the person (read-only). */
export async function chatReview(s: ChatServices, stream: ChatOutput): Promise<void> {
  const tasks = await awaitingReview(s.store);
  if (tasks.length === 0)
    return void stream.markdown(
      'No task awaits your review. With manual review (`"merge": { "review": "manual" }` in .ralph/config.json), finished work waits here before it lands.',
    );
  stream.markdown(
    `${tasks.length} task${tasks.length === 1 ? '' : 's'} await${tasks.length === 1 ? 's' : ''} your review:\n\n${tasks.map((t) => `- **${t.id}** ${t.title}`).join('\n')}`,
  );
  for (const task of tasks.slice(0, 5)) {
    stream.button({ command: 'ralph.showChanges', title: `Show Changes of ${task.id}`, arguments: [task.id] });
    stream.button({ command: 'ralph.approveTask', title: `Approve ${task.id}`, arguments: [task.id] });
  }
}

/** `/plan [section]`: plans the referenced or open document; the review opens, nothing is saved here. */
export async function chatPlan(
  s: ChatServices,
  request: Pick<vscode.ChatRequest, 'prompt' | 'references'>,
  stream: ChatOutput,
): Promise<void> {
  const document = referencedFile(request.references) ?? openDocument(s.paths.workspace);
  if (!document)
    return void stream.markdown('Which document? Open it in the editor (a PRD, a spec) or reference it: `@ralph /plan #file:docs/prd.md`.');
  const relative = path.relative(s.paths.workspace, document).split(path.sep).join('/');
  const asked = request.prompt.replace(/#file:\S+/g, '').trim();
  const text = await vscode.workspace.fs.readFile(vscode.Uri.file(document)).then(
    (b) => b.toString(),
    () => '',
  );
  const section = asked ? findHeading(headings(text), asked)?.text : undefined;
  stream.progress(`Planning ${relative}${section ? ` (section "${section}")` : ''} with the configured model…`);
  let review;
  try {
    review = await planFromDocumentCommand(s.intake, { document, ...(section ? { section } : {}) });
  } catch (error) {
    return void stream.markdown(`Planning ${relative} failed: ${errorMessage(error)}`);
  }
  if (!review) return void stream.markdown(`Planning ${relative} did not finish (the notification says why).`);
  const { state } = review;
  const lines = state.tasks.map(
    (t, i) =>
      `${i + 1}. **${t.title}** (${t.type}, complexity ${t.complexity})${t.dependsOn.length ? ` — after ${t.dependsOn.join(', ')}` : ''}`,
  );
  stream.markdown(
    `Proposed ${state.tasks.length} task${state.tasks.length === 1 ? '' : 's'} from ${relative}:\n\n${lines.join('\n')}\n\n${state.problems.length ? `⚠ ${state.problems.join('; ')}\n\n` : ''}**Nothing is saved yet**: edit, reorder, merge or drop them in the Plan Review, then accept.`,
  );
}

function referencedFile(references: readonly vscode.ChatPromptReference[]): string | undefined {
  for (const reference of references) {
    const value = reference.value;
    if (value instanceof vscode.Uri && value.scheme === 'file') return value.fsPath;
    if (value instanceof vscode.Location && value.uri.scheme === 'file') return value.uri.fsPath;
  }
  return undefined;
}

function openDocument(workspace: string): string | undefined {
  const document =
    vscode.window.activeTextEditor?.document ??
    vscode.window.visibleTextEditors.find((e) => e.document.languageId === 'markdown')?.document;
  if (!document || document.uri.scheme !== 'file' || path.relative(workspace, document.uri.fsPath).startsWith('..')) return undefined;
  return document.uri.fsPath;
}
