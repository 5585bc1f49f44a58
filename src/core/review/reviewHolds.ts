import type { RalphConfig } from '../config/schema';
import { runGit } from '../git/gitExec';
import type { CheckpointStore } from '../record/checkpoint';
import type { TaskStore } from '../tasks/store';
import { type ReviewHold, reviewRef } from '../record/holdSchema';

export { reviewRef };

/** `merge.review` for one task: its own setting wins over the configuration's. */
export function reviewMode(config: Pick<RalphConfig, 'merge'>, task: { review?: 'auto' | 'manual' } | undefined): 'auto' | 'manual' {
  return task?.review ?? config.merge.review;
}

/**
 * Where held results are kept: the task's checkpoint (`review`) and a ref on the commit. The
 * merge queue asks `wanted` before it lands a checked result — the one question the queue puts
 * to the review side — and the autopilot records the hold; Approve, Request Changes and
 * Reject (with or without a run) read and clear it.
 */
export class ReviewHolds {
  constructor(
    private readonly deps: { config: Pick<RalphConfig, 'merge'>; store: TaskStore; checkpoints: CheckpointStore; root: string },
  ) {}

  /** Whether a checked result of this task must wait for a person: manual review, not approved yet. */
  async wanted(taskId: string): Promise<boolean> {
    const task = await this.deps.store.get(taskId).catch(() => undefined);
    if (reviewMode(this.deps.config, task) !== 'manual') return false;
    return !(await this.get(taskId))?.approvedAt;
  }

  async get(taskId: string): Promise<ReviewHold | undefined> {
    return (await this.deps.checkpoints.load(taskId).catch(() => undefined))?.review;
  }

  /** Records the held result (checkpoint + ref); the caller sets the task's status. */
  async hold(taskId: string, hold: Omit<ReviewHold, 'heldAt'>): Promise<ReviewHold> {
    const held: ReviewHold = { ...hold, heldAt: new Date().toISOString() };
    await runGit(this.deps.root, ['update-ref', '-m', 'ralph: held for review', reviewRef(taskId), hold.result]);
    const cp = await this.deps.checkpoints.load(taskId);
    if (cp) await this.deps.checkpoints.save({ ...cp, review: held, updatedAt: held.heldAt });
    return held;
  }

  /** Approve: the hold stays (its result lands as checked while the target has not moved) and is marked approved. */
  async approve(taskId: string): Promise<ReviewHold | undefined> {
    const cp = await this.deps.checkpoints.load(taskId);
    if (!cp?.review) return undefined;
    const review = { ...cp.review, approvedAt: new Date().toISOString() };
    await this.deps.checkpoints.save({ ...cp, review, updatedAt: review.approvedAt });
    return review;
  }

  /** The hold is over (landed, sent back, rejected): the checkpoint forgets it and the ref goes. */
  async release(taskId: string): Promise<void> {
    await runGit(this.deps.root, ['update-ref', '-d', reviewRef(taskId)]);
    const cp = await this.deps.checkpoints.load(taskId).catch(() => undefined);
    if (cp?.review) await this.deps.checkpoints.save({ ...cp, review: undefined, updatedAt: new Date().toISOString() });
  }
}
