import * as vscode from 'vscode';
import { COMMAND_IDS, type CommandId } from './commands';
import { errorMessage } from './core/errors';
import { EventBus } from './core/events';
import { openRalph } from './core/ralph';
import { NodeCommandRunner } from './core/commands/processRunner';
import { IsolatedCommandRunner, isolationSettings } from './core/commands/sandbox';
import { SecretRedactor } from './core/commands/secrets';
import { PANEL_VIEW_TYPE } from './shared/protocol';
import { Notifications } from './ui/notifications';
import { PanelFeeder } from './ui/panel/panelFeeder';
import { createPanelMessageHandlers } from './ui/panel/panelMessages';
import { PanelModel } from './ui/panel/panelModel';
import { PanelPersistence } from './ui/panel/panelPersistence';
import { ProgressPanel } from './ui/panel/progressPanel';
import { type Prompts, PromptsSlot } from './ui/prompts';
import { RalphStatusBar } from './ui/statusBar';
import { TaskTreeProvider } from './ui/taskTree';
import { PlanReviews } from './ui/planReview/planReview';
import { registerRalphParticipant } from './chat/ralphParticipant';
import { registerRalphTools } from './chat/ralphTools';
import type { ChatRecorder } from './chat/chatRecorder';
import { WarningActions } from './app/warningActions';
import { createCommandHandlers } from './app/commandHandlers';
import { ForgeCommands } from './app/forgeCommands';
import { ChannelLogger } from './vscode/logger';
import { RunController } from './app/runController';
import { SecretStorageSource } from './vscode/secrets';
import { GateTaskProvider, RALPH_TASK_TYPE, TasksApiGateRunner } from './vscode/tasksGateRunner';
import { GitContentProvider, GIT_SCHEME } from './vscode/gitContentProvider';
import { ReviewComments } from './ui/reviewComments';

/** What `activate` returns: a handle for the integration tests (and other extensions). */
export interface RalphExtensionApi {
  readonly workspace: string | undefined;
  readonly bus: EventBus;
  readonly tree: TaskTreeProvider | undefined;
  readonly statusBar: RalphStatusBar | undefined;
  readonly runs: RunController | undefined;
  /** The progress panel's host and the model it shows. */
  readonly panel: ProgressPanel | undefined;
  readonly panelModel: PanelModel | undefined;
  /** The line comments on review diffs (the Comments API). */
  readonly comments: ReviewComments | undefined;
  /** The plan reviews opened by Plan Tasks from Document. */
  readonly planReviews: PlanReviews | undefined;
  /** What `@ralph` answered, request by request. */
  readonly chat: ChatRecorder;
  readonly commandIds: readonly CommandId[];
  /** How long `activate` took, in milliseconds (DESIGN §6: tens of milliseconds). */
  readonly activationMs: number;
  /** Answers the commands' questions (modal confirmations, input boxes) until disposed — for tests. */
  setPrompts(prompts: Partial<Prompts>): vscode.Disposable;
}

