import { openQuestion } from '../../tasks/questions';
import type { RunOutcome } from '../../events';
import type { Task, TaskStatus } from '../../tasks/schema';

const FAILED: ReadonlySet<TaskStatus> = new Set(['failed', 'timeout', 'halted', 'cancelled']);

/** The outcome of the tasks a run ended (each task's last result), read with the store as it is now. */
export function summarizeRun(
  results: readonly { taskId: string; status: TaskStatus; reason: string; waitsToLand?: string[] }[],
  tasks: readonly Task[],
): RunOutcome {
  const last = new Map(results.map((r) => [r.taskId, r]));
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const outcome: RunOutcome = { done: [], questions: [], reviews: [], failed: [] };
  for (const [taskId, result] of last) {
    // the store wins: a task answered or approved meanwhile is counted as it is now
    const task = byId.get(taskId);
    const status = task?.status ?? result.status;
    if (status === 'done') outcome.done.push(taskId);
    else if (status === 'review') outcome.reviews.push(taskId);
    else if (status === 'needs_help' || status === 'blocked')
      outcome.questions.push({ taskId, question: openQuestion(task?.questions)?.question ?? task?.blockedReason ?? result.reason });
    else if (FAILED.has(status)) outcome.failed.push({ taskId, status, reason: result.reason });
    else if (status === 'in_progress' && result.waitsToLand)
      (outcome.landing ??= []).push({ taskId, files: result.waitsToLand, reason: result.reason });
  }
  return outcome;
}

/** `3 done · 2 need you (1 question, 1 to review) · 1 failed`. */
export function runOutcomeLine(o: RunOutcome): string {
  const needs = o.questions.length + o.reviews.length;
  const parts = [`${o.done.length} done`];
  if (needs > 0) {
    const what = [
      o.questions.length ? `${o.questions.length} question${o.questions.length === 1 ? '' : 's'}` : '',
      o.reviews.length ? `${o.reviews.length} to review` : '',
    ]
      .filter(Boolean)
      .join(', ');
    parts.push(`${needs} need${needs === 1 ? 's' : ''} you (${what})`);
  }
  if (o.landing?.length) parts.push(`${o.landing.length} checked, waiting to land`);
  if (o.failed.length > 0) parts.push(`${o.failed.length} failed, timed out or halted`);
  return parts.join(' · ');
}
