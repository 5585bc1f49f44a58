import type { GateConfig } from '../../config/schema';
import type { GateOutcome, GateRunner, GateRunRequest, GateRunResult } from '../../gates/types';
import type { MergeEntry } from './mergeChain';
import { MergeWorkspace } from '../../git/integrate';
import type { WorktreeManager } from '../../git/worktrees';
import { untilStopped } from '../../util/untilStopped';

/**
 * The gate runner of concurrent merged checks: a gate marked `exclusive` (a fixed port, a
 * shared database) runs in one check at a time, the others side by side. The wait is in line,
 * first come first served, and a stopped check leaves the line at once.
 */
export class ExclusiveGates implements GateRunner {
  private line: Promise<void> = Promise.resolve();

  constructor(private readonly inner: GateRunner) {}

  async run(request: GateRunRequest): Promise<GateRunResult> {
    if (!request.gate.exclusive) return this.inner.run(request);
    const before = this.line;
    let release!: () => void;
    this.line = new Promise<void>((resolve) => (release = resolve));
    try {
      await untilStopped(before, request.signal);
      if (request.signal?.aborted)
        return { exitCode: null, timedOut: false, aborted: true, output: 'stopped while waiting for an exclusive gate', durationMs: 0 };
      return await this.inner.run(request);
    } finally {
      // the next in line goes once the one before it is done, even if this one left early
      void before.then(release);
    }
  }
}

/**
 * The merge worktrees the concurrent checks run in (`_merge`, `_merge-2`, …), one check in
 * each at a time; made on first use, so a queue that never checks two at once has one.
 */
export class MergeWorkspacePool {
  private readonly all: MergeWorkspace[];
  private readonly free: MergeWorkspace[];
  private readonly waiters: ((ws: MergeWorkspace) => void)[] = [];

  constructor(worktrees: WorktreeManager, size: number, onLockCleared?: (cleared: { file: string; ageMs: number }) => void) {
    this.all = Array.from({ length: Math.max(1, size) }, (_, n) => new MergeWorkspace(worktrees, onLockCleared, worktrees.mergePathFor(n)));
    this.free = [...this.all];
  }

  /** The first workspace: the one that builds merges and lands them (repository-wide steps, no checkout of its own needed). */
  get main(): MergeWorkspace {
    return this.all[0];
  }

  async use<T>(work: (ws: MergeWorkspace) => Promise<T>): Promise<T> {
    const ws = this.free.shift() ?? (await new Promise<MergeWorkspace>((resolve) => this.waiters.push(resolve)));
    try {
      return await work(ws);
    } finally {
      const next = this.waiters.shift();
      if (next) next(ws);
      else this.free.push(ws);
    }
  }
}

export type Gates = MergeEntry['gates'];

/** A result the queue checked already: landed as it is while the target stays at `base` (an approved review, a waiting merge). */
export interface CheckedResult {
  base: string;
  result: string;
  gates: Gates;
}
/** What building and checking one prefix came to (decided only once its task is the chain's head). */
export type JobResult =
  | { kind: 'already'; commit: string }
  | { kind: 'empty' }
  | { kind: 'conflict'; files: string[]; hunks: NonNullable<MergeEntry['hunks']> }
  | { kind: 'covered'; base: string; result: string }
  | { kind: 'checked'; base: string; result: string; gates: Gates; passed: boolean; feedback: string[]; detail: string }
  | { kind: 'error'; error: unknown };

export interface Job {
  pos: number;
  abort: AbortController;
  done: Promise<JobResult>;
  /** The prefix's merged commit (what the next prefix is built on). */
  result?: string;
  /** Its check is done (its result is known). */
  settled?: boolean;
  /** What `done` resolved to, once it did (read without waiting: the green heads that land together). */
  value?: JobResult;
  /** Built while its task was checked ahead of its own gates: the task branch's commit it merged, looked at again once confirmed. */
  ahead?: { tip: string };
}

export function summarizeOutcome(o: GateOutcome): { name: string; passed: boolean; summary: string } {
  return { name: o.name, passed: o.passed, summary: o.summary };
}

export function dedupe(gates: GateConfig[]): GateConfig[] {
  const seen = new Set<string>();
  return gates.filter((g) => !seen.has(g.name) && seen.add(g.name));
}

export function wakeUp(): { promise: Promise<'wake'>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<'wake'>((r) => (resolve = () => r('wake')));
  return { promise, resolve };
}
