import { randomBytes } from 'node:crypto';
import { ToolRegistry } from '../agent/toolRegistry';
import { createDelegationTools, Delegator } from '../agent/delegation';
import { CORE_TOOLS } from '../agent/tools';
import type { RalphConfig } from '../config/schema';
import { errorMessage, RalphError, TaskNotFoundError } from '../errors';
import { type EventBus, EventEmitter, type RalphEventBody } from '../events';
import { ProcessGateRunner } from '../gates/runGates';
import { checkGate } from '../gates/taskCheck';
import type { GateRunner } from '../gates/types';
import { GitService } from '../git/gitService';
import { WorktreeManager } from '../git/worktrees';
import type { FallbackNotice } from '../llm/fallbackClient';
import { fallbackMessage } from '../llm/fallbackMessage';
import type { ModelClient, RetryNotice } from '../llm/types';
import { RalphPaths } from '../paths';
import { type ApprovalPrompt, type Clock, type Logger, refuseApprovals, type SafeguardPrompt, silentLogger, systemClock } from '../ports';
import { MeteredModelClient, SpendMeter } from '../spend/budget';
import type { RunSpendSummary } from '../spend/receipt';
import { CommandQuestions } from '../commands/commandQuestions';
import { ControlFileGuard } from '../guards/controlFileGuard';
import { GuardedCommandRunner, GuardedGateRunner } from '../guards/guardedRunners';
import { PolicyCommandRunner } from '../commands/policyCommandRunner';
import type { CommandRunner } from '../commands/processRunner';
import { IsolatedCommandRunner, isolationSettings, probeSandbox, type SandboxProbe, SandboxUnavailableError } from '../commands/sandbox';
import { RedactingModelClient, redactorFor, type SecretRedactor } from '../guards/secrets';
import { WorkspaceScope } from '../guards/workspaceScope';
import { remoteActive } from '../forge/remoteTask';
import type { TaskStatus } from '../tasks/schema';
import { type DependencyBlock, dependencyBlocks, pendingDependencies, selectNextTask } from '../tasks/select';
import { TaskStore } from '../tasks/store';
import { TaskActions } from '../tasks/actions';
import { ensureRalphDir } from '../workspace';
import { Autopilot, type AutopilotDeps } from './autopilot';
import { CheckpointStore } from '../tasks/checkpoint';
import { MergeQueue } from './mergeQueue';
import { mergeNotes } from './mergeNotes';
import { PauseGate } from './pauseGate';
import { RunLog } from './runLog';
import { HOLD_ENDS, RunQuestions } from './runQuestions';
import { RunLock } from './runLock';
import { personActed } from './personWaits';
import { mergeTarget } from './mergeTarget';
import { type RunOutcome, summarizeRun } from './runSummary';
import { ReviewHolds } from '../review/reviewHolds';
import { DiskBudget } from '../reports/diskBudget';
import { TaskLoop } from './taskLoop';
import type { TaskRunResult } from './types';

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
}

export interface RunOptions {
  /** Run this one task (resuming it when interrupted or halted); otherwise autopilot over ready tasks. */
  taskId?: string;
  /** Take over a run lock whose holder is not a live Ralph run on this host (`ralph run --force`). */
  forceLock?: boolean;
}

export interface RunSummary {
  runId: string;
  results: TaskRunResult[];
  reason: string;
  logFile: string;
  /** Todo tasks an autopilot run left because their `dependsOn` can never be met (cycle, itself, a missing id). */
  unrunnable: DependencyBlock[];
  /** What the run spent, across its tasks (absent when it never got to build a loop). */
  spend?: RunSpendSummary;
  /** Done / needs you (questions, reviews) / failed, as the person reads it at the end. */
  outcome?: RunOutcome;
  /** Why the run stopped by itself (a git lock held in the working tree every task shares); the tasks are resumable. */
  halted?: string;
}

/** Statuses a task can be explicitly (re)started from. */
const STARTABLE: ReadonlySet<TaskStatus> = new Set(['todo', 'in_progress', 'halted']);

/**
 * One run of the loop over a workspace: holds the run lock, runs a task or the autopilot
 * (ready tasks one after another until none is ready), logs every event, and stops cleanly.
 */
