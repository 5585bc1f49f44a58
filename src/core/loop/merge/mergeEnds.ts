import type { RalphConfig } from '../../config/schema';
import { errorMessage } from '../../errors';
import type { RalphEventBody } from '../../events';
import { proofLine } from '../../gates/proof';
import { mergeTargetInto } from '../../git/integrate';
import type { WorktreeManager } from '../../git/worktrees';
import { type ReceiptSummary, summarizeReceipt } from '../../spend/receipt';
import type { CheckpointStore } from '../../record/checkpoint';
import type { Task, TaskStatus } from '../../tasks/schema';
import type { TaskStore } from '../../tasks/store';
import { rewriteFinalAfterMerge } from './finalAfterMerge';
import type { MergeOutcome, MergeQueue } from './mergeQueue';
import { handBack, mergeFeedback } from './returnToAgent';
import { runHaltOf } from '../runHalt';
import type { TaskRunResult } from '../task/types';

/**
 * How a task's way through the merge queue ends, for the autopilot: landed (done), given up
 * (needs_help / failed), or sent back to its agent on the new tip. Each step writes the task's
 * status, its final report and its events; the autopilot keeps the schedule and the results.
 */
export interface MergeEndDeps {
  config: RalphConfig;
  store: TaskStore;
  checkpoints: CheckpointStore;
  worktrees: WorktreeManager;
  target: string;
  emit(body: RalphEventBody): void;
}

/** Sets the task's status (the reason kept as `blockedReason` where the status waits for a person) and announces a change. */
export async function setTaskStatus(
  d: Pick<MergeEndDeps, 'store' | 'emit'>,
  taskId: string,
  to: TaskStatus,
  reason: string,
): Promise<Task> {
  const before = await d.store.get(taskId);
  const blockedReason = to === 'needs_help' || to === 'blocked' || to === 'review' ? reason : undefined;
  const task = await d.store.update(taskId, { status: to, blockedReason });
  if (before.status !== to) d.emit({ type: 'task.status', taskId, from: before.status, to, reason });
  return task;
}

/** The task's receipt and proof for its `task.finished` (the agent's loop saved them with the checkpoint). */
export async function taskReceipt(checkpoints: CheckpointStore, taskId: string): Promise<{ receipt?: ReceiptSummary; proof?: string }> {
  const cp = await checkpoints.load(taskId).catch(() => undefined);
  return { ...(cp?.receipt ? { receipt: summarizeReceipt(cp.receipt) } : {}), ...(cp?.proof ? { proof: proofLine(cp.proof) } : {}) };
}

/** The task ends with its merge's outcome: its status, its final report rewritten, `task.finished`; returns its result. */
export async function endAfterMerge(d: MergeEndDeps, outcome: MergeOutcome, status: TaskStatus, reason: string): Promise<TaskRunResult> {
  const { taskId } = outcome;
  const task = await setTaskStatus(d, taskId, status, reason);
  await rewriteFinalAfterMerge(
    { workspace: d.worktrees.root, target: d.target, config: d.config, store: d.store, checkpoints: d.checkpoints, emit: d.emit },
    outcome,
    status,
    reason,
  );
  d.emit({ type: 'task.finished', taskId, status, iterations: task.iterations, reason, ...(await taskReceipt(d.checkpoints, taskId)) });
  return { taskId, status, reason, iterations: task.iterations };
}

/** Removes a merged task's worktree (and its branch if `merge.deleteBranch`); a failure is a warning. */
export function removeMergedWorktree(d: MergeEndDeps, taskId: string): Promise<void> {
  const where = { path: d.worktrees.pathFor(taskId), branch: d.worktrees.branchFor(taskId) };
  return d.worktrees.remove(taskId, { deleteBranch: d.config.merge.deleteBranch }).then(
    () => d.emit({ type: 'worktree', taskId, state: 'removed', ...where }),
    (error) =>
      d.emit({
        type: 'warning',
        taskId,
        code: 'worktree-cleanup',
        message: `merged, but its worktree could not be removed: ${errorMessage(error)}`,
      }),
  );
}

/** Agent ends after which the worktree stays for inspection unless `worktrees.keepFailed` is false. */
const FAILED_ENDS: ReadonlySet<TaskStatus> = new Set(['failed', 'timeout']);

/** An agent ended without COMPLETE: a failed one's worktree goes (`worktrees.keepFailed: false`; its branch keeps the commits), any other stays, and either is announced. */
export async function afterAgentEnd(d: MergeEndDeps, taskId: string, status: TaskStatus): Promise<void> {
  const where = { path: d.worktrees.pathFor(taskId), branch: d.worktrees.branchFor(taskId) };
  if (FAILED_ENDS.has(status) && !d.config.worktrees.keepFailed) {
    await d.worktrees.remove(taskId, { deleteBranch: false }).catch(() => undefined);
    d.emit({ type: 'worktree', taskId, state: 'removed', ...where });
  } else if ((await d.worktrees.list()).some((w) => w.taskId === taskId)) {
    d.emit({ type: 'worktree', taskId, state: 'kept', ...where });
  }
}

/**
 * Back to the agent on the new tip, with what went wrong in its next iteration's context.
 * Returns the task's result when the target could not be brought into its worktree (the task
 * ends there), undefined when it was handed back.
 */
export async function sendBack(d: MergeEndDeps, outcome: MergeOutcome): Promise<TaskRunResult | undefined> {
  const { taskId } = outcome;
  let conflicted: string[];
  try {
    conflicted = await mergeTargetInto(d.worktrees.pathFor(taskId), d.target, taskId, d.worktrees.links);
  } catch (error) {
    const reason = `could not bring ${d.target} into its worktree: ${errorMessage(error)}`;
    // a lock held in its worktree stops the task, resumable; any other git failure fails it
    const status: TaskStatus = runHaltOf(error) !== undefined ? 'halted' : 'failed';
    await setTaskStatus(d, taskId, status, reason);
    return { taskId, status, reason, iterations: (await d.store.get(taskId)).iterations };
  }
  await handBack(d.checkpoints, taskId, mergeFeedback(outcome, d.target, conflicted));
  return undefined;
}

/**
 * An agent's accepted COMPLETE into the merge queue: its check made ahead confirmed, else queued
 * (with its proof). A queue that refuses (e.g. it merged the task already in this run) fails the
 * task rather than stall or merge twice: its result is returned then.
 */
export async function queueCompleted(
  d: Pick<MergeEndDeps, 'store' | 'checkpoints' | 'emit'> & { queue: Pick<MergeQueue, 'isProvisional' | 'confirm' | 'enqueue'> },
  taskId: string,
): Promise<TaskRunResult | undefined> {
  const task = await d.store.get(taskId);
  try {
    const proof = (await d.checkpoints.load(taskId).catch(() => undefined))?.proof;
    const line = proof ? proofLine(proof) : undefined;
    if (d.queue.isProvisional(taskId)) d.queue.confirm(taskId, line);
    else d.queue.enqueue(taskId, task.title, { proof: line, fresh: true });
    return undefined;
  } catch (error) {
    const reason = `could not queue for merge: ${errorMessage(error)}`;
    await setTaskStatus(d, taskId, 'failed', reason);
    return { taskId, status: 'failed', reason, iterations: task.iterations };
  }
}
