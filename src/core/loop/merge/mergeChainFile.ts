import * as path from 'node:path';
import { readTextIfExists, writeJsonAtomic } from '../../util/atomicWrite';
import type { RalphPaths } from '../../paths';
import { chainOf, type MergeEntry, type MergeQueueState } from './mergeChain';

/** The merge chain as the run last saw it, for `ralph status` in another process (`.ralph/runs/merge-chain.json`, git-ignored). */
export interface ChainSnapshot {
  target: string;
  updatedAt: string;
  entries: ChainSnapshotEntry[];
}

export interface ChainSnapshotEntry {
  taskId: string;
  title: string;
  state: MergeEntry['state'];
  attempts: number;
  detail?: string;
  /** In the chain: its place (1 = the head), the tasks its prefix is built on, and whether that prefix is green. */
  place?: number;
  ahead?: string[];
  passed?: boolean;
  coveredBy?: string;
  aside?: boolean;
  /** Checked ahead of its own gates (`merge.checkAhead`): decided once they pass. */
  provisional?: boolean;
}

const KEEP_DECIDED = 10;

export function chainFile(paths: RalphPaths): string {
  return path.join(paths.dir, 'runs', 'merge-chain.json');
}

export function chainSnapshot(state: MergeQueueState, target: string, now: Date = new Date()): ChainSnapshot {
  const chain = chainOf(state).map((e) => e.taskId);
  const open = state.entries.filter((e) => e.state === 'queued' || e.state === 'waiting' || chain.includes(e.taskId));
  const decided = state.entries.filter((e) => !open.includes(e)).slice(-KEEP_DECIDED);
  const entries = [...open, ...decided].map((e): ChainSnapshotEntry => {
    const place = chain.indexOf(e.taskId);
    return {
      taskId: e.taskId,
      title: e.title,
      state: e.state,
      attempts: e.attempts,
      ...(e.detail ? { detail: e.detail.slice(0, 500) } : {}),
      ...(e.provisional ? { provisional: true } : {}),
      ...(place >= 0
        ? {
            place: place + 1,
            ahead: e.ahead ?? [],
            ...(e.passed ? { passed: true } : {}),
            ...(e.coveredBy ? { coveredBy: e.coveredBy } : {}),
            ...(e.aside ? { aside: true } : {}),
          }
        : {}),
    };
  });
  return { target, updatedAt: now.toISOString(), entries };
}

/** Least time between two writes of the chain file: a merge's steps come tens of milliseconds apart. */
const WRITE_GAP_MS = 50;

/**
 * Writes the snapshot after each change of the queue, one write at a time and only the
 * newest: a burst of changes (one merge's steps, several tasks landing) is one write, at most
 * one every WRITE_GAP_MS — each is a file made, synced and renamed while agents and the queue
 * work. A failed write is not the run's concern.
 */
export class ChainFileWriter {
  private latest: ChainSnapshot | undefined;
  private writing: Promise<void> | undefined;
  /** The wait between two writes; cut short once someone waits for the newest snapshot. */
  private pause: { resolve(): void; timer: NodeJS.Timeout } | undefined;

  constructor(private readonly file: string) {}

  save(snapshot: ChainSnapshot): void {
    this.latest = snapshot;
    this.writing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.latest) {
      const next = this.latest;
      this.latest = undefined;
      const started = Date.now();
      await writeJsonAtomic(this.file, next).catch(() => undefined);
      const gap = WRITE_GAP_MS - (Date.now() - started);
      if (this.latest && gap > 0) await new Promise<void>((resolve) => (this.pause = { resolve, timer: setTimeout(resolve, gap) }));
      this.pause = undefined;
    }
    this.writing = undefined;
  }

  /** Resolves once the newest snapshot is on disk. */
  async settled(): Promise<void> {
    while (this.writing) {
      if (this.pause) {
        clearTimeout(this.pause.timer);
        this.pause.resolve();
      }
      await this.writing;
    }
  }
}

export async function readChainSnapshot(paths: RalphPaths): Promise<ChainSnapshot | undefined> {
  const text = await readTextIfExists(chainFile(paths)).catch(() => undefined);
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as ChainSnapshot;
    return Array.isArray(parsed.entries) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

const AHEAD = ' (checked ahead of its own gates: decided once they pass)';

/** `ralph status`: the chain (which prefix each check is on, what waits on what) and why a task was taken out. */
export function chainLines(snapshot: ChainSnapshot, live: boolean): string[] {
  const shown = snapshot.entries.filter((e) => live || e.state !== 'merged');
  if (shown.length === 0) return [];
  const lines = [`merge queue → ${snapshot.target}${live ? '' : ` (as the last run left it, ${snapshot.updatedAt})`}:`];
  for (const e of shown.filter((x) => x.place !== undefined).sort((a, b) => a.place! - b.place!)) {
    const prefix = [snapshot.target, ...(e.ahead ?? []), e.taskId].join(' + ');
    const waits = e.ahead?.length ? `, lands after ${e.ahead.join(', ')}` : '';
    const how = e.passed
      ? `green${waits || ', lands next'}`
      : e.coveredBy
        ? `covered by the check of ${e.coveredBy}${waits}`
        : `checking${waits}`;
    const held = e.aside ? ' (held for review once green; the ones behind are built without it)' : '';
    lines.push(`  #${e.place} ${e.taskId} ${e.state} on ${prefix} — ${how}${e.provisional ? AHEAD : ''}${held}`);
  }
  for (const e of shown.filter((x) => x.place === undefined))
    lines.push(`  ${e.taskId} ${e.state}${e.provisional ? AHEAD : ''}${e.detail ? `: ${e.detail}` : ''}`);
  return lines;
}
