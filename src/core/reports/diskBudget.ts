import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphEventBody } from '../events';
import type { RalphPaths } from '../paths';

/** Pruning brings the folders down to this share of the budget, so that it does not run at every write. */
const PRUNE_TO = 0.9;
/** Iterations between two looks at the folders during a run (besides its start and the tasks' ends). */
const EVERY_ITERATIONS = 10;
const MIN_LOOK_GAP_MS = 60_000;

export interface PruneResult {
  /** Bytes in the folders before pruning. */
  totalBytes: number;
  removed: string[];
  freedBytes: number;
}

interface Entry {
  file: string;
  bytes: number;
  mtimeMs: number;
  final: boolean;
}

/**
 * A total budget for what Ralph writes for people to read — `.ralph/reports/` (iteration and
 * final reports, gate logs, tampered copies) and `.ralph/runs/` (run logs) — with the oldest
 * files removed first once it is exceeded; final reports go last (they are small and say how
 * each task ended), and the log of the run in progress never. Looked at when a run starts,
 * then when a task ends and every 10 iterations, at most once a minute.
 */
export class DiskBudget {
  private iterations = 0;
  private lastLook = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly paths: RalphPaths,
    private readonly budgetBytes: number,
    /** Files never removed (the log of this run, which is open). */
    private readonly keep: readonly string[],
    private readonly emit: (body: RalphEventBody) => void,
    private readonly now: () => number = Date.now,
  ) {}

  /** Prunes every `EVERY_ITERATIONS` calls, at most once a minute (a walk of the folders is not free, fast iterations need none). */
  async afterIteration(): Promise<void> {
    if (++this.iterations % EVERY_ITERATIONS !== 0 || this.now() - this.lastLook < MIN_LOOK_GAP_MS) return;
    await this.prune();
  }

  /** A task ended: a look unless the last was less than a minute ago (tasks that end together, short tasks, need one). */
  async taskEnded(): Promise<void> {
    if (this.now() - this.lastLook < MIN_LOOK_GAP_MS) return;
    await this.prune();
  }

  async prune(): Promise<PruneResult> {
    this.lastLook = this.now();
    const result = await pruneToBudget(
      [path.join(this.paths.dir, 'reports'), path.join(this.paths.dir, 'runs')],
      this.budgetBytes,
      new Set(this.keep.map((f) => path.resolve(f))),
    );
    if (result.removed.length > 0) {
      const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
      this.emit({
        type: 'warning',
        code: 'reports-pruned',
        message: `.ralph/reports and .ralph/runs held ${mb(result.totalBytes)}, over their budget of ${mb(this.budgetBytes)} (reports.maxTotalMb): removed the ${result.removed.length} oldest file${result.removed.length === 1 ? '' : 's'} (${mb(result.freedBytes)})`,
      });
    }
    return result;
  }
}

/**
 * Removes the oldest files under `dirs` (final reports last, `keep` never) until what is left
 * is within `PRUNE_TO` of `budgetBytes`; nothing when the folders are within the budget.
 * Folders left empty are removed too. Links are never followed.
 */
export async function pruneToBudget(
  dirs: readonly string[],
  budgetBytes: number,
  keep: ReadonlySet<string> = new Set(),
): Promise<PruneResult> {
  const entries: Entry[] = [];
  for (const dir of dirs) await collect(path.resolve(dir), entries, 0);
  const totalBytes = entries.reduce((n, e) => n + e.bytes, 0);
  const result: PruneResult = { totalBytes, removed: [], freedBytes: 0 };
  if (totalBytes <= budgetBytes) return result;
  const target = budgetBytes * PRUNE_TO;
  const order = entries.filter((e) => !keep.has(e.file)).sort((a, b) => Number(a.final) - Number(b.final) || a.mtimeMs - b.mtimeMs);
  let left = totalBytes;
  const touched = new Set<string>();
  for (const entry of order) {
    if (left <= target) break;
    try {
      await fs.unlink(entry.file);
    } catch {
      continue; // gone meanwhile, or not ours to remove
    }
    left -= entry.bytes;
    result.freedBytes += entry.bytes;
    result.removed.push(entry.file);
    touched.add(path.dirname(entry.file));
  }
  for (const dir of [...touched].sort((a, b) => b.length - a.length)) await removeEmptyUpTo(dir, dirs);
  return result;
}

async function collect(dir: string, into: Entry[], depth: number): Promise<void> {
  if (depth > 8) return;
  const names = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  for (const entry of names) {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) await collect(file, into, depth + 1);
    else if (entry.isFile()) {
      const stat = await fs.lstat(file).catch(() => undefined);
      if (stat) into.push({ file, bytes: stat.size, mtimeMs: stat.mtimeMs, final: entry.name === 'final.md' });
    }
  }
}

/** Removes `dir` and its parents while they are empty, stopping at the budget's own folders. */
async function removeEmptyUpTo(dir: string, roots: readonly string[]): Promise<void> {
  const stops = new Set(roots.map((r) => path.resolve(r)));
  for (let current = dir; !stops.has(current); current = path.dirname(current)) {
    if (![...stops].some((stop) => current.startsWith(`${stop}${path.sep}`))) return;
    try {
      await fs.rmdir(current);
    } catch {
      return; // not empty (or gone)
    }
  }
}
