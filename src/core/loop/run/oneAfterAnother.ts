import type { SpendMeter } from '../../spend/budget';
import type { Task, TaskStatus } from '../../tasks/schema';
import { selectNextTask } from '../../tasks/select';
import type { TaskStore } from '../../tasks/store';
import { personActed } from '../person/personWaits';
import { HOLD_ENDS, type RunQuestions } from '../person/runQuestions';
import type { TaskLoop } from '../task/taskLoop';
import type { TaskRunResult } from '../task/types';

/** What the tasks run one after another with (no worktrees). */
export interface InTurn {
  first: Task | undefined;
  only: string | undefined;
  loop: TaskLoop;
  meter: SpendMeter;
  store: TaskStore;
  questions: RunQuestions;
  hold: ReturnType<RunQuestions['hold']>;
}

/**
 * Without worktrees, the ready tasks one after another: until none is ready, the person stops,
 * a run-wide halt (a bad key, a spent quota, a cap), a hold answered Stop, or the one task asked
 * for ends. `stop` is the person's Stop. Each result is added to `results`; says why the run ended and its halt.
 */
export async function oneAfterAnother(
  turn: InTurn,
  stop: AbortSignal,
  results: TaskRunResult[],
  reason: string,
): Promise<{ reason: string; halted?: string }> {
  const { store, questions, hold } = turn;
  const attempted = new Set<string>();
  const endedAs = new Map<string, TaskStatus>();
  let halted: string | undefined;
  let next = turn.first ?? selectNextTask(await store.list(), attempted);
  while (next) {
    attempted.add(next.id);
    const result = await turn.loop.run(next, stop);
    results.push(result);
    endedAs.set(result.taskId, result.status);
    halted = result.runHalt;
    if (stop.aborted) {
      reason = 'stopped by the user';
      return { reason, halted };
    }
    if (turn.only) {
      reason = `task ${next.id} ended ${result.status}`;
      return { reason, halted };
    }
    // a bad key or an exhausted quota would halt every later task the same way; a run-wide cap
    // would halt them at once with nothing done: they stay as they are
    const runStop =
      result.runHalt ?? (result.fault === 'auth' || result.fault === 'quota' ? result.reason : turn.meter.runCapReached()?.message);
    if (runStop) {
      const waiting = (await store.list()).filter((t) => t.status === 'todo').length;
      reason = `${runStop}; the run stopped${waiting > 0 ? ` and ${waiting} task${waiting === 1 ? '' : 's'} not started stay${waiting === 1 ? 's' : ''} todo` : ''}`;
      return { reason, halted };
    }
    const tasks = await store.list();
    // a task the person answered, unblocked or gave more time meanwhile goes on in this run
    for (const id of personActed(endedAs, tasks).reopened) {
      attempted.delete(id);
      endedAs.delete(id);
    }
    next = selectNextTask(tasks, attempted);
    reason = next ? reason : 'no more ready tasks';
    if (next && result.critical) {
      const answer = await questions.criticalHold((taskId) => store.get(taskId))(result.taskId, result.reason);
      if (stop.aborted || answer === 'stop') {
        reason = stop.aborted ? 'stopped by the user' : `stopped after ${result.taskId} halted on a critical security finding`;
        return { reason, halted };
      }
    }
    if (next && hold && HOLD_ENDS.has(result.status)) {
      const answer = await hold(result.taskId, result.status, result.reason);
      if (stop.aborted || answer === 'stop') {
        reason = stop.aborted ? 'stopped by the user' : `stopped after ${result.taskId} ended ${result.status} (semi-auto)`;
        return { reason, halted };
      }
    }
  }
  return { reason, halted };
}
