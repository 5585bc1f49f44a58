import { errorMessage } from '../../errors';
import { proofLine } from '../../gates/proof';
import type { ReviewHolds } from '../../review/reviewHolds';
import { remoteActive } from '../../tasks/remote';
import type { Task, TaskStatus } from '../../tasks/schema';
import { type MergeEndDeps, setTaskStatus, taskReceipt } from '../merge/mergeEnds';
import type { MergeOutcome, MergeQueue } from '../merge/mergeQueue';
import type { PersonWaits } from '../person/personWaits';
import { HOLD_ENDS } from '../person/runQuestions';
import type { SchedulerState } from './scheduler';
import type { TaskRunResult } from '../task/types';

/**
 * The autopilot's person-in-the-loop side: what a run takes up again that waited for the person,
 * the checked results it holds for their review, the approvals it queues, and whom it asks
 * before another agent starts. The autopilot keeps the schedule, the results and the hold.
 */
export interface PersonSideDeps extends MergeEndDeps {
  queue: MergeQueue;
  /**
   * Semi-auto mode: a task ended blocked, needs_help or timeout while other tasks could start;
   * no new agent starts until this answers (`stop`: none starts any more; running ones go on).
   */
  hold?(taskId: string, status: TaskStatus, reason: string): Promise<'continue' | 'stop'>;
  /** Where results held for a person's review are kept (`merge.review` manual; a merge that waited too long on the person's files). */
  holds?: ReviewHolds;
  /** A task halted on a critical security finding: in any mode, no new agent starts until this answers. */
  criticalHold?(taskId: string, reason: string): Promise<'continue' | 'stop'>;
  /** Nobody to ask (`RunnerDeps.unattended`): a landing the person's own files are in the way of ends at once. */
  unattended?: boolean;
}

type Ask = (taskId: string, status: TaskStatus, reason: string) => Promise<'continue' | 'stop'>;

/**
 * Puts tasks back in the queue whose agent had finished but whose merge had not, and takes up
 * tasks an earlier run held for review (approved or sent back while this one runs, they go on).
 * Returns the schedule with them.
 */
export async function takeUpUnfinished(
  d: PersonSideDeps,
  person: PersonWaits,
  tasks: readonly Task[],
  schedule: SchedulerState,
  wanted: (taskId: string) => boolean,
): Promise<SchedulerState> {
  for (const task of tasks.filter((t) => t.status === 'in_progress' && wanted(t.id) && !remoteActive(t.remote))) {
    const cp = await d.checkpoints.load(task.id).catch(() => undefined);
    if (cp?.phase === 'between' && cp.history.at(-1)?.outcome === 'complete') {
      schedule = { ...schedule, merging: [...schedule.merging, task.id] };
      // approved while no run held the workspace: it lands as checked while the target has not moved
      d.queue.enqueue(task.id, task.title, {
        checked: cp.review?.approvedAt ? { base: cp.review.base, result: cp.review.result, gates: cp.review.gates } : undefined,
        proof: cp.proof ? proofLine(cp.proof) : undefined,
      });
    }
  }
  for (const task of tasks.filter((t) => t.status === 'review' && wanted(t.id))) {
    schedule = { ...schedule, reviewing: [...(schedule.reviewing ?? []), task.id] };
    person.ended(task.id, 'review');
  }
  return schedule;
}

/** Keep on Its Branch: the waiting merge stops waiting; its checked result, if the queue held it, is returned to be held for the person. */
export function keepOnItsBranch(d: PersonSideDeps, taskId: string): MergeOutcome | undefined {
  return d.queue.holdWaiting(
    taskId,
    `kept on its branch at your request: its checked result waits for you (approve it to land it, or merge ${d.worktrees.branchFor(taskId)} yourself)`,
  );
}

/** Past `merge.waitForUserMinutes` a merge waiting on the person's files stops waiting: its checked result, if held, is returned. */
export function stopWaitingForFiles(d: PersonSideDeps, outcome: MergeOutcome): MergeOutcome | undefined {
  const files = outcome.files?.length ? outcome.files.join(', ') : 'files the merge touches';
  return d.queue.holdWaiting(
    outcome.taskId,
    `waited ${d.config.merge.waitForUserMinutes} min (merge.waitForUserMinutes) for your uncommitted changes to ${files}; its checked result waits for you: commit or stash them, then approve it (or merge ${d.worktrees.branchFor(outcome.taskId)} yourself)`,
  );
}

/** The one command that lands a task left waiting to land once the files in its way are moved. */
export function landCommand(taskId: string): string {
  return `ralph run --task ${taskId}`;
}

/** How the reason of a task left waiting to land begins (its `blockedReason`, while it stays `in_progress`). */
export const WAITS_TO_LAND = 'waits to land: ';

