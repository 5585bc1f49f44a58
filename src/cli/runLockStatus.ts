import { holderState, type HolderState, type LockInfo } from '../core/loop/run/runLockHolder';

/** What `ralph status` says of `.ralph/run.lock`: `none` (no lock), or what its holder is. */
export type RunState = 'none' | 'active' | 'other-host' | 'stale';

/**
 * Whether a run holds the workspace, as `ralph run` itself judges its lock's holder (read with
 * `parseLockInfo`, judged with `holderState`): a lock whose pid is gone is what a killed run left (the next run takes it over), one whose
 * pid is now another program's too (`--force` takes it over), not an active run; a lock of
 * another host cannot be checked from here.
 */
export async function runLockStatus(lock: LockInfo | null | undefined): Promise<{ state: RunState; line: string }> {
  if (!lock) return { state: 'none', line: 'no run is active' };
  const holder = await holderState(lock, undefined);
  return { state: stateOf(holder), line: lineOf(lock, holder) };
}

function stateOf(holder: HolderState): RunState {
  return holder.kind === 'ralph' ? 'active' : holder.kind === 'other-host' ? 'other-host' : 'stale';
}

function lineOf(lock: LockInfo, holder: HolderState): string {
  switch (holder.kind) {
    case 'ralph':
      return `a run is active (pid ${lock.pid}, run ${lock.runId}, started ${lock.startedAt})`;
    case 'other-host':
      return `a run may be active on host ${lock.host} (pid ${lock.pid}, run ${lock.runId}): it cannot be checked from here`;
    case 'dead':
      return `no run is active: run ${lock.runId} (pid ${lock.pid}) ended without releasing its lock; the next run takes it over`;
    case 'unrelated':
      return `no run is active: run ${lock.runId} ended without releasing its lock and pid ${lock.pid} is now another program (${holder.command}); take the lock over with ralph run --force`;
  }
}
