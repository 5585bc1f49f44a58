import { randomBytes } from 'node:crypto';
import type { RalphConfig } from '../config/schema';
import { LockError, RalphError } from '../errors';
import type { RalphEventBody } from '../events';
import type { GateRunner } from '../gates/types';
import { runGit } from '../git/gitExec';
import { mergeTargetInto } from '../git/integrate';
import { WorktreeManager } from '../git/worktrees';
import type { CheckpointStore } from '../record/checkpoint';
import type { MergeOutcome } from '../loop/merge/mergeQueue';
import { createMergeQueue } from '../loop/merge/mergeQueueFactory';
import { handBack, mergeFeedback } from '../loop/merge/returnToAgent';
import { RunLock } from '../loop/run/runLock';
import type { RalphPaths } from '../paths';
import { withAnswer } from '../tasks/questions';
import type { Task } from '../tasks/schema';
import type { TaskStore } from '../tasks/store';
import type { ReviewHold } from '../record/holdSchema';
import { ReviewHolds } from './reviewHolds';
import { type TaskChanges, taskChanges } from './taskChanges';

export interface ReviewDeskDeps {
  paths: RalphPaths;
  config: RalphConfig;
  store: TaskStore;
  checkpoints: CheckpointStore;
  /** Runs the required gates in the merge worktree when an approval must re-check (the target moved since). */
  gates(mergeWorktree: string): GateRunner;
  emit?(body: RalphEventBody): void;
}

/** A task held for review, with what was checked. */
export interface ReviewItem {
  task: Task;
  hold?: ReviewHold;
}

export type ApproveOutcome =
  /** Landed on the target (as checked, or re-checked on the moved tip); the task is done. */
  | { kind: 'landed'; commit: string; message: string }
  /** A run holds the workspace: it lands the approved task (or the next run does). */
  | { kind: 'queued'; message: string }
  /** The person's own uncommitted files are in the way: still waiting for review, files named. */
  | { kind: 'waiting'; files: string[]; message: string }
  /** Merged again onto a moved tip it conflicts, or the re-check is red: back to its agent. */
  | { kind: 'returned'; message: string };

/** A comment the person left on a line of the diff (Request Changes). */
export interface LineComment {
  file: string;
  line: number;
  text: string;
}

/**
 * Manual review (DESIGN §7, status `review`): the list, the changes, and the three answers.
 * Approve works with no run going: it takes the run lock and lands the held result itself —
 * as checked while the target has not moved, else merged and checked again on the new tip.
 * When a run holds the workspace, the approval is recorded (the task back to `in_progress`
 * with its hold approved) and that run's queue lands it.
 */
export class ReviewDesk {
  private readonly holds: ReviewHolds;

  constructor(private readonly d: ReviewDeskDeps) {
    this.holds = new ReviewHolds({ config: d.config, store: d.store, checkpoints: d.checkpoints, root: d.paths.workspace });
  }

  async list(): Promise<ReviewItem[]> {
    const tasks = (await this.d.store.list()).filter((t) => t.status === 'review');
    return Promise.all(tasks.map(async (task) => ({ task, hold: await this.holds.get(task.id) })));
  }

  /** Exactly what would land (review), what landed (done) or what its worktree holds (any other task). */
  async changes(id: string): Promise<TaskChanges> {
    const task = await this.d.store.get(id);
    const hold = await this.holds.get(id);
    return taskChanges(this.d.paths.workspace, task, { target: hold?.target ?? (await this.target()), hold });
  }

  /**
   * `runInProgress`: the caller's own process runs the workspace (the editor's run): the
   * approval is recorded for that run's queue without touching the run lock it holds.
   */
  async approve(id: string, options: { runInProgress?: boolean } = {}): Promise<ApproveOutcome> {
    const task = await this.expectReview(id);
    const hold = await this.holds.get(id);
    if (!hold)
      throw new RalphError(
        `task ${id} waits for review, but its checked result is not recorded (.ralph/state/${id}.json); retry it`,
        'no-review-hold',
      );
    let lock: RunLock | undefined;
    if (!options.runInProgress) {
      try {
        lock = await RunLock.acquire(this.d.paths, `review-${id}-${randomBytes(3).toString('hex')}`);
      } catch (error) {
        if (!(error instanceof LockError)) throw error;
      }
    }
    await this.holds.approve(id);
    await this.d.store.update(id, { status: 'in_progress', blockedReason: undefined });
    if (!lock)
      return { kind: 'queued', message: `${id} is approved; the run in progress lands it (re-checked if ${hold.target} moved since)` };
    try {
      return await this.land(task, hold);
    } finally {
      await lock.release();
    }
  }

