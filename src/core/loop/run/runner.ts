import { randomBytes } from 'node:crypto';
import type { RalphConfig } from '../../config/schema';
import { errorMessage, RalphError, TaskNotFoundError } from '../../errors';
import { EventEmitter, type RalphEventBody } from '../../events';
import { startGitHost } from '../../git/gitHost';
import { WorktreeManager } from '../../git/worktrees';
import type { FallbackNotice } from '../../llm/fallbackClient';
import { fallbackMessage } from '../../llm/fallbackMessage';
import type { RetryNotice } from '../../llm/types';
import { RalphPaths } from '../../paths';
import { type Clock, systemClock } from '../../ports';
import type { RunSpendSummary } from '../../spend/receipt';
import { redactorFor } from '../../commands/secrets';
import { remoteActive } from '../../tasks/remote';
import type { Task, TaskStatus } from '../../tasks/schema';
import { type DependencyBlock, dependencyBlocks, pendingDependencies } from '../../tasks/select';
import { TaskStore } from '../../tasks/store';
import { TaskActions } from '../../record/actions';
import { ensureRalphDir } from '../../workspace';
import type { Autopilot } from './autopilot';
import { CheckpointStore } from '../../record/checkpoint';
import { PauseGate } from '../person/pauseGate';
import { RunLog } from './runLog';
import { RunQuestions } from '../person/runQuestions';
import { RunLock } from './runLock';
import { RunAssembly, type RunnerDeps } from './runAssembly';
import { oneAfterAnother } from './oneAfterAnother';
import { mergeTarget } from '../merge/mergeTarget';
import type { RunOutcome } from '../../events';
import { summarizeRun } from './runSummary';
import { DiskBudget } from '../../reports/diskBudget';
import type { TaskRunResult } from '../task/types';

export interface RunOptions {
  /** Run this one task (resuming it when interrupted or halted); otherwise autopilot over ready tasks. */
  taskId?: string;
  /** Take over a run lock whose holder is not a live Ralph run on this host (`ralph run --force`). */
  forceLock?: boolean;
  /**
   * The run lock, when the caller took it already (`Ralph.takeRunLock`, before preparing the run:
   * a second run is refused before it starts anything); the run is named after it and releases it.
   */
  lock?: RunLock;
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

/** The current run's log and its redacted emit. */
interface RunEvents {
  log: RunLog;
  subscription: { dispose(): void };
  redactor: ReturnType<typeof redactorFor>;
  emit: (body: RalphEventBody) => void;
}

/** What a run holds until it closes: the run lock, the watch on the store's own writes. */
interface RunHeld {
  lock?: RunLock;
  storeWrites?: { dispose(): void };
  configWrites?: { dispose(): void };
}

/** How a run ended, for its summary. */
interface RunEnd {
  reason: string;
  unrunnable: DependencyBlock[];
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
  /** What the current run works with (its loops, autopilot, meter and guards), once the run lock is held. */
  private assembly: RunAssembly | undefined;
  /** The parallel autopilot of the current run, for the person's actions on its merge queue. */
  private currentAutopilot: Autopilot | undefined;
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
    startGitHost(); // booting beside the run lock and the loops' assembly, not before the run's first git call
    const runId = options.lock?.info.runId ?? newRunId(this.deps.clock ?? systemClock);
    // a lock handed in is this run's from here on, released when it ends however it ends
    const held: RunHeld = { lock: options.lock };
    const events = this.openEventsOr(runId, held);
    const { emit, log } = events;
    this.emitActive = emit;
    const results: TaskRunResult[] = [];
    let end: RunEnd = { reason: 'no ready tasks', unrunnable: [] };
    let spend: RunSpendSummary | undefined;
    let outcome: RunOutcome | undefined;
    this.assembly = undefined;
    try {
      end = await this.runTasks(runId, options, events, held, results);
    } catch (error) {
      end = { ...end, reason: errorMessage(error) };
      emit({ type: 'error', message: end.reason });
      throw error;
    } finally {
      ({ spend, outcome } = await this.close(events, held, results, end.reason));
    }
    const { reason, unrunnable, halted } = end;
    return {
      runId,
      results,
      reason,
      logFile: log.file,
      unrunnable,
      ...(spend ? { spend } : {}),
      ...(outcome ? { outcome } : {}),
      ...(halted ? { halted } : {}),
    };
  }

