/**
 * The task store at 10,000 tasks (issue #11): list, get, add and update of one task, and a list
 * right after another process rewrote the file, each timed on a store of 100 tasks and on one
 * of 10,000, the two in turn (A B A B …) so that each 10k/100 ratio pairs measurements taken
 * moments apart. An update of one task rewrites the whole file (the format is one JSON
 * document, DESIGN §3): its bound is one fsync'd write of the file, timed beside it.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RalphPaths } from '../src/core/paths';
import type { Task } from '../src/core/tasks/schema';
import { TaskStore } from '../src/core/tasks/store';
import { writeFileAtomic, writeJsonAtomic } from '../src/core/util/atomicWrite';

export interface StoreOpFigures {
  /** Median milliseconds on the small store and on the large one. */
  smallMs: number;
  largeMs: number;
  /** Median of the pairwise ratios large / small. */
  ratio: number;
}

export interface StoreBenchResult {
  small: number;
  large: number;
  rounds: number;
  largeFileBytes: number;
  ops: Record<StoreOp, StoreOpFigures>;
  /** Update of one task / a bare fsync'd write of the whole file, pairwise, on the large store: what the store adds to the write the format requires. */
  updateOverBareWrite: number;
}

const OPS = ['list', 'get', 'update', 'add', 'listAfterExternalEdit', 'open', 'bareWrite'] as const;
type StoreOp = (typeof OPS)[number];

export const STORE_OP_LABELS: Record<StoreOp, string> = {
  list: 'list (unchanged file)',
  get: 'get one task',
  update: 'update one task',
  add: 'add one task',
  listAfterExternalEdit: 'list after another process wrote',
  open: 'first list in a new process',
  bareWrite: "bare fsync'd write of the file",
};

function makeTask(i: number): Task {
  const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString();
  return {
    id: `T-${String(i).padStart(5, '0')}`,
    title: `Task ${i}: make the widget handle case ${i}`,
    prompt: `Implement case ${i} of the widget so that it behaves as the specification says; keep the public API as it is.`,
    promise: `the tests for case ${i} pass and the README mentions it`,
    status: i % 3 === 0 ? 'done' : 'todo',
    priority: 100 + (i % 7),
    dependsOn: i > 1 && i % 5 === 0 ? [`T-${String(i - 1).padStart(5, '0')}`] : [],
    type: 'feature',
    complexity: 1 + (i % 10),
    iterations: i % 4,
    createdAt: at,
    updatedAt: at,
  };
}

interface Fixture {
  dir: string;
  paths: RalphPaths;
  store: TaskStore;
  size: number;
  next: number;
}

async function fixture(size: number): Promise<Fixture> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `ralph-bench-store-${size}-`));
  const paths = new RalphPaths(dir);
  await writeJsonAtomic(paths.tasks, { version: 1, tasks: Array.from({ length: size }, (_, i) => makeTask(i + 1)) });
  const store = new TaskStore(paths);
  await store.list();
  return { dir, paths, store, size, next: 0 };
}

/** Another process's edit: the file rewritten behind the store's back (one task's title changed). */
async function externalEdit(f: Fixture): Promise<void> {
  const file = JSON.parse(await fs.readFile(f.paths.tasks, 'utf8')) as { tasks: Task[] };
  file.tasks[0].title = `edited elsewhere ${f.next++}`;
  await writeJsonAtomic(f.paths.tasks, file);
}

async function timeOp(f: Fixture, op: StoreOp): Promise<number> {
  const middle = `T-${String(Math.ceil(f.size / 2)).padStart(5, '0')}`;
  if (op === 'listAfterExternalEdit') await externalEdit(f);
  const fresh = op === 'open' ? new TaskStore(f.paths) : undefined;
  const bytes = op === 'bareWrite' ? await fs.readFile(f.paths.tasks) : undefined;
  const started = performance.now();
  switch (op) {
    case 'list':
    case 'listAfterExternalEdit':
      await f.store.list();
      break;
    case 'open':
      await fresh!.list();
      break;
    case 'get':
      await f.store.get(middle);
      break;
    case 'update':
      await f.store.update(middle, { progress: f.next++ % 100, lastSignal: 'PROGRESS:10' });
      break;
    case 'add':
      await f.store.add({ title: 'added', prompt: 'a new task', promise: 'it is done' });
      break;
    case 'bareWrite':
      // the least any change of one task can cost while the format is one JSON document: the file written once, fsync'd
      await writeFileAtomic(path.join(f.dir, 'bare-write.json'), bytes!);
      break;
  }
  return performance.now() - started;
}

export async function benchStore(small = 100, large = 10_000, rounds = 15): Promise<StoreBenchResult> {
  const a = await fixture(small);
  const b = await fixture(large);
  const samples = Object.fromEntries(OPS.map((op) => [op, { small: [] as number[], large: [] as number[] }])) as Record<
    StoreOp,
    { small: number[]; large: number[] }
  >;
  try {
    for (let round = 0; round < rounds; round++) {
      for (const op of OPS) {
        samples[op].small.push(await timeOp(a, op));
        samples[op].large.push(await timeOp(b, op));
      }
    }
    const largeFileBytes = (await fs.stat(b.paths.tasks)).size;
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] ?? 0;
    const ops = Object.fromEntries(
      OPS.map((op) => {
        const s = samples[op];
        return [
          op,
          { smallMs: median(s.small), largeMs: median(s.large), ratio: median(s.large.map((l, i) => l / Math.max(s.small[i], 1e-3))) },
        ];
      }),
    ) as Record<StoreOp, StoreOpFigures>;
    const updateOverBareWrite = median(samples.update.large.map((u, i) => u / Math.max(samples.bareWrite.large[i], 1e-3)));
    return { small, large, rounds, largeFileBytes, ops, updateOverBareWrite };
  } finally {
    await fs.rm(a.dir, { recursive: true, force: true });
    await fs.rm(b.dir, { recursive: true, force: true });
  }
}

export { OPS as STORE_OPS };
