import type { Task } from './schema';

/** What the task says, in its own words: a failure it names is its to fix (see `gates/baseVerdict.ts`). */
export function taskWords(task: Pick<Task, 'title' | 'prompt' | 'promise'> & { check?: string }): string {
  return [task.title, task.prompt, task.promise, task.check ?? ''].join('\n');
}