  /** `openEvents`; when the run cannot even log, the lock handed in is released and the runner is free again. */
  private openEventsOr(runId: string, held: RunHeld): RunEvents {
    try {
      return this.openEvents(runId);
    } catch (error) {
      this.active = false;
      void held.lock?.release();
      throw error;
    }
  }

  /** The run's log (its events appended as they come) and its emit, which redacts every event before the bus. */
  private openEvents(runId: string): RunEvents {
    const log = new RunLog(this.paths.runLog(runId));
    const emitter = new EventEmitter(runId, this.deps.bus, (this.deps.clock ?? systemClock).now);
    const subscription = this.deps.bus.subscribe((event) => {
      if (event.runId === runId) log.append(event);
    });
    // redacted before the bus: the run log, the panel and every report built from events
    const redactor = redactorFor(
      process.env,
      {
        keyVariables: [this.deps.config.llm.apiKeyEnv, ...this.deps.config.llm.fallback.flatMap((f) => (f.apiKeyEnv ? [f.apiKeyEnv] : []))],
        passThrough: [],
      },
      this.deps.secretValues ?? [],
    );
    const emit = (body: RalphEventBody) => void emitter.emit(redactor.redactDeep(body));
    return { log, subscription, redactor, emit };
  }

  /**
   * The run's work: the run lock, the loops, then the tasks — through worktrees and the merge queue
   * (the autopilot), or one after another. `held` keeps what `close` releases; results are added as they come.
   */
  private async runTasks(runId: string, options: RunOptions, events: RunEvents, held: RunHeld, results: TaskRunResult[]): Promise<RunEnd> {
    const { emit, redactor, log } = events;
    await ensureRalphDir(this.paths);
    held.lock ??= await RunLock.acquire(this.paths, runId, { force: options.forceLock });
    if (held.lock.takeover) emit({ type: 'warning', code: 'run-lock-taken-over', message: held.lock.takeover });
    // within the budget before anything is written (the run lock is held: no other run prunes)
    const disk = new DiskBudget(this.paths, this.deps.config.reports.maxTotalMb * 1024 * 1024, [log.file], emit);
    await disk.prune();
    const questions = new RunQuestions(this.deps.config, this.deps.safeguards, this.pauseGate, emit);
    const store = this.store();
    const assembly = (this.assembly = new RunAssembly({
      deps: this.deps,
      paths: this.paths,
      runId,
      emit,
      redactor,
      questions,
      pause: this.pauseGate,
      store,
      disk,
    }));
    const { loop, meter } = await assembly.loop();
    // the store's own writes (the extension's edits included) are not tampering
    held.storeWrites = store.onDidChange(() => {
      for (const guard of assembly.guards) guard.acknowledge(this.paths.tasks);
    });
    held.configWrites = this.deps.configWrites?.onDidWrite(() => {
      for (const guard of assembly.guards) guard.acknowledge(this.paths.config);
    });
    const first = options.taskId ? await this.startableTask(store, options.taskId) : undefined;
    emit({ type: 'run.started', workspace: this.deps.workspace, taskIds: first ? [first.id] : [] });

    const hold = questions.hold(
      (taskId) => store.get(taskId),
      (taskId, text) => new TaskActions(store, new CheckpointStore(this.paths), { root: this.deps.workspace }).answer(taskId, text),
    );
    // maxParallel 1 goes through worktrees too while a task has one (its work must not be stranded
    // there), and under manual review (nothing lands on the target before a person approves it)
    const worktrees =
      this.deps.config.loop.maxParallel > 1 ||
      (await reviewsWanted(this.deps.config, store)) ||
      (await new WorktreeManager(this.deps.workspace).list()).length > 0;
    const target = worktrees ? await mergeTarget(this.deps.workspace, this.deps.config, emit) : undefined;
    let reason = 'no ready tasks';
    let halted: string | undefined;
    if (target !== undefined) {
      const critical = questions.criticalHold((taskId) => store.get(taskId));
      const pilot = (this.currentAutopilot = assembly.autopilot(target, first?.id, hold, critical));
      results.push(...(await pilot.run(this.abort.signal)));
      halted = pilot.haltReason;
      reason = this.parallelReason(results, halted, first);
    } else {
      const turn = { first, only: options.taskId, loop, meter, store, questions, hold };
      ({ reason, halted } = await oneAfterAnother(turn, this.abort.signal, results, reason));
    }
    if (options.taskId === undefined) {
      const left = await this.leftUnstarted(store, emit, reason, results.length === 0);
      return { reason: left.reason, unrunnable: left.unrunnable, halted };
    }
    return { reason, unrunnable: [], halted };
  }

