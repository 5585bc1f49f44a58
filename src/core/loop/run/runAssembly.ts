import { AgentCliRunner, type AgentCliSettings } from '../../agentCli/port';
import { ToolRegistry } from '../../agent/toolRegistry';
import { createDelegationTools, Delegator } from '../../agent/delegation';
import { CORE_TOOLS } from '../../agent/tools';
import { CommandQuestions } from '../../commands/commandQuestions';
import { PolicyCommandRunner } from '../../commands/policyCommandRunner';
import type { CommandRunner } from '../../commands/processRunner';
import { IsolatedCommandRunner, isolationSettings, probeSandbox, type SandboxProbe, SandboxUnavailableError } from '../../commands/sandbox';
import type { RalphConfig } from '../../config/schema';
import { RalphError } from '../../errors';
import type { EventBus, RalphEventBody } from '../../events';
import { ProcessGateRunner } from '../../gates/runGates';
import type { GateRunner } from '../../gates/types';
import { GitService, IdentityCheck } from '../../git/gitService';
import { WorktreeManager } from '../../git/worktrees';
import { ControlFileGuard, type StoreWrites } from '../../guards/controlFileGuard';
import { GuardedCommandRunner, GuardedGateRunner } from '../../guards/guardedRunners';
import { ProbingGateRunner } from '../../gates/probe/probeRunner';
import { RedactingModelClient, type SecretRedactor } from '../../commands/secrets';
import { WorkspaceScope } from '../../guards/workspaceScope';
import type { ModelClient } from '../../llm/types';
import type { AgentSlot, CheckAhead } from '../task/types';
import { RalphPaths } from '../../paths';
import {
  type ApprovalPrompt,
  type Clock,
  type Logger,
  refuseApprovals,
  type SafeguardPrompt,
  silentLogger,
  systemClock,
} from '../../ports';
import type { DiskBudget } from '../../reports/diskBudget';
import { ReviewHolds } from '../../review/reviewHolds';
import { MeteredModelClient, SpendMeter } from '../../spend/budget';
import { CheckpointStore } from '../../record/checkpoint';
import type { TaskStore } from '../../tasks/store';
import { Autopilot, type AutopilotDeps } from './autopilot';
import { GateRunCache } from './gateRunCache';
import { gateRunsDirFrom } from './sharedGateRuns';
import { type GateBound, runGateBound } from './gateBound';
import { createMergeQueue } from '../merge/mergeQueueFactory';
import type { PauseGate } from '../person/pauseGate';
import type { RunQuestions } from '../person/runQuestions';
import { TaskLoop } from '../task/taskLoop';

export interface RunnerDeps {
  workspace: string;
  config: RalphConfig;
  model: ModelClient;
  commands: CommandRunner;
  /** Runs the quality gates; defaults to child processes (the CLI), the extension passes the Tasks API. */
  gates?: GateRunner;
  bus: EventBus;
  /** Share the caller's store so its change listeners (the tree) see every write at once. */
  store?: TaskStore;
  /** Ralph's own writes of `.ralph/config.json` (the editor's Select Agent, Accept the Risk): never tampering. */
  configWrites?: { onDidWrite(listener: () => void): { dispose(): void } };
  clock?: Clock;
  logger?: Logger;
  /** Asked before every caio action and every gated command (push, pull request, semi-auto…); default: refuse. */
  approval?: ApprovalPrompt;
  /** Answers safeguard warnings; default: unattended (`safeguards.onWarning`, repeated errors stop). */
  safeguards?: SafeguardPrompt;
  /** Secret values known to the caller (the API key from the editor's secret storage), redacted everywhere. */
  secretValues?: readonly string[];
  /** Models paid by a subscription (an editor's language models): their calls read "included" on the receipt, not a price or "unknown". */
  costIncluded?: (model: string) => boolean;
  /** Whether the command sandbox works here; default: probe bubblewrap once per process. */
  sandboxProbe?: () => Promise<SandboxProbe>;
  /** COMPLETE leaves the task in_progress: a forge's merge queue lands it (`ralph run --ci`), not this run. */
  awaitMerge?: boolean;
  /**
   * Nobody is there to ask (the CLI without a terminal, `CI`, a GitHub Actions job, `--unattended`):
   * the run never waits for a person — a landing the person's own files are in the way of ends at once.
   */
  unattended?: boolean;
  /** Agent CLIs (issue 46): the run's choice of agent and how `ralph mcp` starts; absent: every task on the built-in agent. */
  agentCli?: AgentCliSettings;
}

