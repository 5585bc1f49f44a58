import { promises as fs } from 'node:fs';
import { runGit } from './gitExec';
import { RefReader } from './refRead';
import { type CreatedWorktree, uncommittedFiles, type WorktreeManager } from './worktrees';

/**
 * Worktrees made ahead for the tasks that start next. While the running agents wait for their
 * models, the parallel autopilot has the next tasks' worktrees made, one after another, so that
 * a freed slot starts its task at once rather than after a `git worktree add` queued behind the
 * others and the merge queue's own worktree commands.
 *
 * A task still starts from the target's tip as it is when the task starts (DESIGN, "Parallel
 * runs"): a warm worktree whose target has moved on since it was made is brought to the new tip
 * (nothing of the task is in it yet), and one no task took is removed with its branch when the
 * run ends. Only worktrees made here are warm: a task that has a worktree or a branch already
 * (retried, interrupted) gets it back as it is, through `WorktreeManager.create`.
 */
export class WarmWorktrees {
  /** Worktrees being made or made, by task; undefined: the task had one already, or making it failed. */
  private readonly made = new Map<string, Promise<CreatedWorktree | undefined>>();
  /** One making after another: each waits for the worktree lock anyway, and a line keeps the order of the tasks. */
  private line: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** The target's tip as each task starts, read from git's files (no process on a task's way to its first model call). */
  private readonly refs: RefReader;

  constructor(
    private readonly worktrees: WorktreeManager,
    private readonly target: string,
  ) {
    this.refs = new RefReader(worktrees.root);
  }

  /** Has the worktrees of these tasks made in the background (not those being made, nor any after `dispose`). */
  prepare(taskIds: readonly string[]): void {
    for (const taskId of taskIds) {
      if (this.closed || this.made.has(taskId)) continue;
      this.made.set(
        taskId,
        this.inLine(() => this.make(taskId)).catch(() => undefined),
      );
    }
  }

  /**
   * The target moved (the queue landed a task): the worktrees made ahead that no task took yet
   * follow it now, in the line, rather than when their task starts — a freed slot then finds its
   * worktree at the tip, and the two git steps of following are off the task's way to its model.
   * One that cannot follow is left as it is: `take` makes it again.
   */
  follow(): void {
    if (this.closed) return;
    for (const [taskId, making] of this.made) {
      const following = making.then((warm) => this.inLine(() => this.atTip(warm)));
      this.made.set(
        taskId,
        following.catch(() => undefined),
      );
    }
  }

  /** Runs `work` after the line's last making or following. */
  private inLine<T>(work: () => Promise<T>): Promise<T> {
    const run = this.line.then(work);
    this.line = run.catch(() => undefined);
    return run;
  }

  /** The warm worktree at the target's current tip (brought there when it can follow), else as it was. */
  private async atTip(warm: CreatedWorktree | undefined): Promise<CreatedWorktree | undefined> {
    if (!warm || this.closed) return warm;
    const tip = await this.refs.branchTip(this.target);
    if (!tip || tip === warm.base) return warm;
    return (await this.bringTo(warm, tip)) ? { ...warm, base: tip } : warm;
  }

  /** The worktree being made ahead for the task, once made (undefined: none is, or the task had one already). */
  madeFor(taskId: string): Promise<CreatedWorktree | undefined> {
    return this.made.get(taskId) ?? Promise.resolve(undefined);
  }

  /** The task's worktree, at the target's current tip when it was made for it: the warm one, else made now. */
  async take(taskId: string): Promise<CreatedWorktree> {
    const making = this.made.get(taskId);
    this.made.delete(taskId);
    const warm = await making;
    if (!warm) return this.worktrees.create(taskId, this.target);
    const tip = await this.refs.branchTip(this.target);
    if (tip === warm.base) return warm;
    if (tip && (await this.bringTo(warm, tip))) return { ...warm, base: tip };
    // the target went somewhere the warm worktree cannot follow cleanly: made again from the tip
    return this.worktrees.create(taskId, this.target, { fresh: true });
  }

  /** Removes the warm worktrees no task took, and their branches (made here, they hold nothing); waits for those being made. */
  async dispose(): Promise<void> {
    this.closed = true;
    const left = [...this.made.entries()];
    this.made.clear();
    for (const [taskId, making] of left) {
      const warm = await making;
      if (warm) await this.worktrees.remove(taskId, { deleteBranch: true }).catch(() => undefined);
    }
  }

  /**
   * After a run that was killed: the worktrees it had made ahead for tasks that then never
   * started (the caller names those: `todo`, never run) are removed with their branches when
   * nothing of a task is in them — no commit the target lacks, no change in the tree — so such
   * a task starts from the tip of its own start, as every task does. Returns their paths.
   */
  async discardLeftovers(neverStarted: readonly string[]): Promise<string[]> {
    const removed: string[] = [];
    for (const taskId of neverStarted) {
      const wtPath = this.worktrees.pathFor(taskId);
      if (!(await fs.lstat(wtPath).catch(() => undefined))) continue;
      const branch = this.worktrees.branchFor(taskId);
      const tips = await this.worktrees.branchTips([branch, this.target]);
      const branchTip = tips.get(branch);
      const targetTip = tips.get(this.target);
      if (!branchTip || !targetTip) continue;
      if ((await runGit(this.worktrees.root, ['merge-base', '--is-ancestor', branchTip, targetTip])).code !== 0) continue;
      if ((await uncommittedFiles(wtPath).catch(() => new Set(['?']))).size > 0) continue;
      await this.worktrees.remove(taskId, { deleteBranch: true });
      removed.push(wtPath);
    }
    return removed;
  }

  private async make(taskId: string): Promise<CreatedWorktree | undefined> {
    if (this.closed) return undefined;
    // a worktree there already is a task's own (retried, interrupted): never made over or moved
    if (await fs.lstat(this.worktrees.pathFor(taskId)).catch(() => undefined)) return undefined;
    const made = await this.worktrees.create(taskId, this.target);
    return made.created ? made : undefined;
  }

  /**
   * Moves the warm worktree's branch from its base to `tip` only if it is still at its base
   * (compare-and-swap on the ref), then its index and files (a two-tree `read-tree`, which
   * refuses to overwrite anything changed there); false when either step refuses.
   */
  private async bringTo(warm: CreatedWorktree, tip: string): Promise<boolean> {
    const moved = await runGit(this.worktrees.root, [
      'update-ref',
      '-m',
      'ralph: worktree to the current tip',
      `refs/heads/${warm.branch}`,
      tip,
      warm.base,
    ]);
    if (moved.code !== 0) return false;
    return (await runGit(warm.path, ['read-tree', '-m', '-u', warm.base, tip])).code === 0;
  }
}
