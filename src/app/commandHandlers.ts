import * as vscode from 'vscode';
import type { CommandHandler, CommandId } from '../commands';
import { errorMessage } from '../core/errors';
import { initWorkspace } from '../core/init';
import { type NewTask, NewTaskSchema, type Task } from '../core/tasks/schema';
import { formatZodIssues } from '../core/util/zodIssues';
import type { ProgressPanel } from '../ui/panel/progressPanel';
import { TaskNode, type TaskTreeProvider } from '../ui/taskTree';
import { type GateCommandServices, runQualityGates, showReport } from './gateCommands';
import { RunRefusedError, type RunController } from './runController';
import { selectModel } from './selectModel';
import type { SecretStorageSource } from '../vscode/secrets';
import { createTaskCommands, resolveTask, type TaskCommandServices, taskIdOf } from './taskCommands';

export interface CommandServices extends GateCommandServices, TaskCommandServices {
  tree: TaskTreeProvider;
  runs: RunController;
  secrets: SecretStorageSource;
  panel: ProgressPanel;
}

/** One handler per command id: a missing handler is a compile error. */
export function createCommandHandlers(s: CommandServices): Record<CommandId, CommandHandler> {
  const task = createTaskCommands(s);
  return {
    'ralph.initWorkspace': async () => {
      const result = await initWorkspace(s.paths.workspace);
      await vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
      await s.tree.refresh();
      const what = [result.gitInitialized ? 'a git repository' : '', ...result.created].filter(Boolean);
      void vscode.window.showInformationMessage(what.length ? `Ralph: created ${what.join(', ')}.` : 'Ralph: this workspace is already initialized.');
      return result;
    },
    'ralph.addTask': async (input?: unknown) => addTask(s, input),
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
    'ralph.selectModel': async (preset?: unknown) => selectModel(s, preset),
    'ralph.retryTask': task.retryTask,
    'ralph.editTask': task.editTask,
    'ralph.increaseMaxIterations': task.increaseMaxIterations,
    'ralph.unblockTask': task.unblockTask,
    'ralph.cancelTask': task.cancelTask,
    'ralph.deleteTask': task.deleteTask,
    'ralph.rollbackTask': task.rollbackTask,
    'ralph.cleanUpWorktree': task.cleanUpWorktree,
    'ralph.openPanel': async (arg?: unknown) => {
      await s.panel.show(taskIdOf(arg));
      return true;
    },
    'ralph.setApiKey': async (value?: unknown) => {
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
    },
    'ralph.showLog': () => s.logger.channel.show(true),
    'ralph.refreshTasks': () => s.tree.refresh(),
    'ralph.runGates': () => runQualityGates(s),
    'ralph.showReport': async (arg?: unknown) => {
      const id = arg instanceof TaskNode ? undefined : taskIdOf(arg);
      return showReport(s, id ? new TaskNode(await s.store.get(id)) : arg);
    },
    'ralph.openConfig': async () => {
      const uri = vscode.Uri.file(s.paths.config);
      try {
        await vscode.workspace.fs.stat(uri);
      } catch {
        await initWorkspace(s.paths.workspace);
      }
      await vscode.window.showTextDocument(uri);
    },
  };
}

async function addTask(s: CommandServices, input: unknown): Promise<Task | undefined> {
  let fields: NewTask | undefined;
  if (input && typeof input === 'object' && !(input instanceof TaskNode)) {
    const parsed = NewTaskSchema.safeParse(input);
    if (!parsed.success) throw new Error(`Invalid task: ${formatZodIssues(parsed.error).join('; ')}`);
    fields = parsed.data;
  } else {
    fields = await askForTask();
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

async function askForTask(): Promise<NewTask | undefined> {
  const required = (what: string) => (text: string) => (text.trim() ? undefined : `${what} is required`);
  const title = await vscode.window.showInputBox({ title: 'Ralph: Add Task (1/4)', prompt: 'A short title', ignoreFocusOut: true, validateInput: required('A title') });
  if (title === undefined) return undefined;
  const prompt = await vscode.window.showInputBox({
    title: 'Ralph: Add Task (2/4)',
    prompt: 'The exact request for the agent (kept verbatim and re-pinned after compactions)',
    ignoreFocusOut: true,
    validateInput: required('The request'),
  });
  if (prompt === undefined) return undefined;
  const promise = await vscode.window.showInputBox({
    title: 'Ralph: Add Task (3/4)',
    prompt: 'The promise: what must be true for the task to count as done',
    placeHolder: 'e.g. npm test passes and the README documents the new flag',
    ignoreFocusOut: true,
    validateInput: required('The promise'),
  });
  if (promise === undefined) return undefined;
  const check = await vscode.window.showInputBox({
    title: 'Ralph: Add Task (4/4)',
    prompt: 'Optional: a check command, run as a required gate of this task only (its executable promise); leave empty for none',
    placeHolder: 'e.g. npm test -- test/login.test.js',
    ignoreFocusOut: true,
  });
  if (check === undefined) return undefined;
  return { title, prompt, promise, ...(check.trim() ? { check: check.trim() } : {}) };
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
