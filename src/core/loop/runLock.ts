import { promises as fs, rmSync } from 'node:fs';
import * as os from 'node:os';
import { LockError } from '../errors';
import type { RalphPaths } from '../paths';
import { readTextIfExists } from '../util/atomicWrite';

interface LockInfo {
  pid: number;
  host: string;
  runId: string;
  startedAt: string;
}

/**
 * One process at a time runs a workspace. The lock file is created exclusively (`wx`); a lock
 * left by a dead process on this host is taken over, a live one refuses with a clear message.
 */
export class RunLock {
  private held = false;

  private constructor(
    private readonly file: string,
    readonly info: LockInfo,
  ) {}

  static async acquire(paths: RalphPaths, runId: string): Promise<RunLock> {
    const info: LockInfo = { pid: process.pid, host: os.hostname(), runId, startedAt: new Date().toISOString() };
    await fs.mkdir(paths.dir, { recursive: true });
    const lock = new RunLock(paths.lock, info);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fs.writeFile(paths.lock, JSON.stringify(info), { flag: 'wx' });
        lock.held = true;
        return lock;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readHolder(paths.lock);
      if (holder && isAlive(holder)) {
        throw new LockError(
          `another Ralph run (pid ${holder.pid}, started ${holder.startedAt}) is already running in this workspace; stop it first`,
          holder.pid,
        );
      }
      // stale: the holder died without releasing; remove and retry the exclusive create
      await fs.rm(paths.lock, { force: true });
    }
    throw new LockError('could not take the run lock (it kept changing hands); try again');
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    const holder = await readHolder(this.file);
    if (holder && holder.pid === this.info.pid && holder.runId === this.info.runId) {
      await fs.rm(this.file, { force: true });
    }
  }

  /** For process exit handlers, where nothing async runs. */
  releaseSync(): void {
    if (!this.held) return;
    this.held = false;
    try {
      rmSync(this.file, { force: true });
    } catch {
      // nothing more can be done while exiting
    }
  }
}

async function readHolder(file: string): Promise<LockInfo | undefined> {
  const text = await readTextIfExists(file);
  if (!text) return undefined;
  try {
    return JSON.parse(text) as LockInfo;
  } catch {
    return undefined; // half-written or corrupt: treat as stale
  }
}

function isAlive(holder: LockInfo): boolean {
  if (holder.host !== os.hostname()) return true; // cannot check another host: assume alive
  if (holder.pid === process.pid) return false;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
