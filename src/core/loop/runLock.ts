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

  /**
   * `force` takes over a lock whose holder cannot be a live Ralph run: a dead pid, a live pid
   * that is not a node/Ralph process (a reused pid), or another host's lock (the user vouches
   * that run is gone). A live Ralph-like process on this host is never taken over.
   */
  static async acquire(paths: RalphPaths, runId: string, options: { force?: boolean; onTakeover?: (message: string) => void } = {}): Promise<RunLock> {
    const info: LockInfo = { pid: process.pid, host: os.hostname(), runId, startedAt: new Date().toISOString() };
    await fs.mkdir(paths.dir, { recursive: true });
    const lock = new RunLock(paths.lock, info);
    const shown = paths.relative(paths.lock);
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await fs.writeFile(paths.lock, JSON.stringify(info), { flag: 'wx' });
        lock.held = true;
        return lock;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const holder = await readHolder(paths.lock);
      if (holder) {
        const state = await holderState(holder);
        if (state.kind !== 'dead') {
          if (!options.force || state.kind === 'ralph') throw new LockError(describeHolder(holder, state, shown, options.force === true), holder.pid);
          options.onTakeover?.(`took over ${shown} from ${holderText(holder)} (${stateText(state)}) because of --force`);
        }
      }
      // stale (or taken over): remove and retry the exclusive create
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

type HolderState = { kind: 'dead' } | { kind: 'other-host' } | { kind: 'ralph'; command: string } | { kind: 'unrelated'; command: string };

async function holderState(holder: LockInfo): Promise<HolderState> {
  if (holder.host !== os.hostname()) return { kind: 'other-host' }; // cannot check another host
  if (holder.pid === process.pid || !isAlive(holder.pid)) return { kind: 'dead' };
  const command = await commandLine(holder.pid);
  // unreadable (another user's process): assume the worst, it may be a run
  if (command === undefined) return { kind: 'ralph', command: '(command line not readable)' };
  return RALPH_LIKE.test(command) ? { kind: 'ralph', command } : { kind: 'unrelated', command };
}

/** Ralph runs inside node (the CLI) or an editor's extension host. */
const RALPH_LIKE = /ralph|\bnode(js)?\b|extensionHost|code-server|electron|\bcode\b/i;

async function commandLine(pid: number): Promise<string | undefined> {
  try {
    return (await fs.readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter(Boolean).join(' ').slice(0, 200);
  } catch {
    return process.platform === 'linux' ? undefined : 'node'; // without /proc, a live pid counts as a possible run
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function holderText(holder: LockInfo): string {
  return `pid ${holder.pid} on host ${holder.host}, run ${holder.runId}, started ${holder.startedAt}`;
}

function stateText(state: HolderState): string {
  switch (state.kind) {
    case 'dead':
      return 'the pid is not running';
    case 'other-host':
      return 'another host: its pid cannot be checked from here';
    case 'ralph':
      return `the pid is alive and looks like a Ralph run: ${state.command}`;
    case 'unrelated':
      return `the pid is alive but is not a Ralph process (${state.command}); the lock is most likely left by a crashed run whose pid was reused`;
  }
}

function describeHolder(holder: LockInfo, state: HolderState, shown: string, forced: boolean): string {
  const head = `another Ralph run holds ${shown}: ${holderText(holder)}; ${stateText(state)}.`;
  if (state.kind === 'ralph') {
    return `${head} ${forced ? '--force does not take over a live run: ' : ''}stop that run first (Stop in the editor, Ctrl-C, or kill ${holder.pid}), then run again`;
  }
  return `${head} If no Ralph run is active in this workspace, take the lock over with: ralph run --force (in the editor: delete ${shown})`;
}
