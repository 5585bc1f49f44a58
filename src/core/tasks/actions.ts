import { RalphError } from '../errors';
import type { GitService } from '../git/gitService';
import type { CheckpointStore } from '../loop/checkpoint';
import type { Task, TaskStatus } from './schema';
import type { TaskStore } from './store';

/**
 * What a person can do to a task from the tree, the panel or the CLI. Each action checks the
 * task's status first, so a menu shown for a stale tree cannot corrupt the store.
 */
export class TaskActions {
  constructor(
    private readonly store: TaskStore,
    private readonly checkpoints: CheckpointStore,
    private readonly git: GitService,
  ) {}

  /** timeout / failed / halted / cancelled / blocked / needs_help / done → todo with a fresh iteration counter. */
  async retry(id: string): Promise<Task> {
    const task = await this.expect(id, ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done'], 'retried');
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

  async edit(id: string, fields: Partial<Pick<Task, 'title' | 'prompt' | 'promise' | 'priority' | 'maxIterations' | 'allowGateChanges'>>): Promise<Task> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before editing`, 'task-running');
    return this.store.update(task.id, fields);
  }

  async remove(id: string): Promise<void> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before deleting`, 'task-running');
    await this.store.remove(id);
    await this.checkpoints.clear(id);
  }

  /** The commit the working tree would be restored to by `rollback`, for the confirmation. */
  async rollbackTarget(id: string): Promise<string> {
    const checkpoint = await this.checkpoints.load(id);
    if (!checkpoint?.baseCommit) throw new RalphError(`task ${id} has no recorded starting commit to roll back to`, 'no-base-commit');
    return checkpoint.baseCommit;
  }

  /**
   * Restores the working tree to the commit before the task started (`git reset --hard`),
   * and puts the task back to `todo`. The caller confirms with the person first.
   */
  async rollback(id: string): Promise<{ task: Task; commit: string }> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before rolling back`, 'task-running');
    const commit = await this.rollbackTarget(id);
    await this.git.resetHard(commit);
    await this.checkpoints.clear(id);
    const updated = await this.store.update(id, { status: 'todo', iterations: 0, progress: undefined, lastSignal: undefined, blockedReason: undefined });
    return { task: updated, commit };
  }

  private async expect(id: string, allowed: TaskStatus[], verb: string): Promise<Task> {
    const task = await this.store.get(id);
    if (!allowed.includes(task.status)) throw new RalphError(`task ${id} is ${task.status}; it cannot be ${verb}`, 'invalid-transition');
    return task;
  }
}
