import { type BigIntStats, closeSync, fstatSync, openSync, promises as fs, readFile, readFileSync, statSync } from 'node:fs';
import { READ_NOW } from '../util/atomicWrite';
import { promisify } from 'node:util';
import type { Task, TaskFile } from './schema';

/**
 * What identifies one version of a file without reading it: device, inode, size, and the
 * modification and change times in nanoseconds. Every write changes the change time (`ctime`),
 * which no program can set back, so an equal signature means an unchanged file — unless the
 * change came within the file system's timestamp granularity of the version it replaced
 * ("racy", as git calls it), which `trustworthy` rules out.
 */
export interface FileSig {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
  ctimeNs: bigint;
}

/**
 * How long after a version was written its signature stays untrusted: well above the coarsest
 * timestamp clock of the local file systems (a kernel tick, 1–10 ms; 1 s on HFS+).
 */
export const RACY_MS = 2_000;

export function sigOf(stat: BigIntStats): FileSig {
  return { dev: stat.dev, ino: stat.ino, size: stat.size, mtimeNs: stat.mtimeNs, ctimeNs: stat.ctimeNs };
}

export function sameSig(a: FileSig | undefined, b: FileSig | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeNs === b.mtimeNs &&
    a.ctimeNs === b.ctimeNs
  );
}

/**
 * Whether `sig`, seen unchanged, proves the content checked at `checkedAtMs` is still there:
 * only when that version was already older than `RACY_MS` then, so any later write — even
 * within the same timestamp tick as nothing we knew — would have shown a newer change time.
 */
export function trustworthy(sig: FileSig, checkedAtMs: number): boolean {
  return Number(sig.ctimeNs / 1_000_000n) < checkedAtMs - RACY_MS && Number(sig.mtimeNs / 1_000_000n) < checkedAtMs - RACY_MS;
}

/** The file's signature, or undefined when it does not exist (a stat: microseconds, no trip through the thread pool). */
export function statSig(file: string): FileSig | undefined {
  const stat = statSync(file, { bigint: true, throwIfNoEntry: false });
  return stat ? sigOf(stat) : undefined;
}

/** Up to this size a file is read in place (microseconds from the page cache); a larger one off the event loop. */
const SMALL_READ = 256 * 1024;

/**
 * The file's bytes with the signature of the version they came from (undefined when it changed
 * while being read: nothing may be trusted about it then). Undefined data when absent.
 */
export async function readWithSig(file: string): Promise<{ data: Buffer; sig: FileSig | undefined; checkedAtMs: number } | undefined> {
  const checkedAtMs = Date.now();
  let fd: number;
  try {
    fd = openSync(file, READ_NOW);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stat = fstatSync(fd, { bigint: true });
    if (stat.isFile()) {
      const before = sigOf(stat);
      const data = before.size <= SMALL_READ ? readFileSync(fd) : await readFileAsync(fd);
      const after = sigOf(fstatSync(fd, { bigint: true }));
      return { data, sig: sameSig(before, after) && BigInt(data.length) === after.size ? after : undefined, checkedAtMs };
    }
  } finally {
    closeSync(fd);
  }
  // not a regular file (a FIFO, a directory): read as before, off the thread, never trusted
  return { data: await fs.readFile(file), sig: undefined, checkedAtMs };
}

const readFileAsync = promisify(readFile) as (fd: number) => Promise<Buffer>;

/**
 * `JSON.stringify(file, null, 2)` plus a newline, byte for byte (UTF-8), built from each task's
 * own serialisation: a task object the store holds is never changed in place (a change makes a
 * new object), so its bytes are kept beside it and reused until the task is replaced. Writing
 * one changed task of 10,000 then costs one task's serialisation and a copy of the others' bytes.
 */
export class TaskFileWriter {
  private readonly bytes = new WeakMap<Task, Buffer>();

  serialize(file: TaskFile): Buffer {
    const marker = JSON.stringify('\u0000ralph-tasks\u0000');
    const head = JSON.stringify({ ...file, tasks: JSON.parse(marker) as string }, null, 2);
    const at = head.indexOf(marker);
    // a `$schema` spelling the marker itself, or no tasks: written the plain way
    if (at !== head.lastIndexOf(marker) || file.tasks.length === 0) return Buffer.from(`${JSON.stringify(file, null, 2)}\n`, 'utf8');
    const parts: Buffer[] = [Buffer.from(`${head.slice(0, at)}[\n`, 'utf8')];
    file.tasks.forEach((task, i) => {
      if (i > 0) parts.push(SEPARATOR);
      parts.push(this.taskBytes(task));
    });
    parts.push(Buffer.from(`\n  ]${head.slice(at + marker.length)}\n`, 'utf8'));
    return Buffer.concat(parts);
  }

  private taskBytes(task: Task): Buffer {
    let bytes = this.bytes.get(task);
    if (bytes === undefined) {
      // nested two levels deep (file → tasks → task): four spaces before every line
      bytes = Buffer.from(`    ${JSON.stringify(task, null, 2).replace(/\n/g, '\n    ')}`, 'utf8');
      this.bytes.set(task, bytes);
    }
    return bytes;
  }
}

const SEPARATOR = Buffer.from(',\n', 'utf8');

/**
 * Whether two tasks have the same fields, values and key order (and so the same serialisation;
 * a field set to undefined counts as absent, as in JSON).
 * A task's values are strings, numbers, booleans and arrays of strings.
 */
export function sameTask(a: Task, b: Task): boolean {
  // a key whose value is undefined is not serialised
  const defined = (task: Task) => Object.keys(task).filter((key) => (task as Record<string, unknown>)[key] !== undefined);
  const keys = defined(a);
  const other = defined(b);
  if (keys.length !== other.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i];
    if (key !== other[i]) return false;
    const x = (a as Record<string, unknown>)[key];
    const y = (b as Record<string, unknown>)[key];
    if (x === y) continue;
    if (!Array.isArray(x) || !Array.isArray(y) || x.length !== y.length || x.some((v, j) => v !== y[j])) return false;
  }
  return true;
}

/** Freezes a task the store hands out: shared between callers, it must never change in place. */
export function freezeTask(task: Task): Task {
  Object.freeze(task.dependsOn);
  if (Array.isArray(task.allowGateChanges)) Object.freeze(task.allowGateChanges);
  if (task.proofTests) Object.freeze(task.proofTests);
  if (task.knownFailures) Object.freeze(task.knownFailures);
  return Object.freeze(task);
}
