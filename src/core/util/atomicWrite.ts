import { randomBytes } from 'node:crypto';
import {
  type BigIntStats,
  closeSync,
  constants,
  fstatSync,
  fsync,
  openSync,
  promises as fs,
  readFileSync,
  renameSync,
  write,
  writeSync,
} from 'node:fs';
import { promisify } from 'node:util';
import * as path from 'node:path';
import { ConfigError } from '../errors';

/** Up to this size a file is read, or written (its temp file opened, written, closed and renamed), in place: microseconds; only an fsync waits off the thread. */
const SMALL_WRITE = 256 * 1024;

/**
 * Writes `data` to `file` so that readers see either the old or the new content, never a
 * torn file: write a sibling temp file, fsync it, rename it over the target.
 *
 * A small file (a checkpoint, a report, the task store of a few hundred tasks) is opened,
 * written, closed and renamed with direct system calls — each a few microseconds against the
 * page cache — and only its fsync, the one step that waits for the disk, runs off the event
 * loop: on a busy machine every trip through the thread pool costs far more than the call.
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array): Promise<WrittenFile> {
  const dir = path.dirname(file);
  const temp = tempNameFor(file);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let fd: number;
  try {
    fd = openSync(temp, 'w');
  } catch (error) {
    // the folder is there nearly always: made only when it is not
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    await fs.mkdir(dir, { recursive: true });
    fd = openSync(temp, 'w');
  }
  try {
    let written: WrittenFile;
    try {
      if (bytes.length <= SMALL_WRITE) writeAllSync(fd, bytes);
      else await writeAll(fd, bytes);
      await fsyncAsync(fd);
      written = identityOf(fstatSync(fd, { bigint: true }));
    } finally {
      closeSync(fd);
    }
    renameSync(temp, file);
    return written;
  } catch (error) {
    await fs.rm(temp, { force: true });
    throw error;
  }
}

/**
 * What identifies the version of a file this process wrote: its inode, size and modification
 * time, which a rename keeps (the change time it does not: a rename or a link updates it). Any
 * later replacement (a rename over it: another inode) or rewrite in place (another size or
 * modification time) shows as a difference.
 */
export interface WrittenFile {
  dev: bigint;
  ino: bigint;
  size: bigint;
  mtimeNs: bigint;
}

export function identityOf(stat: BigIntStats): WrittenFile {
  return { dev: stat.dev, ino: stat.ino, size: stat.size, mtimeNs: stat.mtimeNs };
}

/** Whether `file` (a path, or a stat of it) is still the version `written` describes. */
export function isWrittenFile(stat: BigIntStats | undefined, written: WrittenFile): boolean {
  return (
    stat !== undefined &&
    stat.dev === written.dev &&
    stat.ino === written.ino &&
    stat.size === written.size &&
    stat.mtimeNs === written.mtimeNs
  );
}

/** This process's mark in its temporary names: the pid, plus random bytes taken once (two containers' processes may share a pid and a folder). */
const PROCESS_MARK = `${process.pid}.${randomBytes(4).toString('hex')}`;
let tempCounter = 0;

/** A sibling temporary name no other write of this or another process uses (a counter, not random bytes per write: those cost a system call each). */
export function tempNameFor(file: string): string {
  tempCounter = (tempCounter + 1) % Number.MAX_SAFE_INTEGER;
  return path.join(path.dirname(file), `.${path.basename(file)}.${PROCESS_MARK}.${tempCounter.toString(36)}.tmp`);
}

function writeAllSync(fd: number, bytes: Uint8Array): void {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at, bytes.length - at);
}

async function writeAll(fd: number, bytes: Uint8Array): Promise<void> {
  for (let at = 0; at < bytes.length;) at += (await writeAsync(fd, bytes, at, bytes.length - at)).bytesWritten;
}

const fsyncAsync = promisify(fsync);
const writeAsync = promisify(write) as (
  fd: number,
  buffer: Uint8Array,
  offset: number,
  length: number,
) => Promise<{ bytesWritten: number }>;

export async function writeJsonAtomic(file: string, value: unknown): Promise<void> {
  await writeFileAtomic(file, `${JSON.stringify(value, null, 2)}\n`);
}

/**
 * The file's text, or `undefined` when it does not exist. A directory where the file should be,
 * or a file where a parent directory should be (`.ralph` a file), is bad input: a ConfigError
 * naming the path, never a raw EISDIR.
 */
export async function readTextIfExists(file: string): Promise<string | undefined> {
  try {
    return await readSmallInPlace(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EISDIR') throw new ConfigError(`${file} is a directory, but it must be a file; move it away and run again`, file);
    if (code === 'ENOTDIR')
      throw new ConfigError(`${file}: a parent of it is a file, not a directory (is .ralph a file?); move it away and run again`, file);
    throw error;
  }
}

/**
 * A file's text: read in place when small (a few microseconds from the page cache, where a trip
 * through the thread pool per open, stat, read and close costs far more on a busy machine), off
 * the event loop when large or not a regular file (a FIFO put in its place must not hang the
 * process: it is opened without waiting for a writer, and then read as before, off the thread).
 */
async function readSmallInPlace(file: string): Promise<string> {
  const fd = openSync(file, READ_NOW);
  try {
    const stat = fstatSync(fd);
    if (stat.isFile() && stat.size <= SMALL_WRITE) return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
  return fs.readFile(file, 'utf8');
}

/** Open for reading without waiting (a FIFO would wait for a writer); no effect on a regular file. */
export const READ_NOW = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);
