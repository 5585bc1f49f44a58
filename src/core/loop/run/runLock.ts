import { type BigIntStats, promises as fs, rmSync } from 'node:fs';
import * as os from 'node:os';
import { LockError } from '../../errors';
import type { RalphPaths } from '../../paths';
import { tempNameFor } from '../../util/atomicWrite';
import { withFileLock } from '../../util/fileLock';
import { describeHolder, holderState, holderText, type LockInfo, parseLockInfo, stateText } from './runLockHolder';

/**
 * How long a lock file that cannot be read as a lock (empty, half-written) counts as held: a
 * Ralph older than this file's way of creating it wrote the file after creating it, and a
 * racing process must not take such a lock for a stale one while its holder is writing it.
 */
export const UNREADABLE_LOCK_GRACE_MS = 10_000;

/** The run locks this process holds (file → run id): a lock naming this pid is live only when listed here. */
const HELD = new Map<string, string>();

/**
 * One process at a time runs a workspace — the CLI, an editor window, another editor window.
 *
 * The lock file appears complete in one atomic step: its content is written to a temporary
 * file first and then hard-linked to `run.lock`, which fails with EEXIST when the lock exists
 * (where the file system has no hard links, an exclusive create). A reader therefore never
 * sees a half-written lock from this version; an unreadable one counts as held for
 * `UNREADABLE_LOCK_GRACE_MS`. A lock whose holder is gone is taken over only under a second
 * lock (`run.lock.lock`, proper-lockfile), after checking that the file is still the one judged
 * stale: two processes that both found the same dead lock cannot both remove it and both win.
 */
export class RunLock {
  private held = false;
  /** Said when this lock was taken over from a holder `force` set aside (`ralph run --force`): the run's warning. */
  takeover: string | undefined;

  private constructor(
    private readonly file: string,
    readonly info: LockInfo,
  ) {}

  /**
   * `force` takes over a lock whose holder cannot be a live Ralph run: a dead pid, a live pid
   * that is not a node/Ralph process (a reused pid), or another host's lock (the user vouches
   * that run is gone). A live Ralph-like process on this host is never taken over.
   */
  static async acquire(paths: RalphPaths, runId: string, options: { force?: boolean; now?: () => number } = {}): Promise<RunLock> {
    const info: LockInfo = { pid: process.pid, host: os.hostname(), runId, startedAt: new Date().toISOString() };
    const now = options.now ?? Date.now;
    await fs.mkdir(paths.dir, { recursive: true });
    const lock = new RunLock(paths.lock, info);
    const shown = paths.relative(paths.lock);
    const content = JSON.stringify(info);
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await createComplete(paths.lock, content)) return lock.taken();
      const seen = await readLock(paths.lock);
      if (!seen) continue; // released meanwhile: try again
      if (!seen.holder) {
        const ageMs = now() - Number(seen.stat.mtimeMs);
        if (ageMs < UNREADABLE_LOCK_GRACE_MS) {
          throw new LockError(
            `another Ralph run is taking ${shown} right now (the file is still being written); wait until it ends, or stop it, then run again`,
          );
        }
      } else {
        const state = await holderState(holder(seen), HELD.get(paths.lock));
        if (state.kind !== 'dead') {
          if (!options.force || state.kind === 'ralph')
            throw new LockError(describeHolder(holder(seen), state, shown, options.force === true), holder(seen).pid);
          lock.takeover = `took over ${shown} from ${holderText(holder(seen))} (${stateText(state)}) because of --force`;
        }
      }
      if (await takeOver(paths.lock, seen.stat, content)) return lock.taken();
    }
    throw new LockError(`could not take ${shown} (it kept changing hands); try again`);
  }

  private taken(): RunLock {
    this.held = true;
    HELD.set(this.file, this.info.runId);
    return this;
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    if (HELD.get(this.file) === this.info.runId) HELD.delete(this.file);
    const seen = await readLock(this.file).catch(() => undefined);
    if (seen?.holder && seen.holder.pid === this.info.pid && seen.holder.runId === this.info.runId) {
      await fs.rm(this.file, { force: true });
    }
  }

  /** For process exit handlers, where nothing async runs. */
  releaseSync(): void {
    if (!this.held) return;
    this.held = false;
    if (HELD.get(this.file) === this.info.runId) HELD.delete(this.file);
    try {
      rmSync(this.file, { force: true });
    } catch {
      // nothing more can be done while exiting
    }
  }
}

function holder(seen: SeenLock): LockInfo {
  return seen.holder as LockInfo;
}

/**
 * Creates `file` with `content` complete, or answers false when it exists: the content goes
 * to a temporary file that is then linked to `file` (link never replaces). Without hard links,
 * an exclusive create and a write.
 */
async function createComplete(file: string, content: string): Promise<boolean> {
  const temp = tempNameFor(file);
  await fs.writeFile(temp, content, { flag: 'wx' });
  try {
    await fs.link(temp, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP' && code !== 'ENOSYS' && code !== 'EXDEV') throw error;
    return createExclusive(file, content);
  } finally {
    await fs.rm(temp, { force: true });
  }
}

async function createExclusive(file: string, content: string): Promise<boolean> {
  try {
    await fs.writeFile(file, content, { flag: 'wx' });
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

interface SeenLock {
  stat: BigIntStats;
  holder: LockInfo | undefined;
}

/** The lock file as found (its identity and, when it reads as a lock, its holder); undefined when there is none. */
async function readLock(file: string): Promise<SeenLock | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const stat = await handle.stat({ bigint: true });
    const text = stat.size > 4096n ? '' : await handle.readFile('utf8');
    return { stat, holder: parseLockInfo(text) };
  } finally {
    await handle.close();
  }
}

function sameFile(a: BigIntStats, b: BigIntStats): boolean {
  return a.dev === b.dev && a.ino === b.ino && a.size === b.size && a.mtimeNs === b.mtimeNs;
}

/**
 * Replaces the stale lock `judged` with a complete new one, one taker at a time: under the
 * takeover lock, and only while `run.lock` is still that very file (another taker may have
 * replaced it with a live lock since it was judged). False when it changed: judge again.
 */
async function takeOver(file: string, judged: BigIntStats, content: string): Promise<boolean> {
  return withFileLock(file, async () => {
    const now = await fs.stat(file, { bigint: true }).catch(() => undefined);
    if (now && !sameFile(now, judged)) return false;
    if (now) await fs.rm(file, { force: true });
    return createComplete(file, content);
  });
}
