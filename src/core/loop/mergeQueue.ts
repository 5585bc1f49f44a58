import * as path from 'node:path';
import type { GateConfig } from '../config/schema';
import { errorMessage, RalphError } from '../errors';
import type { MergeState, RalphEventBody } from '../events';
import type { GateOutcome, GateRunner } from '../gates/types';
import { type ConflictHunk, type MergeStrategy, MergeWorkspace } from '../git/integrate';
import { GitLockHeldError } from '../git/lockRule';
import type { WorktreeManager } from '../git/worktrees';
import { mergedCheck, TipVerdicts } from './mergedCheck';

export type { MergeState };

export interface MergeEntry {
  taskId: string;
  title: string;
  state: MergeState;
  /** Order of arrival; the queue is first come, first merged. */
  seq: number;
  /** Times this task entered the queue. */
  attempts: number;
  detail?: string;
  files?: string[];
  hunks?: ConflictHunk[];
  gates?: { name: string; passed: boolean; summary: string }[];
  /** What the task's agent must fix when the merged result is red (the gates' fix items). */
  feedback?: string[];
  commit?: string;
  /** `review`: the checked result (on `base`, the target's tip then) that waits for a person. */
  base?: string;
  result?: string;
  /** The task's fail-to-pass proof, one line (the tests that fail on its base code), when it needed one. */
  proof?: string;
}

export interface MergeQueueState {
  entries: readonly MergeEntry[];
  seq: number;
}

export type MergeAction =
  | { type: 'enqueue'; taskId: string; title: string; proof?: string }
  | { type: 'begin'; taskId: string }
  | { type: 'prepared'; taskId: string }
  | { type: 'landed'; taskId: string; commit?: string; detail: string; gates?: MergeEntry['gates'] }
  | { type: 'conflict'; taskId: string; files: string[]; hunks: ConflictHunk[] }
  | { type: 'red'; taskId: string; detail: string; gates: MergeEntry['gates']; feedback: string[] }
  | { type: 'wait'; taskId: string; detail: string; files: string[] }
  /** The target moved under the check: back to the front of the queue. */
  | { type: 'requeue'; taskId: string; detail: string }
  /** The checked result waits for a person: manual review, or the person's tree was in the way too long. */
  | { type: 'review'; taskId: string; detail: string; base: string; result: string; gates?: MergeEntry['gates']; files?: string[] }
  | { type: 'error'; taskId: string; detail: string };

export class MergeQueueError extends RalphError {
  constructor(message: string) {
    super(message, 'merge-queue');
  }
}

export const EMPTY_QUEUE: MergeQueueState = { entries: [], seq: 0 };
const ACTIVE: ReadonlySet<MergeState> = new Set(['merging', 'checking']);
const PENDING: ReadonlySet<MergeState> = new Set(['queued', 'waiting']);

/**
 * The queue as a pure state machine: queued → merging → checking → merged | conflict | failed
 * (checking → waiting → merging when the user's tree is in the way; → queued when the target
 * moved). One task merges at a time, and a task that reached `merged` can never be queued again.
 * Every illegal step throws rather than being ignored: a silent no-op here is how merges get
 * reported that never happened.
 */