export class RalphRunner {
  private readonly abort = new AbortController();
  private readonly pauseGate = new PauseGate();
  private active = false;
  private emitActive: ((body: RalphEventBody) => void) | undefined;
  private ownStore: TaskStore | undefined;
  private runMeter: SpendMeter | undefined;
  /** Every control-file guard of the current run (one per task loop): the store's writes are acknowledged to all. */
  private readonly guards = new Set<ControlFileGuard>();
  private sandboxWarned = false;
  /** The parallel autopilot of the current run, for the person's actions on its merge queue. */
  private currentAutopilot: Autopilot | undefined;
  /** The run's budget for reports and run logs (made once the run lock is held). */
  private disk: DiskBudget | undefined;
  readonly paths: RalphPaths;

  constructor(private readonly deps: RunnerDeps) {
    this.paths = new RalphPaths(deps.workspace);
  }

  get running(): boolean {
    return this.active;
  }

  /** Ends the current iteration cleanly (the model call and commands are aborted) and saves state. */
  stop(): void {
    this.abort.abort();
  }

  get paused(): boolean {
    return this.pauseGate.isPaused;
  }

  /** Finishes the current step, then waits until `resume()` (or `stop()`). */
  pause(): void {
    if (this.pauseGate.pause()) this.emitActive?.({ type: 'run.paused' });
  }

  resume(): void {
    if (this.pauseGate.resume()) this.emitActive?.({ type: 'run.resumed' });
  }

  /** Retry Now: merges waiting on the person's own files are tried again at once. False without a parallel run. */
  retryWaitingMerges(): boolean {
    this.currentAutopilot?.retryWaitingMerges();
    return this.currentAutopilot !== undefined;
  }

  /** Keep on Its Branch: a merge waiting on the person's files is held for their review instead. */
  keepOnBranch(taskId: string): boolean {
    this.currentAutopilot?.keepOnBranch(taskId);
    return this.currentAutopilot !== undefined;
  }

  /** The model client's retry notices, as `model.retry` events of the current run. */
  reportRetry(notice: RetryNotice): void {
    this.emitActive?.({ type: 'model.retry', ...notice });
  }

  /** `llm.fallback` switches and returns: a `model.fallback` event and a warning naming both models. */
  reportFallback(notice: FallbackNotice): void {
    this.emitActive?.({ type: 'model.fallback', ...notice });
    this.emitActive?.({ type: 'warning', code: `model-${notice.kind}`, message: fallbackMessage(notice) });
  }

