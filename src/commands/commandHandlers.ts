import * as vscode from 'vscode';
import type { CommandHandler, CommandId } from './commandIds';
import { errorMessage } from '../core/errors';
import { initWorkspace } from '../core/init';
import { type NewTask, NewTaskSchema, type Task } from '../core/tasks/schema';
import { formatZodIssues } from '../core/util/zodIssues';

import { askTaskSettings } from './taskFields';
import type { ProgressPanel } from '../ui/panel/progressPanel';
import { TaskNode, type TaskTreeProvider } from '../ui/taskTree';
import { type GateCommandServices, runQualityGates, showReport } from './gateCommands';
import { RunRefusedError, type RunController } from './runController';
import { selectModel } from './selectModel';
import { selectAgent } from './selectAgent';
import type { SecretStorageSource } from '../adapters/secrets';
import type { ForgeCommands } from './forgeCommands';
import { createTaskCommands, resolveTask, type TaskCommandServices, taskIdOf } from './taskCommands';
import { createPersonCommands, type PersonCommandServices } from './personCommands';
import { createReviewCommands, type ReviewCommandServices } from './reviewCommands';
import { importGithubIssuesCommand, type IntakeCommandServices, planFromDocumentCommand } from './intakeCommands';

export interface CommandServices
  extends GateCommandServices, TaskCommandServices, PersonCommandServices, ReviewCommandServices, IntakeCommandServices {
  tree: TaskTreeProvider;
  runs: RunController;
  secrets: SecretStorageSource;
  panel: ProgressPanel;
  forge: ForgeCommands;
}

/** One handler per command id, gathered from the tables by feature: a missing handler is a compile error. */
export function createCommandHandlers(s: CommandServices): Record<CommandId, CommandHandler> {
  return { ...taskHandlers(s), ...runHandlers(s), ...workspaceHandlers(s), ...forgeAndIntakeHandlers(s) };
}

/** What acts on one task: its lifecycle, the person's answers and reviews. */
function taskHandlers(s: CommandServices) {
  const task = createTaskCommands(s);
  const person = createPersonCommands(s);
  const review = createReviewCommands(s);
  return {
    'ralph.addTask': async (input?: unknown) => addTask(s, input),
    'ralph.retryTask': task.retryTask,
    'ralph.editTask': task.editTask,
    'ralph.increaseMaxIterations': task.increaseMaxIterations,
    'ralph.unblockTask': task.unblockTask,
    'ralph.cancelTask': task.cancelTask,
    'ralph.deleteTask': task.deleteTask,
    'ralph.rollbackTask': task.rollbackTask,
    'ralph.cleanUpWorktree': task.cleanUpWorktree,
    'ralph.answerTask': person.answerTask,
    'ralph.conveneCouncil': person.conveneCouncil,
    'ralph.retryMerge': person.retryMerge,
    'ralph.keepOnBranch': person.keepOnBranch,
    'ralph.openWaitingFiles': person.openWaitingFiles,
    'ralph.showChanges': review.showChanges,
    'ralph.approveTask': review.approveTask,
    'ralph.requestChanges': review.requestChanges,
    'ralph.rejectTask': review.rejectTask,
    'ralph.showReviews': review.showReviews,
    'ralph.addReviewComment': (reply?: unknown) => s.comments.add(reply as vscode.CommentReply),
  } satisfies Partial<Record<CommandId, CommandHandler>>;
}

