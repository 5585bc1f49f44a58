import { promises as fs } from 'node:fs';
import * as os from 'node:os';

/** What `.ralph/run.lock` holds. */
export interface LockInfo {
  pid: number;
  host: string;
  runId: string;
  startedAt: string;
}

/** The holder a lock file's text names; undefined when it does not read as a lock (empty, half-written, not ours). */
export function parseLockInfo(text: string): LockInfo | undefined {
  try {
    const value = JSON.parse(text) as Partial<LockInfo> | null;
    if (!value || typeof value.pid !== 'number' || typeof value.host !== 'string' || typeof value.runId !== 'string') return undefined;
    return { pid: value.pid, host: value.host, runId: value.runId, startedAt: String(value.startedAt ?? '') };
  } catch {
    return undefined;
  }
}

export type HolderState =
  { kind: 'dead' } | { kind: 'other-host' } | { kind: 'ralph'; command: string } | { kind: 'unrelated'; command: string };

/**
 * Whether the lock's holder may still run. `heldHere` is the run id this process holds the
 * lock for, if any: a lock naming this pid is live only when it is that run's (another run of
 * this process, e.g. a second runner in the same editor, must not take it over).
 */
export async function holderState(holder: LockInfo, heldHere: string | undefined): Promise<HolderState> {
  if (holder.host !== os.hostname()) return { kind: 'other-host' }; // cannot check another host
  if (holder.pid === process.pid) return heldHere === holder.runId ? { kind: 'ralph', command: 'this process' } : { kind: 'dead' };
  if (!isAlive(holder.pid)) return { kind: 'dead' };
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

export function holderText(holder: LockInfo): string {
  return `pid ${holder.pid} on host ${holder.host}, run ${holder.runId}, started ${holder.startedAt}`;
}

export function stateText(state: HolderState): string {
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

export function describeHolder(holder: LockInfo, state: HolderState, shown: string, forced: boolean): string {
  const head = `another Ralph run holds ${shown}: ${holderText(holder)}; ${stateText(state)}.`;
  if (holder.pid === process.pid)
    return `another run of this process (run ${holder.runId}, started ${holder.startedAt}) holds ${shown}: stop it first, then run again`;
  if (state.kind === 'ralph') {
    return `${head} ${forced ? '--force does not take over a live run: ' : ''}stop that run first (Stop in the editor, Ctrl-C, or kill ${holder.pid}), then run again`;
  }
  return `${head} If no Ralph run is active in this workspace, take the lock over with: ralph run --force (in the editor: delete ${shown})`;
}
