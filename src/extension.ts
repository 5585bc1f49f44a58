import * as vscode from 'vscode';
import { type CommandHandler, COMMAND_IDS, type CommandId } from './commands/commandIds';
import { errorMessage } from './core/errors';
import { EventBus } from './core/events';
import type { RalphConfig } from './core/config/schema';
import type { ConfigService } from './core/config/service';
import { SandboxNotice } from './ui/sandboxNotice';
import type { RalphPaths } from './core/paths';
import { openRalph, type Ralph } from './core/ralph';
import { NodeCommandRunner } from './core/commands/processRunner';
import { IsolatedCommandRunner, isolationSettings } from './core/commands/sandbox';
import { SecretRedactor } from './core/commands/secrets';
import type { CheckpointStore } from './core/record/checkpoint';
import type { TaskStore } from './core/tasks/store';
import { PANEL_VIEW_TYPE } from './protocol/protocol';
import { Notifications } from './ui/notifications';
import { PanelFeeder } from './ui/panel/panelFeeder';
import { createPanelMessageHandlers } from './ui/panel/panelMessages';
import { PanelModel } from './ui/panel/panelModel';
import { PanelPersistence } from './ui/panel/panelPersistence';
import { ProgressPanel } from './ui/panel/progressPanel';
import { type Prompts, PromptsSlot } from './ui/dialogs';
import { RalphStatusBar } from './ui/statusBar';
import { TaskTreeProvider } from './ui/taskTree';
import { PlanReviews } from './ui/planReview/planReview';
import { registerRalphParticipant } from './chat/ralphParticipant';
import { registerRalphTools } from './chat/ralphTools';
import type { ChatRecorder } from './chat/chatRecorder';
import { WarningActions } from './commands/warningActions';
import { createCommandHandlers } from './commands/commandHandlers';
import { ForgeCommands } from './commands/forgeCommands';
import { ChannelLogger } from './adapters/logger';
import { watchConfig } from './adapters/configWatch';
import { RunController } from './commands/runController';
import { agentStatusLabel } from './commands/selectAgent';
import { SecretStorageSource } from './adapters/secrets';
import { GateTaskProvider, RALPH_TASK_TYPE, TasksApiGateRunner } from './adapters/tasksGateRunner';
import { GitContentProvider, GIT_SCHEME } from './adapters/gitContentProvider';
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
  /** The no-sandbox notification (shown once per machine). */
  readonly sandboxNotice: SandboxNotice | undefined;
  /** Answers the commands' questions (modal confirmations, input boxes, notifications with actions) until disposed — for tests. */
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
  if (!folder || folder.uri.scheme !== 'file') return activateWithoutFolder(context, bus, started);

  const workspace = folder.uri.fsPath;
  // the one way into the core: paths, the config service, the store, checkpoints, git, task actions, runs
  const ralph = openRalph(workspace);
  const { paths, store, checkpoints, config } = ralph;
  const secrets = new SecretStorageSource(context.secrets);
  const redactor = new SecretRedactor();
  const gateRunner = createGateRunner(context, folder, config, redactor, logger);
  const runs = new RunController(ralph, bus, secrets, logger, gateRunner, redactor);
  const tree = new TaskTreeProvider(store, new vscode.RelativePattern(folder, '.ralph/tasks.json'), () => ralph.worktrees().list());
  const statusBar = new RalphStatusBar();
  // an edit of .ralph/config.json reaches the config service (and its change event) without a restart
  context.subscriptions.push(runs, tree, statusBar, watchConfig(folder, config, logger));
  // the agent CLI that works on the tasks (Select Agent) shows in the status bar, and follows the config
  const showAgent = (c: RalphConfig | undefined) => statusBar.setAgent(c && c.agent.kind !== 'builtin' ? agentStatusLabel(c) : undefined);
  context.subscriptions.push(config.onDidChange(showAgent));
  void config.load().then(showAgent, () => undefined);

  // the progress panel: a model that follows the bus from activation, so opening it shows the run so far
  const prices = () => runs.lastConfig?.llm.prices ?? {};
  const provider = () => runs.lastConfig?.llm.provider ?? 'openai';
  const { panelModel, progressPanel } = createPanel(context, { workspace, paths, bus, store, checkpoints, runs, logger, prices, provider });
  showTaskTree(context, tree, statusBar, runs, panelModel);

  const commands = { ralph, tree, runs, secrets, logger, bus, gateRunner, redactor, panel: progressPanel, panelModel };
  const { prompts, forge, comments, planReviews, chat } = registerCommandsAndChat(context, commands);
  // the first run without a sandbox tells the person once: the command that installs it, or accepting the risk
  const sandboxNotice = new SandboxNotice({ bus, memory: context.globalState, config, prompts });
  context.subscriptions.push(sandboxNotice);

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
    chat,
    sandboxNotice,
    commandIds: COMMAND_IDS,
    activationMs,
    setPrompts: (answers) => prompts.use(answers),
  };
}

