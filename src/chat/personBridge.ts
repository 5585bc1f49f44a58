/**
 * What `@ralph /answer` and `/review` act on: the task's open question (its question history,
 * DESIGN §7 `questions`) answered through the same core action as *Answer…* and `ralph task
 * answer`, and the tasks held for the person's review (status `review`).
 */
import type { TaskActions } from '../core/record/actions';
import { openQuestion } from '../core/tasks/questions';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';

export interface WaitingQuestion {
  task: Task;
  question: string;
}

/** Tasks that asked the person something (NEEDS_HELP, a block, a gated command) and wait for the answer. */
export async function waitingQuestions(store: TaskStore): Promise<WaitingQuestion[]> {
  return (await store.list())
    .filter((t) => t.status === 'needs_help' || t.status === 'blocked')
    .map((task) => ({
      task,
      question: openQuestion(task.questions)?.question ?? task.blockedReason ?? '(the agent asked for help without saying what)',
    }));
}

/**
 * Answers a task's question: the answer joins its question history, is pinned in its next
 * iteration's context, and the task is ready again (resumed from its checkpoint, in its worktree
 * in a parallel run). Refused unless it waits.
 */
export function answerQuestion(actions: TaskActions, taskId: string, answer: string): Promise<Task> {
  return actions.answer(taskId, answer);
}

/** Tasks whose finished work waits for the person's review (manual review). */
export async function awaitingReview(store: TaskStore): Promise<Task[]> {
  return (await store.list()).filter((t) => t.status === 'review');
}
