import * as path from 'node:path';
import { RalphError } from '../errors';
import { uncommittedFiles, WorktreeManager } from '../git/worktrees';

/** A task's worktree as the recovery actions see it. */
export interface KeptWorktree {
  taskId: string;
  /** Absolute path. */
  path: string;
  /** Relative to the workspace, for messages. */
  relative: string;
  branch: string;
  /** Files with uncommitted changes (tracked or not), as `git status --porcelain` names them. */
  uncommitted: string[];
}

/** Clean Up Worktree would lose uncommitted work and the person did not say to discard it. */
export class UncommittedWorkError extends RalphError {
  constructor(readonly worktree: KeptWorktree) {
    const list =
      worktree.uncommitted.slice(0, 10).join(', ') +
      (worktree.uncommitted.length > 10 ? `, and ${worktree.uncommitted.length - 10} more` : '');
    super(
      `the worktree ${worktree.relative} of ${worktree.taskId} has uncommitted changes (${list}); they would be lost. Commit them on ${worktree.branch}, or confirm to discard them`,
      'uncommitted-work',
    );
  }
}

/**
 * The kept worktrees of parallel tasks (`.ralph/worktrees/<id>` on `ralph/<id>`): what is in
 * them, and the two recovery actions that touch them. Clean Up Worktree removes the directory
 * and keeps the branch (its commits stay; a later run picks the branch up again); a fresh
 * Retry drops both, so the task starts over from the target's current tip.
 */
export class TaskWorktrees {
  private readonly manager: WorktreeManager;

  constructor(root: string) {
    this.manager = new WorktreeManager(root);
  }

  /** Every task worktree with its uncommitted files. */
  async list(): Promise<KeptWorktree[]> {
    const found = await this.manager.list().catch(() => []);
    return Promise.all(found.map((w) => this.describe(w.taskId, w.path, w.branch)));
  }

  async find(taskId: string): Promise<KeptWorktree | undefined> {
    const found = (await this.manager.list().catch(() => [])).find((w) => w.taskId === taskId);
    return found ? this.describe(taskId, found.path, found.branch) : undefined;
  }

  /**
   * Removes the task's worktree, keeping its branch. Refused (UncommittedWorkError, nothing
   * changed) when it holds uncommitted changes, unless `discardUncommitted`.
   */
  async cleanUp(taskId: string, options: { discardUncommitted: boolean }): Promise<KeptWorktree> {
    const worktree = await this.find(taskId);
    if (!worktree) throw new RalphError(`task ${taskId} has no worktree to clean up`, 'no-worktree');
    if (worktree.uncommitted.length > 0 && !options.discardUncommitted) throw new UncommittedWorkError(worktree);
    await this.manager.remove(taskId, { deleteBranch: false });
    return worktree;
  }

  /** Drops the task's worktree and branch (Retry from the current tip); nothing when it has neither. */
  async dropForFresh(taskId: string): Promise<boolean> {
    const had = (await this.find(taskId)) !== undefined || (await this.manager.branches()).has(taskId);
    if (had) await this.manager.remove(taskId, { deleteBranch: true });
    return had;
  }

  private async describe(taskId: string, wtPath: string, branch: string | undefined): Promise<KeptWorktree> {
    const uncommitted = [...(await uncommittedFiles(wtPath).catch(() => new Set<string>()))];
    return {
      taskId,
      path: wtPath,
      relative: path.relative(this.manager.root, wtPath) || wtPath,
      branch: branch ?? this.manager.branchFor(taskId),
      uncommitted,
    };
  }
}
