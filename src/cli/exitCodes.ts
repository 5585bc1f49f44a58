import type { TaskStatus } from '../core/tasks/schema';

/** The exit codes of `ralph`. */
export const EXIT = { ok: 0, failed: 1, usage: 2, attention: 3 } as const;

/** 1 beats 3 beats 0: a failure is the more urgent news; a task waiting to land (`waitingToLand`) waits for the person, as a question does. */
export function exitCodeFor(statuses: readonly TaskStatus[], waitingToLand = 0): number {
  if (statuses.some((s) => s === 'failed' || s === 'timeout' || s === 'halted' || s === 'cancelled')) return EXIT.failed;
  if (waitingToLand > 0 || statuses.some((s) => s === 'blocked' || s === 'needs_help' || s === 'review')) return EXIT.attention;
  return EXIT.ok;
}