export function reduceMergeQueue(state: MergeQueueState, action: MergeAction): MergeQueueState {
  const entry = state.entries.find((e) => e.taskId === action.taskId);
  const replace = (next: MergeEntry): MergeQueueState => ({ ...state, entries: state.entries.map((e) => (e.taskId === next.taskId ? next : e)) });
  const expect = (...states: MergeState[]): MergeEntry => {
    if (!entry) throw new MergeQueueError(`task ${action.taskId} is not in the merge queue`);
    if (!states.includes(entry.state)) throw new MergeQueueError(`task ${action.taskId} is ${entry.state} in the merge queue; "${action.type}" needs ${states.join(' or ')}`);
    return entry;
  };
  switch (action.type) {
    case 'enqueue': {
      if (entry?.state === 'merged') throw new MergeQueueError(`task ${action.taskId} is already merged; it is never merged twice`);
      if (entry && entry.state !== 'conflict' && entry.state !== 'failed' && entry.state !== 'review') throw new MergeQueueError(`task ${action.taskId} is already ${entry.state} in the merge queue`);
      const seq = state.seq + 1;
      const fresh: MergeEntry = { taskId: action.taskId, title: action.title, state: 'queued', seq, attempts: (entry?.attempts ?? 0) + 1, ...(action.proof ? { proof: action.proof } : {}) };
      return { seq, entries: [...state.entries.filter((e) => e.taskId !== action.taskId), fresh] };
    }
    case 'begin': {
      const e = expect('queued', 'waiting');
      const busy = state.entries.find((other) => ACTIVE.has(other.state));
      if (busy) throw new MergeQueueError(`task ${busy.taskId} is ${busy.state}; the queue merges one task at a time`);
      return replace({ ...e, state: 'merging', detail: undefined, files: undefined, hunks: undefined, gates: undefined, feedback: undefined });
    }
    case 'prepared':
      return replace({ ...expect('merging'), state: 'checking' });
    case 'landed':
      return replace({ ...expect('merging', 'checking'), state: 'merged', commit: action.commit, detail: action.detail, gates: action.gates ?? entry?.gates });
    case 'conflict':
      return replace({ ...expect('merging'), state: 'conflict', files: action.files, hunks: action.hunks, detail: `conflict in ${action.files.join(', ')}` });
    case 'red':
      return replace({ ...expect('checking'), state: 'failed', detail: action.detail, gates: action.gates, feedback: action.feedback });
    case 'wait':
      return replace({ ...expect('checking'), state: 'waiting', detail: action.detail, files: action.files });
    case 'requeue':
      return replace({ ...expect('merging', 'checking'), state: 'queued', seq: 0, detail: action.detail });
    case 'review':
      return replace({ ...expect('checking', 'waiting'), state: 'review', detail: action.detail, base: action.base, result: action.result, gates: action.gates ?? entry?.gates, files: action.files });
    case 'error':
      return replace({ ...expect('merging', 'checking'), state: 'failed', detail: action.detail });
  }
}

/**
 * The entry the queue merges next, none while one merges: the oldest queued one (a re-queued
 * one first); a merge that waits for the user's tree lets queued ones pass and is tried again
 * when none is left, so one dirty file does not hold up a night's work.
 */
export function nextToMerge(state: MergeQueueState): MergeEntry | undefined {
  if (state.entries.some((e) => ACTIVE.has(e.state))) return undefined;
  const rank = (e: MergeEntry) => (e.state === 'waiting' ? 1 : 0);
  return state.entries.filter((e) => PENDING.has(e.state)).sort((a, b) => rank(a) - rank(b) || a.seq - b.seq)[0];
}

export function entryOf(state: MergeQueueState, taskId: string): MergeEntry | undefined {
  return state.entries.find((e) => e.taskId === taskId);
}

export interface MergeQueueDeps {
  worktrees: WorktreeManager;
  gates: GateRunner;
  /** Every configured gate; the queue re-runs the required ones. */
  gateConfigs: readonly GateConfig[];
  target: string;
  strategy: MergeStrategy;
  emit?(body: RalphEventBody): void;
  /** Asked once the merged check passed, before landing: hold this result for a person's review? (`merge.review`) */
  holdForReview?(taskId: string): Promise<boolean>;
  /** Lines for a task's merge commit message besides its title (`Closes #12` for a task from an issue). */
  notes?(taskId: string): Promise<string[]>;
  /** The gates of one task only (its `check`), checked on its merged result besides the configured ones. */
  taskGates?(taskId: string): Promise<readonly GateConfig[]>;
}

/** What processing one entry came to. */
export type MergeOutcome = MergeEntry & { state: 'merged' | 'conflict' | 'failed' | 'waiting' | 'review' };

/** A result the queue checked already: landed as it is while the target stays at `base` (an approved review, a waiting merge). */
export interface CheckedResult {
  base: string;
  result: string;
  gates: MergeEntry['gates'];
}

/** Times a merge is re-tried in one go when the target keeps moving under it. */
const MAX_MOVES = 3;