/** The composition root: every service is built here by hand and every disposable pushed. */
export async function activate(context: vscode.ExtensionContext): Promise<RalphExtensionApi> {
  const started = performance.now();
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
    const none = () => new vscode.Disposable(() => undefined);
    const chat = registerRalphParticipant(context.extensionUri, undefined);
    context.subscriptions.push(chat.disposable, ...registerRalphTools(undefined));
    return { workspace: undefined, bus, tree: undefined, statusBar: undefined, runs: undefined, panel: undefined, panelModel: undefined, comments: undefined, planReviews: undefined, chat: chat.recorder, commandIds: COMMAND_IDS, activationMs: performance.now() - started, setPrompts: none };
  }

  const workspace = folder.uri.fsPath;
  // the one way into the core: paths, the config service, the store, checkpoints, git, task actions, runs
  const ralph = openRalph(workspace);
  const { paths, store, checkpoints, git, actions, config } = ralph;
  const secrets = new SecretStorageSource(context.secrets);
  // Gates run through the Tasks API, with the same secret scrubbing and sandbox as the CLI's.
  const redactor = new SecretRedactor();
  const commandRunner = new IsolatedCommandRunner(
    new NodeCommandRunner(),
    async () => isolationSettings(workspace, await config.load()),
    redactor,
    (message) => logger.warn(message),
  );
  const gateRunner = new TasksApiGateRunner(folder, commandRunner);
  const runs = new RunController(ralph, bus, secrets, logger, gateRunner, redactor);
  context.subscriptions.push(
    vscode.tasks.registerTaskProvider(RALPH_TASK_TYPE, new GateTaskProvider(folder, commandRunner, async () => (await config.load()).gates)),
  );
  const tree = new TaskTreeProvider(store, new vscode.RelativePattern(folder, '.ralph/tasks.json'), () => ralph.worktrees().list());
  const statusBar = new RalphStatusBar();
  context.subscriptions.push(runs, tree, statusBar);

  // the progress panel: a model that follows the bus from activation, so opening it shows the run so far
  const prices = () => runs.lastConfig?.llm.prices ?? {};
  const provider = () => runs.lastConfig?.llm.provider ?? 'openai';
  const panelModel = new PanelModel(prices, PanelPersistence.load(context.workspaceState), provider);
  const feeder = new PanelFeeder({ model: panelModel, bus, store, checkpoints, paths, prices, provider });
  context.subscriptions.push(feeder, new PanelPersistence(context.workspaceState, panelModel));
  const warnings: WarningActions = new WarningActions({ model: panelModel, runs, logger, showPanel: (): Promise<void> => progressPanel.show() });
  const progressPanel: ProgressPanel = new ProgressPanel(context.extensionUri, panelModel, createPanelMessageHandlers({ workspace, warnings }), logger, () => feeder.loadFromDisk());
  context.subscriptions.push(
    progressPanel,
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, { deserializeWebviewPanel: (webviewPanel) => progressPanel.revive(webviewPanel) }),
    new Notifications({ bus, logger, warnings, titleOf: (id) => panelModel.state.tasks.find((t) => t.id === id)?.title }),
  );
  const view = vscode.window.createTreeView('ralph.tasks', { treeDataProvider: tree, showCollapseAll: true });
  context.subscriptions.push(view);
  context.subscriptions.push(
    runs.onDidChange((live) => {
      tree.setLiveStatus(live);
      statusBar.update(live);
      if (live.state === 'stopping') panelModel.apply({ type: 'panel.runPhase', phase: 'stopping' });
    }),
    tree.onDidChangeTreeData(() => {
      statusBar.update(runs.status, tree.snapshot);
      view.message = tree.message;
      const waiting = tree.snapshot.filter((t) => t.status === 'blocked' || t.status === 'needs_help').length;
      view.badge = waiting > 0 ? { value: waiting, tooltip: `${waiting} task${waiting === 1 ? '' : 's'} blocked or needing help` } : undefined;
    }),
  );

  const prompts = new PromptsSlot();
  const worktreeChanged = (taskId: string): void => {
    void tree.refreshWorktrees();
    panelModel.apply({ type: 'panel.worktree', taskId });
  };
  const forge = new ForgeCommands({ paths, config, store, logger, prompts });
  context.subscriptions.push(forge);
  // Show Changes: git objects as documents, and line comments on them for Request Changes
  const comments = new ReviewComments();
  context.subscriptions.push(comments, vscode.workspace.registerTextDocumentContentProvider(GIT_SCHEME, new GitContentProvider()));
  const planReviews = new PlanReviews({
    extensionUri: context.extensionUri,
    paths,
    store,
    logger,
    onAccepted: (tasks) => {
      void vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
      void vscode.window.showInformationMessage(`Ralph: added ${tasks.length} task${tasks.length === 1 ? '' : 's'} from the plan (${tasks.map((t) => t.id).join(', ')}).`, 'Start Autopilot').then((choice) => {
        if (choice) void vscode.commands.executeCommand('ralph.startAutopilot');
      });
    },
  });
  context.subscriptions.push(planReviews);
  const services = { ralph, paths, config, store, tree, runs, secrets, logger, bus, gateRunner, actions, git, prompts, panel: progressPanel, worktreeChanged, checkpoints, comments, redactor, live: () => runs.status, forge, planReviews };
  const handlers = createCommandHandlers(services);
  const chatServices = { paths, store, actions, runs, intake: services };
  const chat = registerRalphParticipant(context.extensionUri, chatServices);
  context.subscriptions.push(chat.disposable, ...registerRalphTools(chatServices));
  for (const id of COMMAND_IDS) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, async (...args: unknown[]) => {
        try {
          return await handlers[id](...args);
        } catch (error) {
          logger.error(`${id}: ${errorMessage(error)}`);
          void vscode.window.showErrorMessage(`Ralph: ${errorMessage(error)}`, 'Open Log').then((choice) => {
            if (choice) logger.channel.show(true);
          });
          return undefined;
        }
      }),
    );
  }

  // The welcome view's context key and the first read of the store finish after activation:
  // `setContext` is a round trip to the window, which can take long while the workbench starts.
  void store.exists().then((initialized) => vscode.commands.executeCommand('setContext', 'ralph.initialized', initialized));
  void tree.refresh();
  // tasks dispatched before a reload are followed again (silently: no sign-in prompt at start-up)
  void forge.resume().catch((error) => logger.warn(`not following the GitHub Actions tasks: ${errorMessage(error)}`));
  const activationMs = performance.now() - started;
  logger.info(`Ralph Loop active in ${workspace} (activated in ${activationMs.toFixed(1)} ms)`);
  return {
    workspace,
    bus,
    tree,
    statusBar,
    runs,
    panel: progressPanel,
    panelModel,
    comments,
    planReviews,
    chat: chat.recorder,
    commandIds: COMMAND_IDS,
    activationMs,
    setPrompts: (answers) => prompts.use(answers),
  };
}

export function deactivate(): void {
  // disposables in context.subscriptions are released by VS Code
}
