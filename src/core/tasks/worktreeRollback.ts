import * as path from 'node:path';
import { WorktreeManager } from '../git/worktrees';
import type { RollbackPlan, RollbackPlanner } from './rollback';
import type { Task } from './schema';

/**
 * A task that still has its worktree (parallel runs) was never merged: its work lives only on
 * its branch `ralph/<id>`. Rolling it back drops that worktree and branch; reverting commits on
 * the target would undo other tasks' merges instead. A task without a worktree is left to the
 * revert planner (its merged squash commit carries its `Ralph-Task` trailer).
 */
export class WorktreeRollbackPlanner implements RollbackPlanner {
  constructor(private readonly root: string) {}

  async plan(task: Task): Promise<RollbackPlan | undefined> {
    const manager = new WorktreeManager(this.root);
    const worktree = (await manager.list()).find((w) => w.taskId === task.id);
    if (!worktree) return undefined;
    const where = path.relative(this.root, worktree.path) || worktree.path;
    const branch = worktree.branch ?? `ralph/${task.id}`;
    return {
      taskId: task.id,
      kind: 'drop-branch',
      commits: [],
      describe: [
        `remove the worktree ${where} and the branch ${branch}: ${task.id}'s work was never merged, so nothing on your branch changes`,
      ],
      apply: async () => {
        await manager.remove(task.id, { deleteBranch: true });
        return { files: [], summary: `removed the worktree ${where} and the branch ${branch} (never merged); your branch is untouched` };
      },
    };
  }
}