  /** Why a run through worktrees ended: the person's Stop, a run-wide halt, a provider that refuses, the one task, or nothing left. */
  private parallelReason(results: readonly TaskRunResult[], halted: string | undefined, first: Task | undefined): string {
    const providerHalt = results.find((r) => r.fault === 'auth' || r.fault === 'quota');
    if (this.abort.signal.aborted) return 'stopped by the user';
    if (halted) return `halted: ${halted}`;
    if (providerHalt) return `${providerHalt.reason}; no new agents started`;
    const last = results.at(-1);
    if (first) return `task ${first.id} ${last?.waitsToLand ? 'is checked and waits to land' : `ended ${last?.status ?? 'unmerged'}`}`;
    return 'no more ready tasks';
  }

  /** The run's end, whatever ended it: `run.finished` with what it spent and its outcome, the log closed, the lock released. */
  private async close(
    events: RunEvents,
    held: RunHeld,
    results: readonly TaskRunResult[],
    reason: string,
  ): Promise<{ spend?: RunSpendSummary; outcome?: RunOutcome }> {
    const { emit, subscription, log } = events;
    const spend = this.assembly?.meter?.runSpend;
    const outcome = await this.store()
      .list()
      .then(
        (tasks) => summarizeRun(results, tasks),
        () => undefined,
      );
    emit({
      type: 'run.finished',
      results: results.map((r) => ({ taskId: r.taskId, status: r.status })),
      reason,
      ...(spend ? { spend } : {}),
      ...(outcome ? { outcome } : {}),
    });
    subscription.dispose();
    held.storeWrites?.dispose();
    held.configWrites?.dispose();
    await log.close();
    await held.lock?.release();
    this.currentAutopilot = undefined;
    this.emitActive = undefined;
    this.active = false;
    return { spend, outcome };
  }

  /**
   * An autopilot run's todo tasks that no run can start (a dependency cycle, itself, a missing id)
   * are warned about; when nothing ran (and no Stop came), the blocks are why.
   */
  private async leftUnstarted(
    store: TaskStore,
    emit: (body: RalphEventBody) => void,
    reason: string,
    nothingRan: boolean,
  ): Promise<{ unrunnable: DependencyBlock[]; reason: string }> {
    const blocks = [...dependencyBlocks(await store.list()).values()];
    const unrunnable = blocks.filter((b) => b.kind === 'invalid');
    for (const block of unrunnable)
      emit({
        type: 'warning',
        taskId: block.taskId,
        code: 'dependency-invalid',
        message: `${block.taskId} can never start: ${block.message}`,
      });
    if (!nothingRan || this.abort.signal.aborted) return { unrunnable, reason };
    return { unrunnable, reason: blocks.length > 0 ? `no ready tasks: ${blocks.map((b) => b.message).join('; ')}` : 'no ready tasks' };
  }

  private store(): TaskStore {
    return this.deps.store ?? (this.ownStore ??= new TaskStore(this.paths, this.deps.clock));
  }

  private async startableTask(store: TaskStore, taskId: string) {
    const tasks = await store.list();
    const task = tasks.find((t) => t.id === taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    if (remoteActive(task.remote) && !this.deps.awaitMerge) {
      throw new RalphError(
        `task ${taskId} runs on the forge (${task.remote!.state}: ${task.remote!.url}); follow it with ralph remote status`,
        'not-startable',
      );
    }
    if (!STARTABLE.has(task.status)) {
      throw new RalphError(
        `task ${taskId} is ${task.status}; only todo, in_progress or halted tasks can be run (retry it first)`,
        'not-startable',
      );
    }
    const pending = pendingDependencies(task, tasks);
    if (pending.length > 0) {
      const block = dependencyBlocks(tasks).get(taskId);
      const why =
        block?.kind === 'invalid'
          ? `it can never start: ${block.message}; fix its dependsOn in .ralph/tasks.json`
          : `it waits for ${pending.join(', ')} to be done`;
      throw new RalphError(`task ${taskId} cannot run: ${why}`, 'dependencies-pending');
    }
    return task;
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
