import type { RalphConfig } from './config/schema';
import { ConfigService } from './config/service';
import { GitService } from './git/gitService';
import { WorktreeManager } from './git/worktrees';
import type { ModelFactory, ModelNotices, ModelSession } from './llm/factory';
import type { RetryNotice } from './llm/types';
import type { FallbackNotice } from './llm/fallbackClient';
import { agentKindFor } from './agentCli/port';
import { errorMessage, ModelError } from './errors';
import { NodeCommandRunner } from './commands/processRunner';
import type { RalphEventBody } from './events';
import type { GateRunner } from './gates/types';
import type { SecretRedactor } from './commands/secrets';
import type { RunnerDeps } from './loop/run/runAssembly';
import { startGitHost } from './git/gitHost';
import { newRunId, RalphRunner } from './loop/run/runner';
import { RunLock } from './loop/run/runLock';
import { RalphPaths } from './paths';
import { type Clock, systemClock } from './ports';
import { mergeCheckGates } from './review/mergeCheckGates';
import { ReviewDesk } from './review/reviewDesk';
import { TaskActions } from './record/actions';
import { CheckpointStore } from './record/checkpoint';
import type { TaskRecords } from './record/records';
import { TaskStore } from './tasks/store';
import { TaskWorktrees } from './tasks/taskWorktrees';
import { WorktreeRollbackPlanner } from './tasks/worktreeRollback';
import { ensureRalphDir } from './workspace';

/** What a surface adds to a run: its bus, prompts and command runners; the façade adds the rest. */
export interface RunParts extends Omit<RunnerDeps, 'workspace' | 'config' | 'model' | 'store'> {
  /** Builds the run's model port (the CLI's endpoints, the editor's models). */
  models: ModelFactory;
  /** The configuration of this run, when the caller adjusts it (`ralph run --ci`); default: the workspace's. */
  config?: RalphConfig;
}

/** A run that is ready to start: `runner.run(…)` starts it, `dispose()` releases its model port afterwards. */
export interface PreparedRun {
  runner: RalphRunner;
  config: RalphConfig;
  dispose(): void;
}

/**
 * The one way into the core for a workspace: the CLI and the editor open it once and take from
 * it the paths, the one ConfigService (its change event is the editor's), the task store, the
 * checkpoints, git, the worktrees and the person's task actions, and start runs from a model
 * factory. Every part is built here, so both surfaces wire the core the same way.
 */
export class Ralph implements TaskRecords {
  readonly paths: RalphPaths;
  readonly config: ConfigService;
  readonly store: TaskStore;
  readonly checkpoints: CheckpointStore;
  /** Git in the workspace itself (the main working tree, where `.ralph/` lives). */
  readonly git: GitService;
  /**
   * Retry, rollback, answer, clean up… Their root is the workspace, for both surfaces: the
   * editor passed `git.root` of a GitService made on the workspace, the CLI the workspace —
   * the same directory. Rollbacks revert there; a task's own worktree is found from there.
   */
  readonly actions: TaskActions;

  private readonly clock: Clock;

  constructor(
    readonly workspace: string,
    options: { clock?: Clock } = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.paths = new RalphPaths(workspace);
    this.config = new ConfigService(this.paths);
    this.store = new TaskStore(this.paths, options.clock);
    this.checkpoints = new CheckpointStore(this.paths);
    this.git = new GitService(workspace);
    this.actions = new TaskActions(
      this.store,
      this.checkpoints,
      this.git,
      [new WorktreeRollbackPlanner(workspace)],
      new TaskWorktrees(workspace),
    );
  }

  /** The tasks' worktrees (list, remove); with the configuration's shared links when given. */
  worktrees(config?: RalphConfig): WorktreeManager {
    return new WorktreeManager(this.workspace, config?.worktrees.link);
  }

  /** The model port outside a run (planning, a council), from `models` with the workspace's configuration. */
  async model(models: ModelFactory, config?: RalphConfig, notices?: ModelNotices): Promise<ModelSession & { config: RalphConfig }> {
    const used = config ?? (await this.config.load());
    return { ...(await models(used, notices)), config: used };
  }

  /**
   * Manual review outside a run (list, changes, approve, request changes, reject). An approval
   * that must re-check on a moved tip runs the required gates sandboxed, scrubbed and watched
   * like the queue's own check — through `gates` (the editor's Tasks API runner) when given.
   */
  async reviewDesk(parts: { redactor: SecretRedactor; emit?: (body: RalphEventBody) => void; gates?: GateRunner }): Promise<ReviewDesk> {
    const config = await this.config.load();
    const { paths, store, checkpoints } = this;
    const { redactor, emit, gates } = parts;
    return new ReviewDesk({
      paths,
      config,
      store,
      checkpoints,
      emit,
      gates: (merge) => mergeCheckGates({ paths, config, commands: new NodeCommandRunner(), redactor, emit, gates }, merge),
    });
  }

  /**
   * The run lock for a run about to be prepared (`runner.run({ lock })` names the run after it and
   * releases it): taken first, a second run on a busy workspace is refused before it starts the
   * git helper, probes the sandbox, sets up a model or opens a run log. `force`: `ralph run --force`.
   * A caller that does not start the run after all releases it.
   */
  async takeRunLock(force = false): Promise<RunLock> {
    await ensureRalphDir(this.paths);
    return RunLock.acquire(this.paths, newRunId(this.clock), { force });
  }

  /**
   * A run of the loop over this workspace with the model from `parts.models`: the model's retries
   * and fallback switches are the run's events. The store is the façade's, so the editor's tree
   * sees every write of the run at once.
   */
  async prepareRun(parts: RunParts): Promise<PreparedRun> {
    const { models, config: given, secretValues = [], ...rest } = parts;
    startGitHost(); // the git helper boots while the config and the model client load
    const config = given ?? (await this.config.load());
    const notices = {
      onRetry: (notice: RetryNotice) => runner.reportRetry(notice),
      onFallback: (notice: FallbackNotice) => runner.reportFallback(notice),
    };
    // a run whose agent is an agent CLI needs no model of its own to start: what would call one
    // (a task on the built-in agent, a bug council) fails then, with the reason it could not be set up
    const cliRun = rest.agentCli !== undefined && agentKindFor({}, config.agent, rest.agentCli.override) !== 'builtin';
    const session = await models(config, notices).catch((error: unknown) => {
      if (!cliRun) throw error;
      return unavailableModel(error);
    });
    const runner: RalphRunner = new RalphRunner({
      ...rest,
      workspace: this.workspace,
      config,
      store: this.store,
      configWrites: this.config,
      model: session.model,
      secretValues: [...session.secretValues, ...secretValues],
    });
    return { runner, config, dispose: () => session.dispose() };
  }
}

/** Opens the workspace's façade: one per workspace and process (the editor keeps it for the window). */
export function openRalph(workspace: string, options: { clock?: Clock } = {}): Ralph {
  return new Ralph(workspace, options);
}

/** The model port of a run that has none (no key, no endpoint): each call fails with why, as an auth fault. */
function unavailableModel(cause: unknown): ModelSession {
  const message = `the built-in agent's model is not set up: ${errorMessage(cause)}`;
  return {
    model: { chat: () => Promise.reject(new ModelError(message, undefined, false, 'auth')) },
    secretValues: [],
    dispose: () => undefined,
  };
}