/** A task an unattended run left checked and waiting to land (the person's files were in the way). */
export function waitsToLand(task: { status: string; blockedReason?: string }): boolean {
  return task.status === 'in_progress' && task.blockedReason?.startsWith(WAITS_TO_LAND) === true;
}

/**
 * Unattended, a merge the person's own files are in the way of ends its landing at once: nobody
 * is there to move them, and waiting would only hold the run. Nothing is lost and nothing of
 * theirs is touched: the checked result is kept as an approved hold (it was landing: no review is
 * due), the task stays `in_progress` — checked, waiting to land, its agent finished — with the
 * files named, and the next run lands it (as checked while the target has not moved) without its
 * agent. Undefined when the queue kept no checked result (the merge then waits as attended).
 */
export async function landLater(d: PersonSideDeps, outcome: MergeOutcome): Promise<TaskRunResult | undefined> {
  const { taskId } = outcome;
  const files = outcome.files ?? [];
  const named = files.length ? files.join(', ') : 'files the merge touches';
  const reason = `${WAITS_TO_LAND}your uncommitted changes to ${named} are in the way (the merge would overwrite them) and nobody was there to move them (an unattended run); its checked result is kept: move, commit or stash them, and the next run lands it`;
  if (!d.holds) return undefined;
  const held = d.queue.holdWaiting(taskId, reason);
  if (!held?.base || !held.result) return undefined;
  await d.holds.hold(taskId, { target: d.target, base: held.base, result: held.result, gates: held.gates ?? [], reason, files });
  await d.holds.approve(taskId);
  const task = await d.store.update(taskId, { status: 'in_progress', blockedReason: reason });
  d.emit({ type: 'warning', taskId, code: 'landing-waits', message: `${taskId} ${reason} (${landCommand(taskId)})` });
  return { taskId, status: 'in_progress', reason, iterations: task.iterations, waitsToLand: files };
}

/** A landed task's hold (an approved review, a landing that waited for the person's files) is over: the checkpoint forgets it, its ref goes. */
export async function releaseHold(d: PersonSideDeps, taskId: string): Promise<void> {
  if (d.holds && (await d.holds.get(taskId))) await d.holds.release(taskId);
}

/** The queue holds a checked result for the person: the task waits as `review` until they approve it. Returns its result. */
export async function holdForReview(d: PersonSideDeps, outcome: MergeOutcome): Promise<TaskRunResult> {
  const { taskId } = outcome;
  const reason = outcome.detail ?? 'waits for your review';
  if (outcome.base && outcome.result)
    await d.holds?.hold(taskId, {
      target: d.target,
      base: outcome.base,
      result: outcome.result,
      gates: outcome.gates ?? [],
      reason,
      ...(outcome.files?.length ? { files: outcome.files } : {}),
    });
  const task = await setTaskStatus(d, taskId, 'review', reason);
  d.emit({
    type: 'task.finished',
    taskId,
    status: 'review',
    iterations: task.iterations,
    reason,
    ...(await taskReceipt(d.checkpoints, taskId)),
  });
  return { taskId, status: 'review', reason, iterations: task.iterations };
}

/** Approved reviews go to the queue (to land as checked while the target has not moved); returns the ones it refused, with a warning each. */
export async function queueApproved(d: PersonSideDeps, approved: readonly string[]): Promise<string[]> {
  const refused: string[] = [];
  for (const taskId of approved) {
    const [task, hold] = await Promise.all([d.store.get(taskId), d.holds?.get(taskId)]);
    try {
      d.queue.enqueue(taskId, task.title, { checked: hold ? { base: hold.base, result: hold.result, gates: hold.gates } : undefined });
    } catch (error) {
      d.emit({
        type: 'warning',
        taskId,
        code: 'review-approve',
        message: `approved, but it could not be queued: ${errorMessage(error)}`,
      });
      refused.push(taskId);
    }
  }
  return refused;
}

/** Whom to ask after an agent's end: the critical-finding hold in any mode, the semi-auto hold after blocked / needs_help / timeout; else nobody. */
export function askAfter(d: PersonSideDeps, result: TaskRunResult): Ask | undefined {
  if (result.critical && d.criticalHold) return (id, _s, why) => d.criticalHold!(id, why);
  return HOLD_ENDS.has(result.status) ? d.hold : undefined;
}

/** The person's answer; a stop ends the wait whether or not the question was answered, and a question that fails is a stop. */
export function answerOrStop(question: Promise<'continue' | 'stop'>, stop: AbortSignal): Promise<'continue' | 'stop'> {
  const stopped = new Promise<'stop'>((resolve) => stop.addEventListener('abort', () => resolve('stop'), { once: true }));
  return Promise.race([question, stopped]).catch(() => 'stop' as const);
}