/** Starting, pausing, resuming and stopping a run. */
function runHandlers(s: CommandServices) {
  return {
    'ralph.startAutopilot': async () => startRun(s, undefined),
    'ralph.runSelectedTask': async (arg?: unknown) => {
      const picked = await resolveTask(s, arg, 'run', 'Run which task?');
      if (picked) return startRun(s, picked.id);
      return undefined;
    },
    'ralph.pause': () => {
      if (s.runs.pause()) return true;
      void vscode.window.showInformationMessage(s.runs.running ? 'Ralph is already paused.' : 'Ralph is not running.');
      return false;
    },
    'ralph.resume': () => {
      if (s.runs.resume()) return true;
      void vscode.window.showInformationMessage(s.runs.running ? 'Ralph is not paused.' : 'Ralph is not running.');
      return false;
    },
    'ralph.stop': async () => {
      if (!s.runs.running) {
        void vscode.window.showInformationMessage('Ralph is not running.');
        return;
      }
      await s.runs.stop();
    },
  } satisfies Partial<Record<CommandId, CommandHandler>>;
}

/** The workspace, its configuration and key, the views, the log, the gates and reports. */
function workspaceHandlers(s: CommandServices) {
  return {
    'ralph.initWorkspace': () => initWorkspaceCommand(s),
    'ralph.selectModel': async (preset?: unknown) => selectModel(s, preset),
    'ralph.selectAgent': async (preset?: unknown) => selectAgent(s, preset),
    'ralph.setApiKey': (value?: unknown) => setApiKey(s, value),
    'ralph.openConfig': () => openConfig(s),
    'ralph.openPanel': async (arg?: unknown) => {
      await s.panel.show(taskIdOf(arg));
      return true;
    },
    'ralph.showLog': () => s.logger.channel.show(true),
    'ralph.refreshTasks': () => s.tree.refresh(),
    'ralph.runGates': () => runQualityGates(s),
    'ralph.showReport': async (arg?: unknown) => {
      const id = arg instanceof TaskNode ? undefined : taskIdOf(arg);
      return showReport(s, id ? new TaskNode(await s.store.get(id)) : arg);
    },
  } satisfies Partial<Record<CommandId, CommandHandler>>;
}

/** GitHub Actions, and tasks planned from a document or imported from issues. */
function forgeAndIntakeHandlers(s: CommandServices) {
  return {
    'ralph.setUpGitHubActions': () => s.forge.setUp(),
    'ralph.runOnGitHubActions': (arg?: unknown) => s.forge.run(arg),
    'ralph.openRemote': (arg?: unknown) => s.forge.open(arg),
    'ralph.planFromDocument': (arg?: unknown) => planFromDocumentCommand(s, arg),
    'ralph.importGithubIssues': (arg?: unknown) => importGithubIssuesCommand(s, arg),
  } satisfies Partial<Record<CommandId, CommandHandler>>;
}

async function initWorkspaceCommand(s: CommandServices) {
  const result = await initWorkspace(s.paths.workspace);
  await vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
  await s.tree.refresh();
  const what = [result.gitInitialized ? 'a git repository' : '', ...result.created].filter(Boolean);
  void vscode.window.showInformationMessage(
    what.length ? `Ralph: created ${what.join(', ')}.` : 'Ralph: this workspace is already initialized.',
  );
  return result;
}

async function setApiKey(s: CommandServices, value: unknown): Promise<boolean> {
  const key =
    typeof value === 'string'
      ? value
      : await vscode.window.showInputBox({
          title: 'Ralph: Set API Key',
          prompt: 'The key of your OpenAI-compatible endpoint. It is kept in VS Code secret storage, never in files or logs.',
          password: true,
          ignoreFocusOut: true,
          validateInput: (text) => (text.trim() ? undefined : 'Enter a key (or press Escape to cancel)'),
        });
  if (!key?.trim()) return false;
  await s.secrets.store(key.trim());
  s.logger.info('API key stored in secret storage');
  void vscode.window.showInformationMessage('Ralph: API key saved in secret storage.');
  return true;
}

async function openConfig(s: CommandServices): Promise<void> {
  const uri = vscode.Uri.file(s.paths.config);
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    await initWorkspace(s.paths.workspace);
  }
  await vscode.window.showTextDocument(uri);
}

