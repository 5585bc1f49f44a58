import * as path from 'node:path';
import { WorktreeManager, WORKTREES_DIR } from '../git/worktrees';
import type { TaskLoopServices } from './types';

/**
 * `work` in a scratch worktree `.ralph/worktrees/<name>` (a proof's `_proof-<id>`, a baseline's
 * `_base-<id>`) detached at `commit`, the shared folders linked, removed afterwards (a leftover
 * of a killed run first); `failed(why)` when git could not make it.
 */
export async function inScratchWorktree<T>(
  services: Pick<TaskLoopServices, 'paths' | 'config'>,
  name: string,
  commit: string,
  work: (scratch: string) => Promise<T>,
  failed: (why: string) => T,
): Promise<T> {
  const scratch = path.join(services.paths.workspace, ...WORKTREES_DIR.split('/'), name);
  const worktrees = new WorktreeManager(services.paths.workspace, services.config.worktrees.link);
  await worktrees.ensureIgnored(); // never seen by an iteration's commit
  await worktrees.removeScratch(scratch);
  try {
    const why = await worktrees.addScratch(scratch, commit);
    return why ? failed(`could not make the scratch worktree at the base: ${why}`) : await work(scratch);
  } finally {
    await worktrees.removeScratch(scratch).catch(() => undefined);
  }
}