/** What `activate` made before the commands: the core, the run controller, the views they act on. */
interface CommandParts {
  ralph: Ralph;
  tree: TaskTreeProvider;
  runs: RunController;
  secrets: SecretStorageSource;
  logger: ChannelLogger;
  bus: EventBus;
  gateRunner: TasksApiGateRunner;
  redactor: SecretRedactor;
  panel: ProgressPanel;
  panelModel: PanelModel;
}

/**
 * The commands and `@ralph` (its chat participant and LM tools) on one set of services, with what only
 * they use: the prompts slot, the GitHub Actions forge, Show Changes' documents and comments, plan reviews.
 */
function registerCommandsAndChat(
  context: vscode.ExtensionContext,
  p: CommandParts,
): { prompts: PromptsSlot; forge: ForgeCommands; comments: ReviewComments; planReviews: PlanReviews; chat: ChatRecorder } {
  const { ralph, tree, runs, logger, panelModel } = p;
  const { paths, config, store, actions, git, checkpoints } = ralph;
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
  const planReviews = createPlanReviews(context, paths, store, logger);
  const services = {
    ralph,
    paths,
    config,
    store,
    tree,
    runs,
    secrets: p.secrets,
    logger,
    bus: p.bus,
    gateRunner: p.gateRunner,
    actions,
    git,
    prompts,
    panel: p.panel,
    worktreeChanged,
    checkpoints,
    comments,
    redactor: p.redactor,
    live: () => runs.status,
    forge,
    planReviews,
  };
  const handlers = createCommandHandlers(services);
  const chatServices = { paths, store, actions, runs, intake: services };
  const chat = registerRalphParticipant(context.extensionUri, chatServices);
  context.subscriptions.push(chat.disposable, ...registerRalphTools(chatServices));
  registerCommands(context, handlers, logger);
  return { prompts, forge, comments, planReviews, chat: chat.recorder };
}

/** Without a local folder there is nothing to run against; commands still answer clearly. */
function activateWithoutFolder(context: vscode.ExtensionContext, bus: EventBus, started: number): RalphExtensionApi {
  for (const id of COMMAND_IDS) {
    context.subscriptions.push(
      vscode.commands.registerCommand(id, () => vscode.window.showWarningMessage('Ralph Loop needs an open folder on this machine.')),
    );
  }
  const none = () => new vscode.Disposable(() => undefined);
  const chat = registerRalphParticipant(context.extensionUri, undefined);
  context.subscriptions.push(chat.disposable, ...registerRalphTools(undefined));
  return {
    workspace: undefined,
    bus,
    tree: undefined,
    statusBar: undefined,
    runs: undefined,
    panel: undefined,
    panelModel: undefined,
    comments: undefined,
    planReviews: undefined,
    chat: chat.recorder,
    sandboxNotice: undefined,
    commandIds: COMMAND_IDS,
    activationMs: performance.now() - started,
    setPrompts: none,
  };
}