/**
 * The queue's executor on real git, one task at a time: merge the task's branch onto the
 * target's current tip in the merge worktree, re-run the required gates on exactly that
 * result, and only then advance the target (compare-and-swap on the ref). Nothing reaches
 * the target before the check passed; a conflict leaves no marker anywhere but the report.
 */
export class MergeQueue {
  private state: MergeQueueState = EMPTY_QUEUE;
  private readonly workspace: MergeWorkspace;
  /** A checked result that waits for the user's tree: landed without a new check while the target stays put. */
  private checked: { taskId: string; base: string; result: string; gates: MergeEntry['gates'] } | undefined;
  private readonly tips = new TipVerdicts();

  constructor(private readonly deps: MergeQueueDeps) {
    this.workspace = new MergeWorkspace(deps.worktrees, ({ file, ageMs }) =>
      deps.emit?.({ type: 'warning', code: 'git-lock-cleared', message: `removed a stale ${path.relative(deps.worktrees.root, file)} (${Math.round(ageMs / 1000)} s old, no git process works in this repository); the merge goes on` }),
    );
  }

  get snapshot(): MergeQueueState {
    return this.state;
  }

  enqueue(taskId: string, title: string, options: { checked?: CheckedResult; proof?: string } = {}): MergeEntry {
    this.apply({ type: 'enqueue', taskId, title, proof: options.proof });
    if (options.checked) this.checked = { taskId, ...options.checked };
    return entryOf(this.state, taskId)!;
  }

  /**
   * A merge that waits on the person's own files stops waiting: its checked result is held for
   * them (status `review`: approve once the files are out of the way, or merge the branch by
   * hand). Undefined when the task is not waiting.
   */
  holdWaiting(taskId: string, detail: string): MergeOutcome | undefined {
    const entry = entryOf(this.state, taskId);
    const checked = this.checked?.taskId === taskId ? this.checked : undefined;
    if (entry?.state !== 'waiting' || !checked) return undefined;
    this.checked = undefined;
    this.apply({ type: 'review', taskId, detail, base: checked.base, result: checked.result, gates: checked.gates, files: entry.files });
    return this.current(taskId);
  }

  /** Whether anything is waiting to be merged. */
  get pending(): boolean {
    return nextToMerge(this.state) !== undefined;
  }

  /** Processes the next pending entry; undefined when none is pending. */
  async processNext(signal?: AbortSignal): Promise<MergeOutcome | undefined> {
    const entry = nextToMerge(this.state);
    if (!entry) return undefined;
    for (let moves = 0; ; moves++) {
      this.apply({ type: 'begin', taskId: entry.taskId });
      try {
        const outcome = await this.attempt(entry, signal);
        if (outcome !== 'moved') return outcome;
        if (moves + 1 >= MAX_MOVES) {
          this.apply({ type: 'requeue', taskId: entry.taskId, detail: `the target branch ${this.deps.target} kept moving; will try again` });
          return undefined;
        }
      } catch (error) {
        await this.workspace.checkout(this.deps.target).catch(() => undefined);
        if (error instanceof GitLockHeldError) {
          // a lock nobody released is not a verdict on the task either: queued again, and the run halts
          this.apply({ type: 'requeue', taskId: entry.taskId, detail: `not merged: ${error.message}` });
          throw error;
        }
        if (signal?.aborted) {
          // a stop is not a verdict on the task: it stays queued for the next run
          this.apply({ type: 'requeue', taskId: entry.taskId, detail: 'stopped during the merge; queued again' });
          return undefined;
        }
        this.apply({ type: 'error', taskId: entry.taskId, detail: `merge failed: ${errorMessage(error)}` });
        return this.current(entry.taskId);
      }
    }
  }