  async run(options: RunOptions = {}): Promise<RunSummary> {
    if (this.active) throw new RalphError('this runner is already running', 'busy');
    this.active = true;
    const runId = newRunId(this.deps.clock ?? systemClock);
    const log = new RunLog(this.paths.runLog(runId));
    const emitter = new EventEmitter(runId, this.deps.bus, (this.deps.clock ?? systemClock).now);
    const subscription = this.deps.bus.subscribe((event) => {
      if (event.runId === runId) log.append(event);
    });
    // Redacted before the bus: the run log, the panel and every report built from events.
    const redactor = redactorFor(process.env, { keyVariables: [this.deps.config.llm.apiKeyEnv, ...this.deps.config.llm.fallback.flatMap((f) => (f.apiKeyEnv ? [f.apiKeyEnv] : []))], passThrough: [] }, this.deps.secretValues ?? []);
    const emit = (body: RalphEventBody) => void emitter.emit(redactor.redactDeep(body));
    this.emitActive = emit;
    let lock: RunLock | undefined;
    let storeWrites: { dispose(): void } | undefined;
    const results: TaskRunResult[] = [];
    let reason = 'no ready tasks';
    let unrunnable: DependencyBlock[] = [];
    let spend: RunSpendSummary | undefined;
    let outcome: RunOutcome | undefined;
    let halted: string | undefined;
    this.runMeter = undefined;
    try {
      await ensureRalphDir(this.paths);
      lock = await RunLock.acquire(this.paths, runId, {
        force: options.forceLock,
        onTakeover: (message) => emit({ type: 'warning', code: 'run-lock-taken-over', message }),
      });
      this.guards.clear();
      this.sandboxWarned = false;
      // within the budget before anything is written (the run lock is held: no other run prunes)
      this.disk = new DiskBudget(this.paths, this.deps.config.reports.maxTotalMb * 1024 * 1024, [log.file], emit);
      await this.disk.prune();
      const questions = new RunQuestions(this.deps.config, this.deps.safeguards, this.pauseGate, emit);
      const { loop, meter } = await this.buildLoop(runId, emit, redactor, questions);
      const store = this.store();
      // the store's own writes (the extension's edits included) are not tampering
      storeWrites = store.onDidChange(() => {
        for (const guard of this.guards) guard.acknowledge(this.paths.tasks);
      });
      const first = options.taskId ? await this.startableTask(store, options.taskId) : undefined;
      emit({ type: 'run.started', workspace: this.deps.workspace, taskIds: first ? [first.id] : [] });

      const attempted = new Set<string>();
      const endedAs = new Map<string, TaskStatus>();
      const hold = questions.hold(
        (taskId) => store.get(taskId),
        (taskId, text) => new TaskActions(store, new CheckpointStore(this.paths), { root: this.deps.workspace }).answer(taskId, text),
      );
      // maxParallel 1 goes through worktrees too while a task has one (its work must not be stranded
      // there), and under manual review (nothing lands on the target before a person approves it)
      const worktrees = this.deps.config.loop.maxParallel > 1 || (await reviewsWanted(this.deps.config, store)) || (await new WorktreeManager(this.deps.workspace).list()).length > 0;
      const target = worktrees ? await mergeTarget(this.deps.workspace, this.deps.config, emit) : undefined;
      const parallel = target !== undefined;
      const critical = questions.criticalHold((taskId) => store.get(taskId));
      const pilot = parallel ? this.autopilot(runId, emit, redactor, questions, target, first?.id, hold, critical) : undefined;
      if (pilot) results.push(...(await pilot.run(this.abort.signal)));
      halted = pilot?.haltReason;
      const providerHalt = results.find((r) => r.fault === 'auth' || r.fault === 'quota');
      if (parallel) reason = this.abort.signal.aborted ? 'stopped by the user' : halted ? `halted: ${halted}` : providerHalt ? `${providerHalt.reason}; no new agents started` : first ? `task ${first.id} ended ${results.at(-1)?.status ?? 'unmerged'}` : 'no more ready tasks';
      let next = parallel ? undefined : (first ?? selectNextTask(await store.list(), attempted));
      while (next) {
        attempted.add(next.id);
        const result = await loop.run(next, this.abort.signal);
        results.push(result);
        endedAs.set(result.taskId, result.status);
        halted = result.runHalt;
        if (this.abort.signal.aborted) {
          reason = 'stopped by the user';
          break;
        }
        if (options.taskId) {
          reason = `task ${next.id} ended ${result.status}`;
          break;
        }
        // a bad key or an exhausted quota would halt every later task the same way; a run-wide cap
        // would halt them at once with nothing done: they stay as they are
        const runStop = result.runHalt ?? (result.fault === 'auth' || result.fault === 'quota' ? result.reason : meter.runCapReached()?.message);
        if (runStop) {
          const waiting = (await store.list()).filter((t) => t.status === 'todo').length;
          reason = `${runStop}; the run stopped${waiting > 0 ? ` and ${waiting} task${waiting === 1 ? '' : 's'} not started stay${waiting === 1 ? 's' : ''} todo` : ''}`;
          break;
        }
        const tasks = await store.list();
        // a task the person answered, unblocked or gave more time meanwhile goes on in this run
        for (const id of personActed(endedAs, tasks).reopened) {
          attempted.delete(id);
          endedAs.delete(id);
        }
        next = selectNextTask(tasks, attempted);
        reason = next ? reason : 'no more ready tasks';
        if (next && result.critical) {
          const answer = await questions.criticalHold((taskId) => store.get(taskId))(result.taskId, result.reason);
          if (this.abort.signal.aborted || answer === 'stop') {
            reason = this.abort.signal.aborted ? 'stopped by the user' : `stopped after ${result.taskId} halted on a critical security finding`;
            break;
          }
        }
        if (next && hold && HOLD_ENDS.has(result.status)) {
          const answer = await hold(result.taskId, result.status, result.reason);
          if (this.abort.signal.aborted || answer === 'stop') {
            reason = this.abort.signal.aborted ? 'stopped by the user' : `stopped after ${result.taskId} ended ${result.status} (semi-auto)`;
            break;
          }
        }
      }
      if (options.taskId === undefined) {
        const blocks = [...dependencyBlocks(await store.list()).values()];
        unrunnable = blocks.filter((b) => b.kind === 'invalid');
        for (const block of unrunnable) emit({ type: 'warning', taskId: block.taskId, code: 'dependency-invalid', message: `${block.taskId} can never start: ${block.message}` });
        if (results.length === 0 && !this.abort.signal.aborted) reason = blocks.length > 0 ? `no ready tasks: ${blocks.map((b) => b.message).join('; ')}` : 'no ready tasks';
      }
    } catch (error) {
      reason = errorMessage(error);
      emit({ type: 'error', message: reason });
      throw error;
    } finally {
      spend = (this.runMeter as SpendMeter | undefined)?.runSpend;
      outcome = await this.store().list().then((tasks) => summarizeRun(results, tasks), () => undefined);
      emit({ type: 'run.finished', results: results.map((r) => ({ taskId: r.taskId, status: r.status })), reason, ...(spend ? { spend } : {}), ...(outcome ? { outcome } : {}) });
      subscription.dispose();
      storeWrites?.dispose();
      await log.close();
      await lock?.release();
      this.currentAutopilot = undefined;
      this.emitActive = undefined;
      this.active = false;
    }
    return { runId, results, reason, logFile: log.file, unrunnable, ...(spend ? { spend } : {}), ...(outcome ? { outcome } : {}), ...(halted ? { halted } : {}) };
  }

