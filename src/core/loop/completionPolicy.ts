import type { Signal } from '../signals/types';
import type { TaskStatus } from '../tasks/schema';

export interface CompletionInput {
  /** The decisive signal of the iteration, if the agent gave one. */
  signal: Signal | undefined;
  /** The iteration failed (API error after retries, crash of a tool run). */
  errored: boolean;
}

export type CompletionDecision =
  | { kind: 'finish'; status: Extract<TaskStatus, 'done' | 'blocked' | 'needs_help'>; reason: string }
  | { kind: 'continue'; reason: string; feedback: string[] };

/**
 * The one place that decides whether a task is finished after an iteration.
 * Walking skeleton rule: COMPLETE → done; BLOCKED → blocked; NEEDS_HELP → needs_help;
 * anything else → another iteration. The quality-gates work extends this with gate results.
 */
export function decideCompletion(input: CompletionInput): CompletionDecision {
  const { signal } = input;
  if (signal?.kind === 'BLOCKED') return { kind: 'finish', status: 'blocked', reason: signal.reason };
  if (signal?.kind === 'NEEDS_HELP') return { kind: 'finish', status: 'needs_help', reason: signal.question };
  if (signal?.kind === 'COMPLETE') {
    if (input.errored) {
      return {
        kind: 'continue',
        reason: 'COMPLETE signalled, but the iteration ended with an error',
        feedback: ['You signalled COMPLETE, but the iteration ended with an error; verify the work and signal again.'],
      };
    }
    return { kind: 'finish', status: 'done', reason: signal.summary ?? 'the agent signalled COMPLETE' };
  }
  if (input.errored) return { kind: 'continue', reason: 'the iteration ended with an error', feedback: [] };
  return {
    kind: 'continue',
    reason: 'no completion signal',
    feedback: ['The previous iteration ended without a completion signal. When the promise is met, call ralph_complete.'],
  };
}
