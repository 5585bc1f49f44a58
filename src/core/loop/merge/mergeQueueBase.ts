import type { GateConfig } from '../../config/schema';
import type { RalphEventBody } from '../../events';
import type { GateRunner } from '../../gates/types';
import type { MergeStrategy } from '../../git/integrate';
import type { WorktreeManager } from '../../git/worktrees';
import {
  chainOf,
  EMPTY_QUEUE,
  entryOf,
  type MergeAction,
  type MergeEntry,
  type MergeQueueState,
  nextToMerge,
  reduceMergeQueue,
} from './mergeChain';
import { type CheckedResult, type Job, wakeUp } from './mergeChecks';
import { batchVerdictTask, type VerdictTask } from '../task/taskEvidence';

export interface MergeQueueDeps {
  worktrees: WorktreeManager;
  gates: GateRunner;
  /** Every configured gate; the queue re-runs the required ones. */
  gateConfigs: readonly GateConfig[];
  target: string;
  strategy: MergeStrategy;
  /** Merged checks at once (`merge.concurrency`, default 1 here: one task at a time). */
  concurrency?: number;
  /** Tasks one check covers (`merge.batchSize`, default 1). */
  batchSize?: number;
  emit?(body: RalphEventBody): void;
  /** Asked as the task joins the chain: hold its checked result for a person's review? (`merge.review`) */
  holdForReview?(taskId: string): Promise<boolean>;
  /** Lines for a task's merge commit message besides its title (`Closes #12` for a task from an issue). */
  notes?(taskId: string): Promise<string[]>;
  /** The gates of one task only (its `check`), checked on its merged result besides the configured ones. */
  taskGates?(taskId: string): Promise<readonly GateConfig[]>;
  /** The task as its merged check's verdict reads it (`taskEvidence.ts`); without it, a failure already red on the tip is judged as no task's. */
  verdictTask?(taskId: string): Promise<VerdictTask>;
  /** Told of every change of the queue (the chain file `ralph status` reads); `saved` resolves once the newest is written. */
  onChange?(state: MergeQueueState): void;
  saved?(): Promise<void>;
}

/** What processing one entry came to. */
export type MergeOutcome = MergeEntry & { state: 'merged' | 'conflict' | 'failed' | 'waiting' | 'review' };

/**
 * The merge queue's state-keeping part: the queue's state and every change of it (each one
 * announced as a `merge` event and told to `onChange`), the jobs a change makes stale, and what
 * a person or the loop does to the queue from outside (enqueue, cancel, hold a waiting merge).
 * MergeQueue builds the chain and decides its head on top of it.
 */
export abstract class MergeQueueBase {
  protected state: MergeQueueState = EMPTY_QUEUE;
  protected readonly jobs = new Map<string, Job>();
  /** Checked results that land without a new check while the target stays at their base (waiting merges, approved reviews). */
  protected readonly checked = new Map<string, CheckedResult>();
  /** Heads that landed together with the one handed out: handed out one a call, before anything else. */
  protected readonly landedAhead: MergeOutcome[] = [];
  protected readonly fresh = new Set<string>();
  protected wake: { promise: Promise<'wake'>; resolve: () => void } = wakeUp();

  constructor(protected readonly deps: MergeQueueDeps) {}

  get snapshot(): MergeQueueState {
    return this.state;
  }

  /**
   * `fresh`: its agent completed in this run, so it cannot be on the target already (no look for it there).
   * `provisional`: its agent signalled COMPLETE and its own gates run now (`merge.checkAhead`): built and
   * checked meanwhile, decided only once `confirm`ed (`withdraw` takes it back).
   */
  enqueue(
    taskId: string,
    title: string,
    options: { checked?: CheckedResult; proof?: string; fresh?: boolean; provisional?: boolean } = {},
  ): MergeEntry {
    this.apply({ type: 'enqueue', taskId, title, proof: options.proof, provisional: options.provisional });
    if (options.checked) this.checked.set(taskId, options.checked);
    if (options.fresh) this.fresh.add(taskId);
    else this.fresh.delete(taskId);
    this.wake.resolve(); // a chain being waited on takes it in at once
    return entryOf(this.state, taskId)!;
  }

  /** Whether the task is in the queue checked ahead of its own gates (not confirmed yet). */
  isProvisional(taskId: string): boolean {
    return entryOf(this.state, taskId)?.provisional === true;
  }

  /** Its loop accepted COMPLETE: the entry checked ahead of its gates may be decided (and land) now. */
  confirm(taskId: string, proof?: string): MergeEntry {
    this.apply({ type: 'confirm', taskId, proof });
    this.wake.resolve();
    return entryOf(this.state, taskId)!;
  }

