import * as path from 'node:path';
import { AgentMissingError, checkAgentsFound } from '../core/agentCli/port';
import { ladderOfConfig } from '../core/escalation/steps';
import * as vscode from 'vscode';
import type { RalphConfig } from '../core/config/schema';
import { ConfigError, errorMessage, LockError } from '../core/errors';
import type { EventBus, RalphEvent } from '../core/events';
import type { GateRunner } from '../core/gates/types';
import {
  endpointModels,
  MissingKeyError,
  type ModelFactory,
  type ModelNotices,
  type ModelSession,
  resolveFallbackKeys,
  withEditorFallback,
} from '../core/llm/factory';
import type { RalphRunner, RunSummary } from '../core/loop/run/runner';
import type { ModelClient, RetryNotice } from '../core/llm/types';
import { LmModelClient, listEditorModels } from '../adapters/lmModelClient';
import type { Ralph } from '../core/ralph';
import type { SafeguardAnswer, SafeguardPrompt } from '../core/ports';
import { WARNING_POLICY } from '../core/warningPolicy';
import { NodeCommandRunner } from '../core/commands/processRunner';
import type { SecretRedactor } from '../core/commands/secrets';
import { DisposableBase } from '../ui/disposableBase';
import type { LiveStatus } from '../ui/liveStatus';
import { reduceLive } from '../ui/liveReducer';
import { modalApproval } from '../adapters/approvalPrompt';
import type { ChannelLogger } from '../adapters/logger';
import type { SecretStorageSource } from '../adapters/secrets';

/** Why a run could not start, with the action that fixes it. */
export class RunRefusedError extends Error {
  constructor(
    message: string,
    readonly action?: { title: string; command: string },
  ) {
    super(message);
  }
}

/**
 * Owns the one run of this window: builds a RalphRunner on the core for each start,
 * keeps the `ralph.state` context key and a LiveStatus for the UI, and stops cleanly.
 */