  private store(): TaskStore {
    return this.deps.store ?? (this.ownStore ??= new TaskStore(this.paths, this.deps.clock));
  }

  private async startableTask(store: TaskStore, taskId: string) {
    const tasks = await store.list();
    const task = tasks.find((t) => t.id === taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    if (remoteActive(task.remote) && !this.deps.awaitMerge) {
      throw new RalphError(`task ${taskId} runs on the forge (${task.remote!.state}: ${task.remote!.url}); follow it with ralph remote status`, 'not-startable');
    }
    if (!STARTABLE.has(task.status)) {
      throw new RalphError(`task ${taskId} is ${task.status}; only todo, in_progress or halted tasks can be run (retry it first)`, 'not-startable');
    }
    const pending = pendingDependencies(task, tasks);
    if (pending.length > 0) {
      const block = dependencyBlocks(tasks).get(taskId);
      const why = block?.kind === 'invalid' ? `it can never start: ${block.message}; fix its dependsOn in .ralph/tasks.json` : `it waits for ${pending.join(', ')} to be done`;
      throw new RalphError(`task ${taskId} cannot run: ${why}`, 'dependencies-pending');
    }
    return task;
  }

  /**
   * The task loop; with `workRoot` (a task's worktree) its tools, commands (sandboxed there),
   * gates, commits and notes act there while the state stays in the workspace, and its meter
   * shares the run's totals so the run budget holds across agents.
   */
  private async buildLoop(runId: string, emit: (body: RalphEventBody) => void, redactor: SecretRedactor, questions: RunQuestions, workRoot?: string): Promise<{ loop: TaskLoop; guard: ControlFileGuard; meter: SpendMeter }> {
    const { deps, paths } = this;
    const root = workRoot ?? deps.workspace;
    const git = new GitService(root, redactor);
    if (!(await git.isRepo())) {
      throw new RalphError(`${deps.workspace} is not a git repository; run \`git init\` (or \`ralph init\`) first`, 'not-a-repo');
    }
    if (deps.config.commands.sandbox === 'required') {
      // Refuse before the first model call rather than fail every command of the run.
      const probe = await (deps.sandboxProbe ?? probeSandbox)();
      if (!probe.available) throw new SandboxUnavailableError(probe.reason);
    }
    // the run's meter (its totals, caps and spend-rate alarm) is shared by every agent
    const meter = workRoot && this.runMeter ? this.runMeter.share() : (this.runMeter = this.newMeter(questions));
    const model = new MeteredModelClient(new RedactingModelClient(deps.model, redactor), meter);
    const approval = deps.approval ?? refuseApprovals;
    const guard = new ControlFileGuard(paths, emit, { ownStateOnly: workRoot !== undefined });
    this.guards.add(guard);
    const commands = new IsolatedCommandRunner(
      deps.commands,
      isolationSettings(root, deps.config),
      redactor,
      (message) => {
        // said once per run, however many agents run commands
        if (this.sandboxWarned) return;
        this.sandboxWarned = true;
        emit({ type: 'warning', code: 'no-sandbox', message });
      },
      deps.sandboxProbe,
    );
    const guarded = new GuardedCommandRunner(commands, guard);
    const commandQuestions = new CommandQuestions();
    // the rules do not ask about what the sandbox makes harmless, when there is a sandbox
    const confined = async () => deps.config.commands.sandbox !== 'off' && (await (deps.sandboxProbe ?? probeSandbox)()).available;
    const loop = new TaskLoop({
      runId,
      paths,
      config: deps.config,
      store: this.store(),
      checkpoints: new CheckpointStore(paths),
      git,
      model,
      meter,
      safeguards: questions.safeguards(workRoot !== undefined),
      registry: new ToolRegistry([...CORE_TOOLS, ...createDelegationTools(new Delegator({ config: deps.config, model, approval }))]),
      commands: new PolicyCommandRunner(guarded, deps.config, approval, root, emit, { questions: commandQuestions, confined }),
      commandQuestions,
      gates: new GuardedGateRunner(deps.gates ?? new ProcessGateRunner(commands), guard),
      guard,
      scope: new WorkspaceScope(root),
      clock: deps.clock ?? systemClock,
      logger: deps.logger ?? silentLogger,
      emit,
      pause: this.pauseGate,
      work: workRoot ? new RalphPaths(workRoot) : undefined,
      awaitingMerge: workRoot !== undefined || deps.awaitMerge === true,
      disk: this.disk,
    });
    return { loop, guard, meter };
  }

  /** `loop.maxParallel` > 1: agents in worktrees, finished work through the merge queue. */
  private autopilot(runId: string, emit: (body: RalphEventBody) => void, redactor: SecretRedactor, questions: RunQuestions, target: string, only: string | undefined, hold: AutopilotDeps['hold'], criticalHold: AutopilotDeps['criticalHold']): Autopilot {
    const { deps } = this;
    const worktrees = new WorktreeManager(deps.workspace, deps.config.worktrees.link);
    // the merged check runs the tasks' code too: sandboxed, scrubbed and watched like an agent's gates
    const guard = new ControlFileGuard(this.paths, emit, { ownStateOnly: true });
    this.guards.add(guard);
    const commands = new IsolatedCommandRunner(deps.commands, isolationSettings(worktrees.mergePath, deps.config), redactor, () => {}, deps.sandboxProbe);
    const gates = new GuardedGateRunner(deps.gates ?? new ProcessGateRunner(commands), guard);
    const checkpoints = new CheckpointStore(this.paths);
    const holds = new ReviewHolds({ config: deps.config, store: this.store(), checkpoints, root: deps.workspace });
    // a task's own check is part of its merged check too
    const taskGates = async (taskId: string) => [checkGate(await this.store().get(taskId), deps.config.gates)].filter((g) => g !== undefined);
    const queue = new MergeQueue({
      worktrees,
      gates,
      gateConfigs: deps.config.gates,
      target,
      strategy: deps.config.merge.strategy,
      emit,
      holdForReview: (taskId) => holds.wanted(taskId),
      notes: mergeNotes(this.store(), deps.workspace),
      taskGates,
    });
    const loopFor = async (root: string) => (await this.buildLoop(runId, emit, redactor, questions, root)).loop;
    this.currentAutopilot = new Autopilot({ config: deps.config, store: this.store(), checkpoints, worktrees, queue, target, loopFor, emit, only, hold, holds, criticalHold });
    return this.currentAutopilot;
  }

  /** The run's spend meter; its spend-rate alarm is asked of the person with the autopilot paused. */
  private newMeter(questions: RunQuestions): SpendMeter {
    const meter = new SpendMeter(this.deps.config, undefined, { clock: this.deps.clock ?? systemClock, ...(this.deps.costIncluded ? { included: this.deps.costIncluded } : {}) });
    meter.onRateAlarm(questions.rateAlarm);
    return meter;
  }
}

/** Manual review anywhere (the configuration, or a task's own `review`): finished work goes through worktrees and the queue. */
async function reviewsWanted(config: RalphConfig, store: TaskStore): Promise<boolean> {
  if (config.merge.review === 'manual') return true;
  return (await store.list()).some((t) => t.review === 'manual' && t.status !== 'done' && t.status !== 'cancelled');
}

/** `20261123T101500-a1b2c3`: the run's start, and a few random bytes. */
export function newRunId(clock: Clock): string {
  const stamp = new Date(clock.now()).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