/** What one run hands its assembly: the run's id, events, redaction, questions, pause, store and disk budget. */
export interface AssemblyParts {
  deps: RunnerDeps;
  paths: RalphPaths;
  runId: string;
  emit: (body: RalphEventBody) => void;
  redactor: SecretRedactor;
  questions: RunQuestions;
  pause: PauseGate;
  store: TaskStore;
  disk: DiskBudget;
}

/**
 * Builds what one run works with: a task loop per agent (tools, commands sandboxed and guarded,
 * gates, the metered model), the parallel autopilot with its merge queue, and the run's spend
 * meter, shared by every agent so the run's budget holds across them.
 */
export class RunAssembly {
  /** Every control-file guard of the run (one per task loop): the store's writes are acknowledged to all. */
  readonly guards = new Set<ControlFileGuard>();
  /** The run's gate runs by tree: a run on a clean tree stands for the same gate on that tree anywhere in the run (agents, merged checks). */
  readonly gateRuns: GateRunCache;
  /** The run's bound on gate processes (`loop.maxConcurrentGates`): every gate runner of the run runs its processes through it. */
  readonly gateBound: GateBound;
  /** The repository's commit identity, checked once for the run's loops (its worktrees share the repository's config). */
  private readonly identity = new IdentityCheck();
  private sandboxWarned = false;
  private runMeter: SpendMeter | undefined;

  /** The task store's own writes, which no guard of the run takes for tampering. */
  private get storeWrites(): StoreWrites {
    return { file: this.run.paths.tasks, ...this.run.store.own };
  }

  constructor(private readonly run: AssemblyParts) {
    this.gateBound = runGateBound(run.deps.config.loop.maxConcurrentGates);
    // opt-in: the gate runs of many runs (CI matrices, test farms), `RALPH_GATE_RUNS_DIR`
    this.gateRuns = new GateRunCache(gateRunsDirFrom(process.env, run.deps.workspace));
  }

  /** The run's spend meter, once a loop was built. */
  get meter(): SpendMeter | undefined {
    return this.runMeter;
  }

  /**
   * The task loop; with `workRoot` (a task's worktree) its tools, commands (sandboxed there),
   * gates, commits and notes act there while the state stays in the workspace, and its meter
   * shares the run's totals so the run budget holds across agents.
   */
  async loop(
    workRoot?: string,
    checkAhead?: CheckAhead,
    slot?: AgentSlot,
  ): Promise<{ loop: TaskLoop; guard: ControlFileGuard; meter: SpendMeter }> {
    const { deps, paths, emit, redactor } = this.run;
    const root = workRoot ?? deps.workspace;
    // in a worktree, the links made into it are never its work (whatever its ignore rules say)
    const git = new GitService(root, redactor, this.identity, workRoot ? deps.config.worktrees.link : []);
    // a task's worktree was just made (or found registered and whole) by the worktree manager in a repository the run checked
    if (!workRoot && !(await git.isRepo())) {
      throw new RalphError(`${deps.workspace} is not a git repository; run \`git init\` (or \`ralph init\`) first`, 'not-a-repo');
    }
    if (deps.config.commands.sandbox === 'required') {
      // Refuse before the first model call rather than fail every command of the run.
      const probe = await (deps.sandboxProbe ?? probeSandbox)();
      if (!probe.available) throw new SandboxUnavailableError(probe.reason);
    }
    // the run's meter (its totals, caps and spend-rate alarm) is shared by every agent
    const meter = workRoot && this.runMeter ? this.runMeter.share() : (this.runMeter = this.newMeter());
    const model = new MeteredModelClient(new RedactingModelClient(deps.model, redactor), meter);
    const approval = deps.approval ?? refuseApprovals;
    const guard = new ControlFileGuard(paths, emit, { ownStateOnly: workRoot !== undefined, store: this.storeWrites });
    this.guards.add(guard);
    const commands = this.commandsIn(root);
    const guarded = new GuardedCommandRunner(commands, guard);
    const commandQuestions = new CommandQuestions();
    // the rules do not ask about what the sandbox makes harmless, when there is a sandbox
    const confined = async () => deps.config.commands.sandbox !== 'off' && (await (deps.sandboxProbe ?? probeSandbox)()).available;
    const loop = new TaskLoop({
      runId: this.run.runId,
      paths,
      config: deps.config,
      store: this.run.store,
      checkpoints: new CheckpointStore(paths),
      git,
      model,
      meter,
      safeguards: this.run.questions.safeguards(workRoot !== undefined),
      registry: new ToolRegistry([...CORE_TOOLS, ...createDelegationTools(new Delegator({ config: deps.config, model, approval }))]),
      commands: new PolicyCommandRunner(guarded, deps.config, approval, root, emit, { questions: commandQuestions, confined }),
      commandQuestions,
      gates: this.gateRuns.around(new GuardedGateRunner(new ProbingGateRunner(this.processes(commands)), guard)),
      baseGates: this.gateRuns.around(new GuardedGateRunner(new ProbingGateRunner(this.processes(commands)), this.baseGuard())),
      guard,
      scope: new WorkspaceScope(root, deps.config.worktrees.link),
      clock: deps.clock ?? systemClock,
      logger: deps.logger ?? silentLogger,
      emit,
      pause: this.run.pause,
      work: workRoot ? new RalphPaths(workRoot) : undefined,
      awaitingMerge: workRoot !== undefined || deps.awaitMerge === true,
      ...(checkAhead ? { checkAhead } : {}),
      ...(slot ? { slot } : {}),
      disk: this.run.disk,
      ...(deps.agentCli
        ? {
            agentCli: new AgentCliRunner(deps.config.agent, deps.agentCli, {
              mode: deps.config.commands.sandbox,
              probe: deps.sandboxProbe ?? probeSandbox,
              links: deps.config.worktrees.link,
            }),
          }
        : {}),
    });
    return { loop, guard, meter };
  }