export class RunController extends DisposableBase {
  private runner: RalphRunner | undefined;
  private live: LiveStatus = { state: 'idle' };
  private config: RalphConfig | undefined;
  private readonly changed = this.register(new vscode.EventEmitter<LiveStatus>());
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly ralph: Ralph,
    private readonly bus: EventBus,
    private readonly secrets: SecretStorageSource,
    private readonly logger: ChannelLogger,
    private readonly gates: GateRunner,
    /** Shared with the gates' command runner: learns the API key from secret storage at each start. */
    private readonly redactor?: SecretRedactor,
  ) {
    super();
    const subscription = bus.subscribe((event) => this.track(event));
    this.register({ dispose: () => subscription.dispose() });
    void this.publish({ state: 'idle' });
  }

  /**
   * Safeguard warnings in the editor: repeated errors and the spend-rate alarm pause the
   * autopilot until the person answers (Continue = Resume, Stop); the other warnings let the loop go on while the panel and
   * the notification offer Stop / Increase max, which act on the running loop directly.
   */
  private readonly safeguards: SafeguardPrompt = {
    decide: async (warning) => {
      const rule = WARNING_POLICY[warning.code];
      if (!rule.waits) return { action: 'continue' };
      return new Promise<SafeguardAnswer>((resolve) => {
        // semi-auto waits in waiting_user while the task's question is open: answered anywhere (the
        // panel's answer box, the tree, the CLI), the wait is over and the task resumes with the answer
        const answered =
          warning.question === undefined
            ? undefined
            : this.ralph.store.onDidChange((tasks) => {
                if (tasks.find((t) => t.id === warning.taskId)?.status !== 'needs_help' && this.pendingReview === settle) {
                  this.answerReview({ action: 'continue' });
                  void this.publish({ ...this.live, attention: undefined });
                }
              });
        const settle = (answer: SafeguardAnswer) => {
          answered?.dispose();
          resolve(answer);
        };
        this.pendingReview = settle;
        // semi-auto's wait after a task ended lets the other agents work on: only new starts wait
        void this.publish({ ...this.live, ...(rule.pauses ? { state: 'paused' as const } : {}), attention: warning.message });
      });
    },
  };
  private pendingReview: ((answer: SafeguardAnswer) => void) | undefined;

  get workspace(): string {
    return this.ralph.workspace;
  }

  get status(): LiveStatus {
    return this.live;
  }

  get running(): boolean {
    return this.runner !== undefined;
  }

  get paused(): boolean {
    return (this.runner?.paused ?? false) || this.pendingReview !== undefined;
  }

  /**
   * The configuration of the current run, or between runs the workspace's last valid one (an
   * edit of `.ralph/config.json` shows without a restart): its prices price the panel's cost column.
   */
  get lastConfig(): RalphConfig | undefined {
    return this.runner ? this.config : (this.ralph.config.current ?? this.config);
  }

  /** Runs one task, or the autopilot when `taskId` is absent; resolves when the run ends. */
  async start(taskId?: string): Promise<RunSummary> {
    if (this.runner) throw new RunRefusedError('Ralph is already running in this window; stop it first.');
    if (!vscode.workspace.isTrusted) {
      throw new RunRefusedError('Ralph Loop edits files and runs commands, so it only runs in a trusted workspace.', {
        title: 'Manage Workspace Trust',
        command: 'workbench.trust.manage',
      });
    }
    const config = await this.workspaceConfig();
    try {
      // a configured agent CLI that is not installed: said before anything changes
      checkAgentsFound(await this.ralph.store.list(), config.agent, undefined, process.env, ladderOfConfig(config));
    } catch (error) {
      if (error instanceof AgentMissingError)
        throw new RunRefusedError(error.message, { title: 'Open Config', command: 'ralph.openConfig' });
      throw error;
    }
    const { runner, dispose } = await this.ralph.prepareRun({
      config,
      models: this.models,
      bus: this.bus,
      commands: new NodeCommandRunner(),
      gates: this.gates,
      logger: this.logger,
      approval: modalApproval,
      safeguards: this.safeguards,
      // an agent CLI's session reaches Ralph's signal tools through the bundled CLI, run by the editor's own Node
      agentCli: { ralph: { command: process.execPath, args: [path.join(__dirname, 'cli.js')], env: { ELECTRON_RUN_AS_NODE: '1' } } },
    });
    this.runner = runner;
    this.config = config;
    await this.publish({ state: 'running' });
    try {
      return await runner.run({ taskId });
    } catch (error) {
      if (error instanceof LockError) throw new RunRefusedError(error.message);
      throw error;
    } finally {
      dispose();
      this.runner = undefined;
      await this.publish({ state: 'idle' });
    }
  }

  /**
   * The model port with the settings of a run (provider, key, fallbacks, retries), for work that
   * is not a task run (planning); `dispose` when done. Refused like a run: an untrusted workspace,
   * no key.
   */
  async openModel(config: RalphConfig, onRetry: (notice: RetryNotice) => void = () => undefined): Promise<ModelSession> {
    if (!vscode.workspace.isTrusted) {
      throw new RunRefusedError('Ralph Loop sends your files to the configured model, so it only does so in a trusted workspace.', {
        title: 'Manage Workspace Trust',
        command: 'workbench.trust.manage',
      });
    }
    return this.models(config, { onRetry });
  }

  /** The workspace's configuration; a broken file refuses the run with Open Config. */
  private async workspaceConfig(): Promise<RalphConfig> {
    try {
      return await this.ralph.config.load();
    } catch (error) {
      if (error instanceof ConfigError) throw new RunRefusedError(error.message, { title: 'Open Config', command: 'ralph.openConfig' });
      throw error;
    }
  }

  /** The keys `llm.fallback` entries name; a variable that is not set refuses the run with its config at hand. */
  private async fallbackKeys(config: RalphConfig): Promise<Record<string, string>> {
    try {
      return await resolveFallbackKeys(config.llm, this.secrets);
    } catch (error) {
      throw new RunRefusedError(errorMessage(error), { title: 'Open Config', command: 'ralph.openConfig' });
    }
  }

  /**
   * The editor's model factory: its own models (`llm.provider` "vscode"), or the
   * OpenAI-compatible endpoint with its key. Without a key and a baseUrl, a workspace whose
   * editor has chat models is offered those (Select Model) instead of only "set a key".
   */
  private readonly models: ModelFactory = async (config, notices = {}) => {
    const session =
      config.llm.provider === 'vscode' ? await this.editorModels(config, notices) : await this.endpointModels(config, notices);
    for (const key of session.secretValues) this.redactor?.add(key);
    return session;
  };

  private async editorModels(config: RalphConfig, { onRetry, onFallback }: ModelNotices): Promise<ModelSession> {
    const client = new LmModelClient({ maxRetries: config.llm.maxRetries, timeoutMs: config.llm.requestTimeoutMs, onRetry });
    const probe = new LmModelClient({ maxRetries: 0, timeoutMs: config.llm.requestTimeoutMs });
    const fallbackKeys = await this.fallbackKeys(config);
    const model = withEditorFallback(config.llm, client, probe, { onRetry, onFallback, fallbackKeys });
    return { model, secretValues: Object.values(fallbackKeys), dispose: () => (client.dispose(), probe.dispose()) };
  }

  private async endpointModels(config: RalphConfig, notices: ModelNotices): Promise<ModelSession> {
    try {
      return await endpointModels(this.secrets)(config, notices);
    } catch (error) {
      if (!(error instanceof MissingKeyError))
        throw new RunRefusedError(errorMessage(error), { title: 'Open Config', command: 'ralph.openConfig' });
      const editorModels = config.llm.baseUrl ? [] : await listEditorModels().catch(() => []);
      if (editorModels.length > 0) {
        const names = editorModels
          .slice(0, 3)
          .map((m) => m.name)
          .join(', ');
        throw new RunRefusedError(
          `${errorMessage(error)}. No key is needed to use a model this editor already has (${names}${editorModels.length > 3 ? ', …' : ''}): choose one with "Ralph: Select Model".`,
          { title: 'Select Model', command: 'ralph.selectModel' },
        );
      }
      throw new RunRefusedError(errorMessage(error), { title: 'Set API Key', command: 'ralph.setApiKey' });
    }
  }

  /** Ends the current iteration cleanly; the task is `halted` with its state saved. */
  async stop(): Promise<void> {
    if (!this.runner) return;
    this.answerReview({ action: 'stop' });
    this.runner.stop();
    await this.publish({ ...this.live, state: 'stopping', attention: undefined });
  }

  /** Retry Now on merges that wait on the person's own files; false when no parallel run is going. */
  retryWaitingMerges(): boolean {
    return this.runner?.retryWaitingMerges() ?? false;
  }

  /** Keep on Its Branch: the waiting merge is held for review instead; false when no parallel run is going. */
  keepOnBranch(taskId: string): boolean {
    return this.runner?.keepOnBranch(taskId) ?? false;
  }

  /** The workspace's model outside a run (Convene Bug Council), keyed like a run's. */
  async modelOutsideRun(): Promise<{ config: RalphConfig; model: ModelClient; dispose(): void }> {
    const config = await this.workspaceConfig();
    const { model, dispose } = await this.models(config);
    return { config, model, dispose };
  }

  /** Finishes the current step, then waits; the core emits `run.paused`, which sets the state. */
  pause(): boolean {
    if (!this.runner || this.runner.paused || this.live.state === 'stopping') return false;
    this.runner.pause();
    return true;
  }

  resume(): boolean {
    if (this.answerReview({ action: 'continue' })) {
      void this.publish({ ...this.live, state: 'running', attention: undefined });
      return true;
    }
    if (!this.runner?.paused) return false;
    this.runner.resume();
    return true;
  }

  /** True when the loop was waiting for a review of repeated errors. */
  private answerReview(answer: SafeguardAnswer): boolean {
    const resolve = this.pendingReview;
    this.pendingReview = undefined;
    resolve?.(answer);
    return resolve !== undefined;
  }

  /** The person answered the warning that wanted attention. */
  async clearAttention(): Promise<void> {
    if (this.live.attention !== undefined) await this.publish({ ...this.live, attention: undefined });
  }

  private track(event: RalphEvent): void {
    if (!this.runner) return;
    const next = reduceLive(this.live, event);
    if (next !== this.live) void this.publish(next);
  }

  private async publish(status: LiveStatus): Promise<void> {
    const stateChanged = status.state !== this.live.state;
    this.live = status;
    this.changed.fire(status);
    if (stateChanged || status.state === 'idle') await vscode.commands.executeCommand('setContext', 'ralph.state', status.state);
  }
}