  /** Back to its agent, with `feedback` (and the line comments) pinned in its next context. */
  async requestChanges(id: string, feedback: string, comments: readonly LineComment[] = []): Promise<Task> {
    const task = await this.expectReview(id);
    const text = [
      feedback.trim(),
      ...(comments.length > 0 ? ['On the diff:', ...comments.map((c) => `- ${c.file}:${c.line}: ${c.text.trim()}`)] : []),
    ]
      .filter(Boolean)
      .join('\n');
    if (!text) throw new RalphError('say what to change (the feedback is empty)', 'invalid-answer');
    const questions = withAnswer(task.questions, {
      kind: 'review',
      question: 'Review of the finished work',
      text,
      at: new Date().toISOString(),
    });
    await handBack(this.d.checkpoints, id, [
      'Review: a person looked at your finished work and asked for changes (the review feedback is pinned above). Make them in this worktree, then signal COMPLETE again.',
    ]);
    await this.holds.release(id);
    const checkpoint = await this.d.checkpoints.load(id);
    return this.d.store.update(id, { status: checkpoint ? 'halted' : 'todo', blockedReason: undefined, questions });
  }

  /** Drops the held result, the task's branch and its worktree (like Rollback of an unmerged task); the task is cancelled. */
  async reject(id: string): Promise<Task> {
    await this.expectReview(id);
    await this.holds.release(id);
    const manager = new WorktreeManager(this.d.paths.workspace);
    if ((await manager.list()).some((w) => w.taskId === id) || (await manager.branches()).has(id))
      await manager.remove(id, { deleteBranch: true });
    await this.d.checkpoints.clear(id);
    return this.d.store.update(id, {
      status: 'cancelled',
      blockedReason: 'rejected in review: its branch and worktree were dropped (Retry starts it over)',
    });
  }

  /** Lands an approved hold with the run lock held: the merge queue, for this one task. */
  private async land(task: Task, hold: ReviewHold): Promise<ApproveOutcome> {
    const worktrees = new WorktreeManager(this.d.paths.workspace, this.d.config.worktrees.link);
    // the same queue as a run's (one factory): its chain rules, the task's own check, `Closes #N` in its commit
    const queue = createMergeQueue({
      config: this.d.config,
      store: this.d.store,
      workspace: this.d.paths.workspace,
      worktrees,
      gates: this.d.gates(worktrees.mergePath),
      target: hold.target,
      emit: this.d.emit,
    });
    queue.enqueue(task.id, task.title, { checked: { base: hold.base, result: hold.result, gates: hold.gates } });
    let outcome: MergeOutcome | undefined;
    try {
      for (let tries = 0; tries < 3 && !outcome; tries++) outcome = await queue.processNext();
    } finally {
      await queue.idle();
      await worktrees.removeMergeWorktree().catch(() => undefined);
    }
    if (!outcome || outcome.state === 'waiting' || outcome.state === 'review') {
      const files = outcome?.files ?? [];
      const why = outcome?.detail ?? `${hold.target} kept moving during the check`;
      await this.d.store.update(task.id, { status: 'review', blockedReason: why });
      return { kind: 'waiting', files, message: `${task.id} is approved but did not land: ${why}; approve it again once that is settled` };
    }
    if (outcome.state === 'merged') {
      await this.holds.release(task.id);
      await this.d.store.update(task.id, { status: 'done', blockedReason: undefined });
      await worktrees.remove(task.id, { deleteBranch: this.d.config.merge.deleteBranch }).catch(() => undefined);
      return {
        kind: 'landed',
        commit: outcome.commit ?? '',
        message: `${task.id} landed: ${outcome.detail ?? `merged into ${hold.target}`}`,
      };
    }
    // merged again onto a moved tip it conflicts, or the re-check is red: the agent makes both work together
    const conflicted = await mergeTargetInto(worktrees.pathFor(task.id), hold.target, task.id, worktrees.links).catch(() => [] as string[]);
    await handBack(this.d.checkpoints, task.id, mergeFeedback(outcome, hold.target, conflicted));
    await this.holds.release(task.id);
    await this.d.store.update(task.id, {
      status: 'halted',
      blockedReason: `approved, but ${outcome.detail ?? 'the merge failed'}; back to its agent`,
    });
    return {
      kind: 'returned',
      message: `${task.id} did not land: ${outcome.detail ?? outcome.state}. It goes back to its agent with that (the next Start resumes it)`,
    };
  }

  private async expectReview(id: string): Promise<Task> {
    const task = await this.d.store.get(id);
    if (task.status !== 'review')
      throw new RalphError(`task ${id} is ${task.status}; only a task waiting for review can be reviewed`, 'invalid-transition');
    return task;
  }

  private async target(): Promise<string> {
    if (this.d.config.merge.targetBranch) return this.d.config.merge.targetBranch;
    const head = await runGit(this.d.paths.workspace, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
    return head.code === 0 ? head.stdout.trim() : 'HEAD';
  }
}