  private async attempt(entry: MergeEntry, signal: AbortSignal | undefined): Promise<MergeOutcome | 'moved'> {
    const { deps } = this;
    const checked = this.checked?.taskId === entry.taskId ? this.checked : undefined;
    if (checked) this.checked = undefined;
    if (checked && (await deps.worktrees.branchTip(deps.target)) === checked.base) {
      this.apply({ type: 'prepared', taskId: entry.taskId });
      return this.land(entry, checked.base, checked.result, checked.gates);
    }
    const notes = (await deps.notes?.(entry.taskId).catch(() => [])) ?? [];
    const prepared = await this.workspace.prepare({ id: entry.taskId, title: entry.title, notes }, deps.target, deps.strategy);
    if (prepared.kind === 'already-merged') {
      this.apply({ type: 'landed', taskId: entry.taskId, commit: prepared.commit, detail: `already on ${deps.target} (${prepared.commit.slice(0, 10)})` });
      return this.current(entry.taskId);
    }
    if (prepared.kind === 'empty') {
      this.apply({ type: 'landed', taskId: entry.taskId, detail: `nothing to merge: ${deps.target} already has every change of the task` });
      return this.current(entry.taskId);
    }
    if (prepared.kind === 'conflict') {
      this.apply({ type: 'conflict', taskId: entry.taskId, files: prepared.files, hunks: prepared.hunks });
      return this.current(entry.taskId);
    }
    this.apply({ type: 'prepared', taskId: entry.taskId });
    const required = [...deps.gateConfigs.filter((g) => g.required), ...((await deps.taskGates?.(entry.taskId)) ?? [])];
    let gates: MergeEntry['gates'] = [];
    if (required.length > 0) {
      this.workspace.used();
      // judged against the target's tip: a failure already red there does not hold the merge back
      const report = await mergedCheck({ gates: required, runner: deps.gates, workspace: this.workspace, target: deps.target, base: prepared.base, result: prepared.result, taskId: entry.taskId, tips: this.tips, signal, emit: deps.emit });
      gates = report.outcomes.map(summarizeOutcome);
      if (signal?.aborted) throw new RalphError('stopped during the merged check', 'stopped');
      if (!report.requiredPassed) {
        const failing = report.outcomes.filter((o) => !o.passed);
        const feedback = failing.flatMap((o) => o.fixItems.filter((f) => f.level === 'error').map((f) => `${o.name}: ${f.text}`));
        this.apply({ type: 'red', taskId: entry.taskId, gates, feedback, detail: `required gates fail on the merged result: ${failing.map((o) => `${o.name} (${o.summary})`).join('; ')}` });
        await this.workspace.checkout(prepared.base);
        return this.current(entry.taskId);
      }
    }
    if (await deps.holdForReview?.(entry.taskId)) {
      this.apply({ type: 'review', taskId: entry.taskId, base: prepared.base, result: prepared.result, gates, detail: `the merged check passed on ${deps.target}; it waits for your review (merge.review: manual)` });
      return this.current(entry.taskId);
    }
    return this.land(entry, prepared.base, prepared.result, gates);
  }

  private async land(entry: MergeEntry, base: string, result: string, gates: MergeEntry['gates']): Promise<MergeOutcome | 'moved'> {
    const { deps } = this;
    const landed = await this.workspace.land(deps.target, base, result);
    if (landed.kind === 'moved') {
      this.apply({ type: 'requeue', taskId: entry.taskId, detail: `${deps.target} moved during the check` });
      return 'moved';
    }
    if (landed.kind === 'waiting') {
      this.checked = { taskId: entry.taskId, base, result, gates };
      this.apply({ type: 'wait', taskId: entry.taskId, detail: landed.reason, files: landed.files });
      return this.current(entry.taskId);
    }
    this.apply({ type: 'landed', taskId: entry.taskId, commit: landed.commit, gates, detail: `merged into ${deps.target} as ${landed.commit.slice(0, 10)}` });
    return this.current(entry.taskId);
  }

  private current(taskId: string): MergeOutcome {
    return entryOf(this.state, taskId) as MergeOutcome;
  }

  private apply(action: MergeAction): void {
    this.state = reduceMergeQueue(this.state, action);
    const e = entryOf(this.state, action.taskId);
    if (e) {
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
      });
    }
  }
}

function summarizeOutcome(o: GateOutcome): { name: string; passed: boolean; summary: string } {
  return { name: o.name, passed: o.passed, summary: o.summary };
}