  /** Its loop did not accept COMPLETE: the entry checked ahead of its gates leaves; what was built on it is built again. */
  withdraw(taskId: string, detail: string): void {
    if (!this.isProvisional(taskId)) return;
    this.apply({ type: 'withdraw', taskId, detail });
    this.wake.resolve();
  }

  /** The task left (cancelled, rejected): out of the queue, and what was built on it is built again without it. */
  cancel(taskId: string, detail: string): void {
    if (this.landing.has(taskId)) {
      // it is moving onto the target right now: decided once that step is over (landed: too late to cancel)
      this.cancelsAfterLanding.push([taskId, detail]);
      return;
    }
    if (!entryOf(this.state, taskId) || entryOf(this.state, taskId)?.state === 'merged') return;
    this.checked.delete(taskId);
    this.apply({ type: 'cancel', taskId, detail });
    this.wake.resolve();
  }

  /** Tasks whose commits are being moved onto the target; a cancel meanwhile waits for that step. */
  private readonly landing = new Set<string>();
  private readonly cancelsAfterLanding: [string, string][] = [];

  /** `land` with `taskIds` marked as landing: a cancel of one of them is taken after it (a no-op once it landed). */
  protected async whileLanding<T>(taskIds: readonly string[], land: () => Promise<T>): Promise<T> {
    for (const id of taskIds) this.landing.add(id);
    try {
      return await land();
    } finally {
      for (const id of taskIds) this.landing.delete(id);
      for (const [id, detail] of this.cancelsAfterLanding.splice(0)) this.cancel(id, detail);
    }
  }

  /**
   * A merge that waits on the person's own files stops waiting: its checked result is held for
   * them (status `review`: approve once the files are out of the way, or merge the branch by
   * hand). Undefined when the task is not waiting.
   */
  holdWaiting(taskId: string, detail: string): MergeOutcome | undefined {
    const entry = entryOf(this.state, taskId);
    const checked = this.checked.get(taskId);
    if (entry?.state !== 'waiting' || !checked) return undefined;
    this.checked.delete(taskId);
    this.apply({ type: 'review', taskId, detail, base: checked.base, result: checked.result, gates: checked.gates, files: entry.files });
    return this.current(taskId);
  }

  /** Whether anything is waiting to be merged or is in the chain. */
  get pending(): boolean {
    return this.landedAhead.length > 0 || nextToMerge(this.state) !== undefined;
  }

  /** Heads landed but not handed out yet: a stop still hands them out (they are on the target). */
  get landedToReport(): boolean {
    return this.landedAhead.length > 0;
  }

  /** Every task of the chain back to the queue (its place kept); their checks stop. */
  /** The tasks one merged check covers, as its verdict against the tip reads them. */
  protected async verdictTaskOf(taskIds: readonly string[]): Promise<VerdictTask | undefined> {
    const of = this.deps.verdictTask;
    return of ? batchVerdictTask(await Promise.all(taskIds.map((id) => of(id)))) : undefined;
  }

  protected putBack(detail: string): undefined {
    for (const e of chainOf(this.state))
      if (entryOf(this.state, e.taskId)?.state === e.state) this.apply({ type: 'requeue', taskId: e.taskId, detail });
    return undefined;
  }

  protected current(taskId: string): MergeOutcome {
    return entryOf(this.state, taskId) as MergeOutcome;
  }

  protected apply(action: MergeAction): void {
    const before = this.state;
    this.state = reduceMergeQueue(this.state, action);
    // a job whose task left the chain (or joined it again) is stale: its check stops
    for (const [taskId, job] of this.jobs) {
      const e = entryOf(this.state, taskId);
      if (!e || e.pos !== job.pos) {
        job.abort.abort();
        this.jobs.delete(taskId);
      }
    }
    for (const e of this.state.entries) if (e !== entryOf(before, e.taskId)) this.announce(e);
    this.deps.onChange?.(this.state);
  }

  private announce(e: MergeEntry): void {
    const chain = chainOf(this.state);
    const place = chain.findIndex((c) => c.taskId === e.taskId);
    this.deps.emit?.({
      type: 'merge',
      taskId: e.taskId,
      state: e.state,
      detail: e.detail,
      files: e.files,
      commit: e.commit,
      title: e.title,
      target: this.deps.target,
      attempts: e.attempts,
      ...(e.gates ? { gates: e.gates } : {}),
      ...(e.proof ? { proof: e.proof } : {}),
      ...(e.provisional ? { provisional: true } : {}),
      ...(place >= 0
        ? {
            chain: {
              place: place + 1,
              ahead: e.ahead ?? [],
              ...(e.passed ? { passed: true } : {}),
              ...(e.coveredBy ? { coveredBy: e.coveredBy } : {}),
              ...(e.aside ? { aside: true } : {}),
            },
          }
        : {}),
    });
  }
}
