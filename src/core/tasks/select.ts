import { remoteActive } from './remote';
import type { Task } from './schema';

/**
 * The next task the autopilot should work on: an interrupted task (`in_progress`, left by a
 * crash) first, so a restarted run resumes it; otherwise the ready task (`todo`, or `halted`:
 * stopped, unblocked or answered, resumed from its checkpoint) with every dependency `done`
 * and the lowest priority number (ties: oldest first).
 */
export function selectNextTask(tasks: readonly Task[], exclude: ReadonlySet<string> = new Set()): Task | undefined {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  // a task the forge runs (a CI job, its pull request in the merge queue) is not this machine's to start
  const candidates = tasks.filter((t) => !exclude.has(t.id) && !remoteActive(t.remote));
  const interrupted = candidates.filter((t) => t.status === 'in_progress').sort(byPriority);
  if (interrupted.length > 0) return interrupted[0];
  return candidates.filter((t) => READY.has(t.status) && dependenciesDone(t, byId)).sort(byPriority)[0];
}

/**
 * Statuses a run starts a task from by itself: `todo`, and `halted` — a task a person stopped,
 * unblocked or answered keeps its work and is resumed, never silently skipped (Cancel gives up).
 */
export const READY: ReadonlySet<Task['status']> = new Set(['todo', 'halted']);

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

/** Why a `todo` task can never become ready, or what it waits on. */
export interface DependencyBlock {
  taskId: string;
  /** `invalid`: a cycle, itself or a missing id — no run can ever start it; `waiting`: a dependency is not done. */
  kind: 'invalid' | 'waiting';
  message: string;
}

/**
 * What keeps each `todo` task from being ready: a dependency on itself, on an id not in the
 * store, a cycle (named in full), a dependency that can itself never start, or one that is not
 * done yet. Tasks with every dependency done are not listed.
 */
export function dependencyBlocks(tasks: readonly Task[]): Map<string, DependencyBlock> {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const invalid = new Map<string, string>();
  const visiting: string[] = [];
  const settled = new Set<string>();

  const visit = (id: string): void => {
    if (settled.has(id)) return;
    const task = byId.get(id);
    if (!task) return;
    visiting.push(id);
    for (const dep of task.dependsOn) {
      if (dep === id) {
        setOnce(invalid, id, `${id} depends on itself`);
        continue;
      }
      if (!byId.has(dep)) {
        setOnce(invalid, id, `${id} depends on ${dep}, which is not in .ralph/tasks.json`);
        continue;
      }
      const at = visiting.indexOf(dep);
      if (at >= 0) {
        const cycle = [...visiting.slice(at), dep];
        for (const member of cycle.slice(0, -1)) setOnce(invalid, member, `dependency cycle ${cycle.join(' → ')}`);
        continue;
      }
      visit(dep);
      if (invalid.has(dep) && byId.get(dep)?.status !== 'done')
        setOnce(invalid, id, `${id} waits on ${dep}, which can never start (${invalid.get(dep)})`);
    }
    visiting.pop();
    settled.add(id);
  };
  for (const task of tasks) visit(task.id);

  const blocks = new Map<string, DependencyBlock>();
  for (const task of tasks.filter((t) => t.status === 'todo')) {
    const reason = invalid.get(task.id);
    if (reason) {
      blocks.set(task.id, { taskId: task.id, kind: 'invalid', message: reason });
      continue;
    }
    const pending = pendingDependencies(task, tasks);
    if (pending.length > 0) {
      const states = pending.map((dep) => `${dep} (${byId.get(dep)?.status ?? 'missing'})`);
      blocks.set(task.id, { taskId: task.id, kind: 'waiting', message: `${task.id} waits on ${states.join(', ')}` });
    }
  }
  return blocks;
}

function setOnce(map: Map<string, string>, key: string, value: string): void {
  if (!map.has(key)) map.set(key, value);
}
