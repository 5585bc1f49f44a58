import { RalphError } from '../errors';
import type { GitService } from '../git/gitService';
import type { CheckpointStore } from '../loop/checkpoint';
import type { Task, TaskStatus } from './schema';
import type { TaskStore } from './store';
import { RevertPlanner, type RollbackApplied, type RollbackPlan, type RollbackPlanner } from './rollback';
import type { KeptWorktree, TaskWorktrees } from './taskWorktrees';

export interface RollbackOutcome {
  task: Task;
  plan: RollbackPlan;
  applied: RollbackApplied;
  /** What was done, in one paragraph for the person. */
  message: string;
}

/**
 * What a person can do to a task from the tree, the panel or the CLI. Each action checks the
 * task's status first, so a menu shown for a stale tree cannot corrupt the store.
 */
export class TaskActions {
  private readonly planners: readonly RollbackPlanner[];

  constructor(
    private readonly store: TaskStore,
    private readonly checkpoints: CheckpointStore,
    git: Pick<GitService, 'root'>,
    /** Consulted in order before the default (revert the task's commits), e.g. for a task on its own branch. */
    planners: readonly RollbackPlanner[] = [],
    /** The kept worktrees of parallel tasks: Retry from the current tip, Clean Up Worktree. */
    private readonly worktrees?: TaskWorktrees,
  ) {
    this.planners = [...planners, new RevertPlanner(git.root)];
  }

  /**
   * timeout / failed / halted / cancelled / blocked / needs_help / done → todo with a fresh
   * iteration counter. A kept worktree is continued in by default; `fresh` drops it and its
   * branch first, so the task starts over from the target's current tip.
   */
  async retry(id: string, options: { fresh?: boolean } = {}): Promise<Task> {
    const task = await this.expect(id, ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done'], 'retried');
    if (options.fresh) {
      if (!this.worktrees) throw new RalphError('retrying from the current tip needs the worktree manager', 'no-worktrees');
      await this.worktrees.dropForFresh(id);
    }
    await this.checkpoints.clear(id);
    return this.store.update(task.id, { status: 'todo', iterations: 0, progress: undefined, lastSignal: undefined, blockedReason: undefined });
  }

  /** blocked / needs_help → todo, keeping the iteration count and checkpoint (the answer is in the prompt or notes). */
  async unblock(id: string): Promise<Task> {
    const task = await this.expect(id, ['blocked', 'needs_help'], 'unblocked');
    const checkpoint = await this.checkpoints.load(id);
    // resumable from its checkpoint: `halted` resumes, `todo` would start over
    return this.store.update(task.id, { status: checkpoint ? 'halted' : 'todo', blockedReason: undefined });
  }

  /** The task's kept worktree (and its uncommitted files), if it has one. */
  async worktreeOf(id: string): Promise<KeptWorktree | undefined> {
    return this.worktrees?.find(id);
  }

  /**
   * Clean Up Worktree: removes the kept worktree of a task that ended (failed, timeout, halted,
   * blocked, needs_help, cancelled), keeping its branch and its status. Uncommitted changes in
   * it refuse the clean-up (UncommittedWorkError) unless `discardUncommitted`.
   */
  async cleanUpWorktree(id: string, options: { discardUncommitted: boolean }): Promise<KeptWorktree> {
    await this.expect(id, ['failed', 'timeout', 'halted', 'blocked', 'needs_help', 'cancelled'], 'cleaned up');
    if (!this.worktrees) throw new RalphError('cleaning up worktrees needs the worktree manager', 'no-worktrees');
    return this.worktrees.cleanUp(id, options);
  }

  async cancel(id: string): Promise<Task> {
    const task = await this.expect(id, ['todo', 'blocked', 'needs_help', 'timeout', 'failed', 'halted'], 'cancelled');
    return this.store.update(task.id, { status: 'cancelled' });
  }

  /** Raises the task's iteration limit; a timed-out task becomes resumable again. */
  async increaseMaxIterations(id: string, by: number, defaultMax: number): Promise<Task> {
    if (!Number.isInteger(by) || by < 1) throw new RalphError('the increase must be a whole number of at least 1', 'invalid-increase');
    const task = await this.store.get(id);
    const maxIterations = Math.max(task.maxIterations ?? defaultMax, task.iterations) + by;
    const resumable = task.status === 'timeout' && (await this.checkpoints.load(id)) !== undefined;
    return this.store.update(task.id, { maxIterations, ...(resumable ? { status: 'halted' as const } : {}) });
  }

  async edit(id: string, fields: Partial<Pick<Task, 'title' | 'prompt' | 'promise' | 'priority' | 'maxIterations' | 'allowGateChanges' | 'check' | 'proof' | 'proofTests'>>): Promise<Task> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before editing`, 'task-running');
    // an empty check removes it (an explicit undefined clears the field)
    return this.store.update(task.id, fields.check === '' ? { ...fields, check: undefined } : fields);
  }

  async remove(id: string): Promise<void> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before deleting`, 'task-running');
    await this.store.remove(id);
    await this.checkpoints.clear(id);
  }

  /**
   * What a rollback of the task would undo — its own commits, found in the history — for the
   * confirmation. Nothing changes until `rollback` is called with this plan.
   */
  async planRollback(id: string): Promise<RollbackPlan> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before rolling back`, 'task-running');
    for (const planner of this.planners) {
      const plan = await planner.plan(task);
      if (plan) return plan;
    }
    throw new RalphError(`no way to roll back task ${id}`, 'no-rollback');
  }

  /**
   * Undoes exactly this task's changes (by default: reverts its commits in one new commit,
   * keeping every later commit of other tasks and of the person), then puts the task back to
   * `todo`. When the person confirmed a plan, the rollback is refused if the task's commits
   * changed since. A revert that conflicts or would touch uncommitted work changes nothing
   * (RollbackBlockedError names the files and who changed them).
   */
  async rollback(id: string, confirmed?: RollbackPlan): Promise<RollbackOutcome> {
    const plan = await this.planRollback(id);
    if (confirmed && (confirmed.kind !== plan.kind || confirmed.commits.map((c) => c.sha).join() !== plan.commits.map((c) => c.sha).join())) {
      throw new RalphError(`the commits of task ${id} changed since the rollback was confirmed; nothing was changed, look at it again`, 'rollback-changed');
    }
    const applied = await plan.apply();
    await this.checkpoints.clear(id);
    const task = await this.store.update(id, { status: 'todo', iterations: 0, progress: undefined, lastSignal: undefined, blockedReason: undefined });
    const dependents = (await this.store.list()).filter((t) => t.dependsOn.includes(id) && t.status !== 'todo').map((t) => `${t.id} (${t.status})`);
    const notes = dependents.length > 0 ? ` Tasks that depend on it keep their status: ${dependents.join(', ')}.` : '';
    return { task, plan, applied, message: `${id}: ${applied.summary}. ${id} is back to todo.${notes}` };
  }

  private async expect(id: string, allowed: TaskStatus[], verb: string): Promise<Task> {
    const task = await this.store.get(id);
    if (!allowed.includes(task.status)) throw new RalphError(`task ${id} is ${task.status}; it cannot be ${verb}`, 'invalid-transition');
    return task;
  }
}