  /** The gate processes in `commands` (or the surface's gate runner), within the run's bound. */
  private processes(commands: CommandRunner): GateRunner {
    return this.gateBound.around(this.run.deps.gates ?? new ProcessGateRunner(commands));
  }

  /**
   * The guard of a task's run at its base beside its first iteration: the task's loop writes its
   * checkpoint meanwhile, so no checkpoint is watched (as for the merged checks); the store's
   * writes are acknowledged to it like to every guard of the run.
   */
  private baseGuard(): ControlFileGuard {
    const guard = new ControlFileGuard(this.run.paths, this.run.emit, { ownStateOnly: true, store: this.storeWrites });
    this.guards.add(guard);
    return guard;
  }

  /** The agent's commands in `root`: sandboxed and scrubbed; a missing sandbox is said once per run, however many agents run commands. */
  private commandsIn(root: string): IsolatedCommandRunner {
    const { deps, emit, redactor } = this.run;
    const warn = (message: string) => {
      if (this.sandboxWarned) return;
      this.sandboxWarned = true;
      emit({ type: 'warning', code: 'no-sandbox', message });
    };
    return new IsolatedCommandRunner(deps.commands, isolationSettings(root, deps.config), redactor, warn, deps.sandboxProbe);
  }

  /** `loop.maxParallel` > 1: agents in worktrees, finished work through the merge queue. */
  autopilot(target: string, only: string | undefined, hold: AutopilotDeps['hold'], criticalHold: AutopilotDeps['criticalHold']): Autopilot {
    const { deps, paths, emit, redactor, store } = this.run;
    const worktrees = new WorktreeManager(deps.workspace, deps.config.worktrees.link);
    // the merged check runs the tasks' code too: sandboxed, scrubbed and watched like an agent's gates
    const guard = new ControlFileGuard(paths, emit, { ownStateOnly: true, store: this.storeWrites });
    this.guards.add(guard);
    const commands = new IsolatedCommandRunner(
      deps.commands,
      isolationSettings(worktrees.mergePath, deps.config),
      redactor,
      () => {},
      deps.sandboxProbe,
    );
    const gates = this.gateRuns.around(new GuardedGateRunner(new ProbingGateRunner(this.processes(commands)), guard));
    const checkpoints = new CheckpointStore(paths);
    const holds = new ReviewHolds({ config: deps.config, store, checkpoints, root: deps.workspace });
    const queue = createMergeQueue({
      config: deps.config,
      store,
      workspace: deps.workspace,
      worktrees,
      gates,
      target,
      emit,
      holdForReview: (taskId) => holds.wanted(taskId),
      paths,
    });
    const loopFor = async (root: string, checkAhead?: CheckAhead, slot?: AgentSlot) => (await this.loop(root, checkAhead, slot)).loop;
    return new Autopilot({
      config: deps.config,
      store,
      checkpoints,
      worktrees,
      queue,
      target,
      loopFor,
      emit,
      only,
      hold,
      holds,
      criticalHold,
      unattended: deps.unattended === true,
    });
  }

  /** The run's spend meter; its spend-rate alarm is asked of the person with the autopilot paused. */
  private newMeter(): SpendMeter {
    const { deps, questions } = this.run;
    const meter = new SpendMeter(deps.config, undefined, {
      clock: deps.clock ?? systemClock,
      ...(deps.costIncluded ? { included: deps.costIncluded } : {}),
    });
    meter.onRateAlarm(questions.rateAlarm);
    return meter;
  }
}
