/**
 * What `@ralph /answer` and `/review` act on, in one small module: today a waiting question is
 * the `blockedReason` of a `needs_help` task, answered into its progress notes (which every
 * fresh-context iteration reads) before the task is unblocked; a task awaits review in status
 * `review` (manual review). When the task store keeps questions and reviews of their own, these
 * functions are the one place to re-point.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RalphPaths } from '../core/paths';
import type { TaskActions } from '../core/tasks/actions';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import { writeFileAtomic } from '../core/util/atomicWrite';
import { ensureProgressFile } from '../core/workspace';

export interface WaitingQuestion {
  task: Task;
  question: string;
}

/** Tasks that asked the person something (NEEDS_HELP) and wait for the answer. */
export async function waitingQuestions(store: TaskStore): Promise<WaitingQuestion[]> {
  return (await store.list()).filter((t) => t.status === 'needs_help').map((task) => ({ task, question: task.blockedReason ?? '(the agent asked for help without saying what)' }));
}

/**
 * Answers a task's question: the question and the answer go into its progress notes (in its
 * worktree when it has one), then the
 * task is unblocked (it resumes from its checkpoint at the next run). Refused unless it waits.
 */
export async function answerQuestion(paths: RalphPaths, store: TaskStore, actions: TaskActions, taskId: string, answer: string): Promise<Task> {
  const task = await store.get(taskId);
  if (task.status !== 'needs_help') throw new Error(`${taskId} is ${task.status}; it asked nothing that waits for an answer`);
  // a parallel task keeps its notes in its worktree: the answer goes where its next iteration reads
  const kept = await actions.worktreeOf(taskId);
  const where = kept ? new RalphPaths(kept.path) : paths;
  const notes = await ensureProgressFile(where, task);
  const file = where.progress(task.id);
  await fs.mkdir(path.dirname(file), { recursive: true });
  const entry = `\n## Answer from the person (${new Date().toISOString()})\n\n**Question:** ${task.blockedReason ?? '(none given)'}\n\n**Answer:** ${answer.trim()}\n`;
  await writeFileAtomic(file, `${notes.trimEnd()}\n${entry}`);
  return actions.unblock(taskId);
}

/** Tasks whose finished work waits for the person's review (manual review). */
export async function awaitingReview(store: TaskStore): Promise<Task[]> {
  return (await store.list()).filter((t) => (t.status as string) === 'review');
}