/** Gates run through the Tasks API (and show in its terminal), with the same secret scrubbing and sandbox as the CLI's. */
function createGateRunner(
  context: vscode.ExtensionContext,
  folder: vscode.WorkspaceFolder,
  config: ConfigService,
  redactor: SecretRedactor,
  logger: ChannelLogger,
): TasksApiGateRunner {
  const commandRunner = new IsolatedCommandRunner(
    new NodeCommandRunner(),
    async () => isolationSettings(folder.uri.fsPath, await config.load()),
    redactor,
    (message) => logger.warn(message),
  );
  context.subscriptions.push(
    vscode.tasks.registerTaskProvider(
      RALPH_TASK_TYPE,
      new GateTaskProvider(
        folder,
        commandRunner,
        async () => (await config.load().catch((error: unknown) => config.current ?? Promise.reject(error))).gates,
      ),
    ),
  );
  return new TasksApiGateRunner(folder, commandRunner);
}

interface PanelParts {
  workspace: string;
  paths: RalphPaths;
  bus: EventBus;
  store: TaskStore;
  checkpoints: CheckpointStore;
  runs: RunController;
  logger: ChannelLogger;
  prices: () => RalphConfig['llm']['prices'];
  provider: () => RalphConfig['llm']['provider'];
}

/** The progress panel: a model that follows the bus from activation (so opening it shows the run so far), its host, and the notifications that share its warning answers. */
function createPanel(context: vscode.ExtensionContext, p: PanelParts): { panelModel: PanelModel; progressPanel: ProgressPanel } {
  const { bus, logger } = p;
  const panelModel = new PanelModel(p.prices, PanelPersistence.load(context.workspaceState), p.provider);
  const feeder = new PanelFeeder({
    model: panelModel,
    bus,
    store: p.store,
    checkpoints: p.checkpoints,
    paths: p.paths,
    prices: p.prices,
    provider: p.provider,
  });
  context.subscriptions.push(feeder, new PanelPersistence(context.workspaceState, panelModel));
  const warnings: WarningActions = new WarningActions({
    model: panelModel,
    runs: p.runs,
    logger,
    showPanel: (): Promise<void> => progressPanel.show(),
  });
  const progressPanel: ProgressPanel = new ProgressPanel(
    context.extensionUri,
    panelModel,
    createPanelMessageHandlers({ workspace: p.workspace, warnings }),
    logger,
    () => feeder.loadFromDisk(),
  );
  context.subscriptions.push(
    progressPanel,
    vscode.window.registerWebviewPanelSerializer(PANEL_VIEW_TYPE, {
      deserializeWebviewPanel: (webviewPanel) => progressPanel.revive(webviewPanel),
    }),
    new Notifications({ bus, logger, warnings, titleOf: (id) => panelModel.state.tasks.find((t) => t.id === id)?.title }),
  );
  return { panelModel, progressPanel };
}

/** The task tree's view, and the live status the tree, the status bar and the panel follow. */
function showTaskTree(
  context: vscode.ExtensionContext,
  tree: TaskTreeProvider,
  statusBar: RalphStatusBar,
  runs: RunController,
  panelModel: PanelModel,
): void {
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
      view.badge =
        waiting > 0 ? { value: waiting, tooltip: `${waiting} task${waiting === 1 ? '' : 's'} blocked or needing help` } : undefined;
    }),
  );
}

/** Plan reviews (Plan Tasks from Document): accepted tasks join the store, with a way to start them. */
function createPlanReviews(context: vscode.ExtensionContext, paths: RalphPaths, store: TaskStore, logger: ChannelLogger): PlanReviews {
  const planReviews = new PlanReviews({
    extensionUri: context.extensionUri,
    paths,
    store,
    logger,
    onAccepted: (tasks) => {
      void vscode.commands.executeCommand('setContext', 'ralph.initialized', true);
      void vscode.window
        .showInformationMessage(
          `Ralph: added ${tasks.length} task${tasks.length === 1 ? '' : 's'} from the plan (${tasks.map((t) => t.id).join(', ')}).`,
          'Start Autopilot',
        )
        .then((choice) => {
          if (choice) void vscode.commands.executeCommand('ralph.startAutopilot');
        });
    },
  });
  context.subscriptions.push(planReviews);
  return planReviews;
}

/** Every command, its failure logged and shown with a way to the log. */
function registerCommands(context: vscode.ExtensionContext, handlers: Record<CommandId, CommandHandler>, logger: ChannelLogger): void {
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
}

export function deactivate(): void {
  // disposables in context.subscriptions are released by VS Code
}
