import type { AskedQuestion } from '../commands/commandQuestions';
import type { IterationRecord } from '../record/checkpoint';
import type { TaskStatus } from '../tasks/schema';

/**
 * What happened after an iteration, as its report says it (seed 003's decision, widened to
 * every end a task can have): the next iteration, the task's end, or its wait for the merge queue.
 */
/** The loop's decision after an iteration (loop/task/completionPolicy.ts decides it): the task's end, or the next iteration. */
export type CompletionDecision =
  | {
      kind: 'finish';
      status: Extract<TaskStatus, 'done' | 'blocked' | 'needs_help' | 'halted'>;
      reason: string;
      notes: string[];
      /** The question a `needs_help` end puts to the person, when it is more than the reason in words. */
      question?: AskedQuestion;
    }
  | { kind: 'continue'; reason: string; feedback: string[]; optionalGatesRetried: string[] };

export type DecisionLabel = 'ITERATE' | 'COMPLETE' | 'HALT' | 'TIMEOUT' | 'STOP' | 'BLOCKED' | 'NEEDS_HELP' | 'QUEUED FOR MERGE';

/**
 * The label an iteration's own result implies: the status its completion decision ended the task
 * with, STOP, or ITERATE. The loop corrects it when the task ends right after for a reason found
 * outside the iteration (max iterations, the timeout, the budget, a stuck loop, a safeguard).
 */
export function iterationLabel(record: IterationRecord, finished: TaskStatus | undefined, awaitingMerge = false): DecisionLabel {
  if (record.outcome === 'stopped') return 'STOP';
  return finished ? finishLabel(finished, false, awaitingMerge) : 'ITERATE';
}

/** The label of the iteration after which the task ended with `status`. */
export function finishLabel(status: TaskStatus, stoppedByUser: boolean, awaitingMerge: boolean): DecisionLabel {
  switch (status) {
    case 'done':
      return awaitingMerge ? 'QUEUED FOR MERGE' : 'COMPLETE';
    case 'timeout':
      return 'TIMEOUT';
    case 'blocked':
      return 'BLOCKED';
    case 'needs_help':
      return 'NEEDS_HELP';
    case 'halted':
      return stoppedByUser ? 'STOP' : 'HALT';
    default:
      return 'HALT';
  }
}

/** Seed 003's final status: COMPLETE, HALTED, or INCOMPLETE for every other end (the task's own status is named beside it). */
export function finalStatusLabel(status: TaskStatus, queued: boolean): 'COMPLETE' | 'INCOMPLETE' | 'HALTED' {
  if (status === 'done' && !queued) return 'COMPLETE';
  return status === 'halted' ? 'HALTED' : 'INCOMPLETE';
}
