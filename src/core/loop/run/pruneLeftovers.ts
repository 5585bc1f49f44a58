import type { RalphConfig } from '../../config/schema';
import type { RalphEventBody } from '../../events';
import type { WarmWorktrees } from '../../git/warmWorktrees';
import type { WorktreeManager } from '../../git/worktrees';
import type { Task, TaskStatus } from '../../tasks/schema';

/** Statuses whose worktree a crashed run must keep: the task may still go on (or be retried) in it. */
const GONE: ReadonlySet<TaskStatus> = new Set(['done', 'cancelled']);

/**
 * Before any agent starts (the run lock is held, so no Ralph git process runs): what a crash
 * left — orphan worktrees and branches, stale locks, worktrees made ahead for tasks that never
 * started — is removed, and said once.
 */
export async function pruneLeftovers(
  deps: { config: Pick<RalphConfig, 'merge'>; worktrees: WorktreeManager; emit(body: RalphEventBody): void },
  warm: WarmWorktrees,
  tasks: readonly Task[],
): Promise<void> {
  const keep = new Set(tasks.filter((t) => !GONE.has(t.status)).map((t) => t.id));
  // merge.deleteBranch false: the branches of merged tasks are the user's to keep
  const keepBranches = deps.config.merge.deleteBranch
    ? keep
    : new Set([...keep, ...tasks.filter((t) => t.status === 'done').map((t) => t.id)]);
  const pruned = await deps.worktrees.prune(keep, keepBranches);
  // worktrees a killed run had made ahead for tasks that never started
  const neverStarted = tasks.filter((t) => t.status === 'todo' && t.iterations === 0).map((t) => t.id);
  const unused = await warm.discardLeftovers(neverStarted).catch(() => []);
  const removed = [
    ...pruned.removedWorktrees,
    ...unused.map((p) => `${p} (made ahead, never used)`),
    ...pruned.removedBranches,
    ...pruned.removedLocks,
    ...pruned.removedDirs,
  ];
  if (removed.length > 0)
    deps.emit({ type: 'warning', code: 'worktrees-pruned', message: `cleaned up after an interrupted run: ${removed.join(', ')}` });
}
