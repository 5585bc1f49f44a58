import * as vscode from 'vscode';
import { COMMAND_IDS, type CommandId } from './commands';
import { errorMessage } from './core/errors';
import { EventBus, type RalphEvent } from './core/events';
import { loadConfig } from './core/config/load';
import { RalphPaths } from './core/paths';
import { NodeCommandRunner } from './core/safety/processRunner';
import { TaskStore } from './core/tasks/store';
import { RalphStatusBar } from './ui/statusBar';
import { TaskTreeProvider } from './ui/taskTree';
import { createCommandHandlers } from './vscode/commandHandlers';
import { ChannelLogger } from './vscode/logger';
import { RunController } from './vscode/runController';
import { SecretStorageSource } from './vscode/secrets';
import { GateTaskProvider, RALPH_TASK_TYPE, TasksApiGateRunner } from './vscode/tasksGateRunner';

/** What `activate` returns: a handle for the integration tests (and other extensions). */
export interface RalphExtensionApi {
  readonly workspace: string | undefined;
  readonly bus: EventBus;
  readonly tree: TaskTreeProvider | undefined;
  readonly statusBar: RalphStatusBar | undefined;
  readonly runs: RunController | undefined;
  readonly commandIds: readonly CommandId[];
}

/** The composition root: every service is built here by hand and every disposable pushed. */
export async function activate(context: vscode.ExtensionContext): Promise<RalphExtensionApi> {
  const channel = vscode.window.createOutputChannel('Ralph Loop', { log: true });
  context.subscriptions.push(channel);
  const logger = new ChannelLogger(channel);
  const bus = new EventBus();
  context.subscriptions.push(bus.subscribe((event) => logger.logEvent(event)));

  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder || folder.uri.scheme !== 'file') {
    // Without a local folder there is nothing to run against; commands still answer clearly.
    for (const id of COMMAND_IDS) {
      context.subscriptions.push(
        vscode.commands.registerCommand(id, () => vscode.window.showWarningMessage('Ralph Loop needs an open folder on this machine.')),
      );
    }
    return { workspace: undefined, bus, tree: undefined, statusBar: undefined, runs: undefined, commandIds: COMMAND_IDS };
  }

  const workspace = folder.uri.fsPath;
  const paths = new RalphPaths(workspace);
  const store = new TaskStore(paths);
  const secrets = new SecretStorageSource(context.secrets);
  const commandRunner = new NodeCommandRunner();
  const gateRunner = new TasksApiGateRunner(folder, commandRunner);
  const runs = new RunController(workspace, bus, secrets, logger, gateRunner, store);
  context.subscriptions.push(
    vscode.tasks.registerTaskProvider(RALPH_TASK_TYPE, new GateTaskProvider(folder, commandRunner, async () => (await loadConfig(paths)).gates)),
  );
  const tree = new TaskTreeProvider(store, new vscode.RelativePattern(folder, '.ralph/tasks.json'));
  const statusBar = new RalphStatusBar();
  context.subscriptions.push(runs, tree, statusBar);

  const view = vscode.window.createTreeView('ralph.tasks', { treeDataProvider: tree, showCollapseAll: true });
  context.subscriptions.push(view);
  context.subscriptions.push(
    runs.onDidChange((live) => {
      tree.setLiveStatus(live);
      statusBar.update(live);
    }),
    tree.onDidChangeTreeData(() => {
      statusBar.update(runs.status, tree.snapshot);
      view.message = tree.message;
    }),
  );
  context.subscriptions.push(bus.subscribe((event) => notify(event, logger)));

  const handlers = createCommandHandlers({ paths, store, tree, runs, secrets, logger, bus, gateRunner });
  for (const id of COMMAND_IDS) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handlers[id](...args);
        } catch (error) {
          logger.error(`${id}: ${errorMessage(error)}`);
          void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`);
          return undefined;
        }
      }),
    );
  }

  const initialized = await store.exists();
  await vscode.commands.executeCommand('setContext', 'ralph.initialized', initialized);
  await tree.refresh();
  logger.info(`Ralph Loop active in ${workspace}`);
  return { workspace, bus, tree, statusBar, runs, commandIds: COMMAND_IDS };
}

export function deactivate(): void {
  // disposables in context.subscriptions are released by VS Code
}

/** Notifications for the moments a person should know about. */
function notify(event: RalphEvent, logger: ChannelLogger): void {
  if (event.type !== 'task.finished') return;
  const text = `Ralph: ${event.taskId} ${event.status.replace('_', ' ')} after ${event.iterations} iteration(s): ${event.reason}`;
  const show = event.status === 'done' ? vscode.window.showInformationMessage : event.status === 'failed' ? vscode.window.showErrorMessage : vscode.window.showWarningMessage;
  void show(text, 'Open Log').then((choice) => {
    if (choice === 'Open Log') logger.channel.show(true);
  });
}