async function addTask(s: CommandServices, input: unknown): Promise<Task | undefined> {
  let fields: NewTask | undefined;
  if (input && typeof input === 'object' && !(input instanceof TaskNode)) {
    const parsed = NewTaskSchema.safeParse(input);
    if (parsed.success) fields = parsed.data;
    else if (withoutPromise(input)) fields = await askPromise(s, input);
    else throw new Error(`Invalid task: ${formatZodIssues(parsed.error).join('; ')}`);
  } else {
    fields = await askForTask(s);
  }
  if (!fields) return undefined;
  await s.store.ensure();
  const task = await s.store.add(fields);
  await vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
  void vscode.window.showInformationMessage(`Ralph: added ${task.id} "${task.title}".`, 'Run Now').then((choice) => {
    if (choice === 'Run Now') void vscode.commands.executeCommand('ralph.runSelectedTask', new TaskNode(task));
  });
  return task;
}

/** A drafted task (`@ralph /add`) whose conversation stated no completion criteria. */
function withoutPromise(input: object): input is Omit<NewTask, 'promise'> & { promise?: unknown } {
  const draft = input as { title?: unknown; prompt?: unknown; promise?: unknown };
  return (
    typeof draft.title === 'string' &&
    typeof draft.prompt === 'string' &&
    (draft.promise === undefined || draft.promise === null || draft.promise === '')
  );
}

/** The promise of a drafted task, asked of the person (never guessed). */
async function askPromise(s: CommandServices, draft: Omit<NewTask, 'promise'> & { promise?: unknown }): Promise<NewTask | undefined> {
  const promise = await s.prompts.input({
    title: `Ralph: Add Task "${draft.title}"`,
    prompt: 'The promise: what must be true for the task to count as done',
    placeHolder: 'e.g. npm test passes and the README documents the new flag',
    ignoreFocusOut: true,
    validateInput: (text) => (text.trim() ? undefined : 'The promise is required'),
  });
  if (!promise?.trim()) return undefined;
  const parsed = NewTaskSchema.safeParse({ ...draft, promise });
  if (!parsed.success) throw new Error(`Invalid task: ${formatZodIssues(parsed.error).join('; ')}`);
  return parsed.data;
}

/** Title, request and promise, then the settings menu (type, complexity, priority, dependencies, limits, check, review). */
async function askForTask(s: CommandServices): Promise<NewTask | undefined> {
  const required = (what: string) => (text: string) => (text.trim() ? undefined : `${what} is required`);
  const title = await s.prompts.input({ title: 'Ralph: Add Task (1/3)', prompt: 'A short title', validateInput: required('A title') });
  if (title === undefined) return undefined;
  const prompt = await s.prompts.input({
    title: 'Ralph: Add Task (2/3)',
    prompt: 'The exact request for the agent (kept verbatim and re-pinned after compactions)',
    validateInput: required('The request'),
  });
  if (prompt === undefined) return undefined;
  const promise = await s.prompts.input({
    title: 'Ralph: Add Task (3/3)',
    prompt: 'The promise: what must be true for the task to count as done',
    placeHolder: 'e.g. npm test passes and the README documents the new flag',
    validateInput: required('The promise'),
  });
  if (promise === undefined) return undefined;
  const config = await s.config.load().catch(() => undefined);
  const { check, ...settings } = await askTaskSettings(s.prompts, {}, await s.store.list().catch(() => []), config);
  return { title, prompt, promise, ...settings, ...(check ? { check } : {}) };
}

async function startRun(s: CommandServices, taskId: string | undefined) {
  try {
    return await s.runs.start(taskId);
  } catch (error) {
    const action = error instanceof RunRefusedError ? error.action : undefined;
    const choices = [action?.title, 'Open Log'].filter((c): c is string => Boolean(c));
    void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`, ...choices).then((choice) => {
      if (choice === 'Open Log') s.logger.channel.show(true);
      else if (choice && action) void vscode.commands.executeCommand(action.command);
    });
    s.logger.error(errorMessage(error));
    return undefined;
  }
}
