import type { Task } from './schema';

/**
 * The next task the autopilot should work on: an interrupted task (`in_progress`, left by a
 * crash) first, so a restarted run resumes it; otherwise the `todo` task with every dependency
 * `done` and the lowest priority number (ties: oldest first).
 */
export function selectNextTask(tasks: readonly Task[], exclude: ReadonlySet<string> = new Set()): Task | undefined {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const candidates = tasks.filter((t) => !exclude.has(t.id));
  const interrupted = candidates.filter((t) => t.status === 'in_progress').sort(byPriority);
  if (interrupted.length > 0) return interrupted[0];
  return candidates.filter((t) => t.status === 'todo' && dependenciesDone(t, byId)).sort(byPriority)[0];
}

export function dependenciesDone(task: Task, byId: ReadonlyMap<string, Task>): boolean {
  return task.dependsOn.every((id) => byId.get(id)?.status === 'done');
}

/** Dependencies of `task` that are not done yet, for "why is this not running" messages. */
export function pendingDependencies(task: Task, tasks: readonly Task[]): string[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return task.dependsOn.filter((id) => byId.get(id)?.status !== 'done');
}

function byPriority(a: Task, b: Task): number {
  return a.priority - b.priority || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}
