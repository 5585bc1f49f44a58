import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as lockfile from 'proper-lockfile';
import { ConfigError, RalphError } from '../errors';

/**
 * How long a lock may go without its holder refreshing it before another process takes it
 * over: proper-lockfile refreshes the lock's mtime every `stale / 2` while the holder lives,
 * so only a crashed holder's lock ages past this.
 */
const STALE_MS = 10_000;

/**
 * Runs `work` holding a cross-process lock on `file` (`<file>.lock`, a directory created
 * atomically by mkdir). Waits for another holder; a lock whose holder died is taken over once
 * it is stale. Every read-modify-write of a shared `.ralph/` file goes through here, so two
 * processes never lose each other's change.
 */
export async function withFileLock<T>(file: string, work: () => Promise<T>): Promise<T> {
  const dir = path.dirname(file);
  await fs.mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EEXIST' || error.code === 'ENOTDIR') throw new ConfigError(`${dir} is a file, but it must be a directory (is .ralph a file?); move it away and run again`, dir);
    throw error;
  });
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(file, {
      realpath: false,
      stale: STALE_MS,
      retries: { retries: 400, factor: 1.3, minTimeout: 10, maxTimeout: 250, randomize: true },
      onCompromised: () => undefined, // the write below is atomic; a late holder can only lose its own change
    });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOCKED') {
      throw new RalphError(`${file} is locked by another process (lock ${file}.lock); try again, or remove the lock if no Ralph process is running`, 'store-locked');
    }
    throw error;
  }
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}
