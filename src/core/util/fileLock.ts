import { mkdirSync, realpathSync, rmdirSync, type Stats, statSync, utimesSync } from 'node:fs';
import type * as NodeFs from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { ConfigError, RalphError } from '../errors';

/**
 * How long a lock may go without its holder refreshing it before another process takes it
 * over: proper-lockfile refreshes the lock's mtime every `stale / 2` while the holder lives,
 * so only a crashed holder's lock ages past this.
 */
const STALE_MS = 10_000;

/** The lock's folder, made when missing (a stat first: microseconds); a file in its place is bad input. */
function ensureDir(dir: string): void {
  const isFile = () => new ConfigError(`${dir} is a file, but it must be a directory (is .ralph a file?); move it away and run again`, dir);
  try {
    const stat = statSync(dir, { throwIfNoEntry: false });
    if (stat?.isDirectory()) return;
    if (stat) throw isFile();
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw isFile();
    throw error;
  }
}

type Callback<T = void> = (error: NodeJS.ErrnoException | null, value?: T) => void;

/** Runs a system call in place and answers on the next tick, as the callback API does. */
function direct<T>(call: () => T, callback: Callback<T>): void {
  let error: NodeJS.ErrnoException | null = null;
  let value: T | undefined;
  try {
    value = call();
  } catch (caught) {
    error = caught as NodeJS.ErrnoException;
  }
  process.nextTick(() => callback(error, value));
}

/**
 * The file system calls the lock makes (mkdir, stat, utimes and rmdir of the lock folder: a
 * few microseconds each) made directly rather than through the thread pool, where on a busy
 * machine each one waits for a thread far longer than it takes; answered asynchronously all the same.
 */
const directFs = {
  mkdir: (dir: string, callback: Callback) => direct(() => void mkdirSync(dir), callback),
  rmdir: (dir: string, callback: Callback) => direct(() => rmdirSync(dir), callback),
  stat: (file: string, callback: Callback<Stats>) => direct(() => statSync(file), callback),
  utimes: (file: string, atime: Date, mtime: Date, callback: Callback) => direct(() => utimesSync(file, atime, mtime), callback),
  realpath: (file: string, callback: Callback<string>) => direct(() => realpathSync(file), callback),
  // the exit handler's: a lock still held when the process exits is removed on the way out
  rmdirSync: (dir: string) => rmdirSync(dir),
} as unknown as typeof NodeFs;

/** Waits between tries while another process holds the lock: 10 ms growing to 250 ms, ≈ 100 s in all. */
const RETRIES = { retries: 400, factor: 1.3, minTimeout: 10, maxTimeout: 250 };

/**
 * Takes the lock, trying again only while another process holds it (ELOCKED). Any other
 * failure — a read-only file system (an agent's `ralph task add` inside the sandbox), no
 * permission, a full disk — cannot pass by waiting: it is reported at once.
 */
async function lockWhileHeldElsewhere(file: string, options: lockfile.LockOptions): Promise<() => Promise<void>> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await lockfile.lock(file, options);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ELOCKED') throw cannotLock(file, error as NodeJS.ErrnoException);
      if (attempt >= RETRIES.retries) {
        throw new RalphError(
          `${file} is locked by another process (lock ${file}.lock); try again, or remove the lock if no Ralph process is running`,
          'store-locked',
        );
      }
      const wait = Math.min(RETRIES.maxTimeout, RETRIES.minTimeout * RETRIES.factor ** attempt) * (1 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function cannotLock(file: string, error: NodeJS.ErrnoException): Error {
  const why: Record<string, string> = {
    EROFS: "the file system is read-only here (inside Ralph's sandbox .ralph/ is read-only: the task list is the orchestrator's to change)",
    EACCES: 'permission denied',
    EPERM: 'operation not permitted',
    ENOSPC: 'the disk is full',
  };
  const text = error.code && why[error.code];
  return text ? new RalphError(`cannot change ${file}: ${text} (${error.code} on ${file}.lock)`, 'store-unwritable') : error;
}

/**
 * Runs `work` holding a cross-process lock on `file` (`<file>.lock`, a directory created
 * atomically by mkdir). Waits for another holder; a lock whose holder died is taken over once
 * it is stale. Every read-modify-write of a shared `.ralph/` file goes through here, so two
 * processes never lose each other's change.
 */
export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const options: lockfile.LockOptions = {
    realpath: false,
    stale: STALE_MS,
    retries: 0, // retried below, and only while another process holds the lock
    onCompromised: () => undefined, // the write below is atomic; a late holder can only lose its own change
    fs: directFs,
  };
  ensureDir(path.dirname(file));
  const release = await lockWhileHeldElsewhere(file, options);
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}
