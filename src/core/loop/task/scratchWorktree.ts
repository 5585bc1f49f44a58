import * as path from 'node:path';
import { runGit } from '../../git/gitExec';
import { removeTree } from '../../util/removeTree';
import { WorktreeManager, WORKTREES_DIR } from '../../git/worktrees';
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
  await removeScratch(worktrees, scratch);
  try {
    const why = await addScratch(worktrees, scratch, commit);
    return why ? failed(`could not make the scratch worktree at the base: ${why}`) : await work(scratch);
  } finally {
    await removeScratch(worktrees, scratch).catch(() => undefined);
  }
}

/**
 * The scratch worktree detached at `commit`, shared folders linked; git's error when not made.
 * In the repository's worktree queue: a prune beside an add takes its half-written record.
 */
async function addScratch(worktrees: WorktreeManager, scratch: string, commit: string): Promise<string | undefined> {
  const added = await worktrees.exclusive(() => runGit(worktrees.root, ['worktree', 'add', '--detach', '--force', scratch, commit]));
  if (added.code !== 0) return added.stderr.trim() || `git worktree add exited with ${added.code}`;
  await worktrees.linkShared(scratch);
  return undefined;
}

/** The scratch worktree gone, with git's record of it (in the worktree queue). */
function removeScratch(worktrees: WorktreeManager, scratch: string): Promise<void> {
  return worktrees.exclusive(async () => {
    await runGit(worktrees.root, ['worktree', 'remove', '--force', scratch]);
    await removeTree(scratch);
    await runGit(worktrees.root, ['worktree', 'prune']);
  });
}
