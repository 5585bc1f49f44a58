import { RalphError } from '../../errors';
import type { NewTask, Task, TaskType } from '../../tasks/schema';
import type { TaskStore } from '../../tasks/store';
import { dependencyOrder, findCycle } from '../cycles';
import type { PlanDraft, PlannedTask } from './planSchema';

/**
 * What a person can do to a proposed plan before accepting it (the editor's review, the CLI's
 * saved draft): edit a task, drop it, move it, merge two. Each returns a new draft; none
 * touches the task store.
 */

export type PlannedTaskEdit = Partial<Pick<PlannedTask, 'title' | 'prompt' | 'promise' | 'check' | 'type' | 'complexity' | 'dependsOn'>>;

/** A plan that cannot be accepted as it is; `problems` says why, naming the tasks. */
export class PlanRefusedError extends RalphError {
  constructor(readonly problems: string[]) {
    super(`the plan cannot be accepted: ${problems.join('; ')}; nothing was saved`, 'plan-refused');
  }
}

function at(draft: PlanDraft, key: string): number {
  const index = draft.tasks.findIndex((t) => t.key === key);
  if (index < 0) throw new RalphError(`the plan has no task "${key}"`, 'plan-task-not-found');
  return index;
}

export function editPlannedTask(draft: PlanDraft, key: string, edit: PlannedTaskEdit): PlanDraft {
  const index = at(draft, key);
  const current = draft.tasks[index];
  // a field left out (or undefined) is not edited
  const given = Object.fromEntries(Object.entries(edit).filter(([, value]) => value !== undefined)) as PlannedTaskEdit;
  const next: PlannedTask = { ...current, ...given };
  // an empty check means "no check command"
  if (edit.check !== undefined && edit.check.trim() === '') delete next.check;
  if (given.dependsOn) next.dependsOn = [...new Set(given.dependsOn.filter((d) => d !== key))];
  return { ...draft, tasks: draft.tasks.map((t, i) => (i === index ? next : t)) };
}

/** Drops a task; the tasks that depended on it lose that dependency and say so. */
export function dropPlannedTask(draft: PlanDraft, key: string): PlanDraft {
  const dropped = draft.tasks[at(draft, key)];
  return {
    ...draft,
    tasks: draft.tasks
      .filter((t) => t.key !== key)
      .map((t) =>
        t.dependsOn.includes(key)
          ? {
              ...t,
              dependsOn: t.dependsOn.filter((d) => d !== key),
              notes: [...t.notes, `depended on "${dropped.title}", which was dropped from the plan`],
            }
          : t,
      ),
  };
}

/** Moves a task to position `to` (0-based, clamped): the order is the order tasks run in when nothing else decides. */
export function movePlannedTask(draft: PlanDraft, key: string, to: number): PlanDraft {
  const from = at(draft, key);
  const tasks = [...draft.tasks];
  const [task] = tasks.splice(from, 1);
  tasks.splice(Math.max(0, Math.min(to, tasks.length)), 0, task);
  return { ...draft, tasks };
}

/**
 * Merges task `other` into task `into` (kept where `into` is): titles, requests and promises
 * joined, checks chained, dependencies united; tasks that depended on `other` now depend on `into`.
 */
export function mergePlannedTasks(draft: PlanDraft, into: string, other: string): PlanDraft {
  if (into === other) throw new RalphError('merging needs two different tasks', 'plan-merge-same');
  const a = draft.tasks[at(draft, into)];
  const b = draft.tasks[at(draft, other)];
  const merged: PlannedTask = {
    ...a,
    title: `${a.title} + ${b.title}`,
    prompt: `${a.prompt}\n\n${b.prompt}`,
    promise: `${a.promise}\n${b.promise}`,
    type: a.type,
    complexity: Math.min(14, a.complexity + b.complexity),
    dependsOn: [...new Set([...a.dependsOn, ...b.dependsOn])].filter((d) => d !== into && d !== other),
    notes: [...a.notes, ...b.notes, `merged with "${b.title}" (${b.source})`],
  };
  const check = [a.check, b.check].filter((c): c is string => Boolean(c));
  if (check.length > 0) merged.check = check.join(' && ');
  else delete merged.check;
  delete merged.split;
  return {
    ...draft,
    tasks: draft.tasks
      .filter((t) => t.key !== other)
      .map((t) => {
        if (t.key === into) return merged;
        if (!t.dependsOn.includes(other)) return t;
        return { ...t, dependsOn: [...new Set(t.dependsOn.map((d) => (d === other ? into : d)))] };
      }),
  };
}

/**
 * Why the plan cannot be saved as it is, naming the tasks: an empty field, a dependency on
 * nothing known, a key used twice, a dependency cycle (`"A" → "B" → "A"`).
 */
export function planProblems(draft: PlanDraft, existing: readonly Pick<Task, 'id' | 'title' | 'source'>[]): string[] {
  const problems: string[] = [];
  const existingIds = new Set(existing.map((t) => t.id));
  if (draft.tasks.length === 0) problems.push('the plan has no tasks left');
  const keys = new Set<string>();
  for (const task of draft.tasks) {
    const name = `"${task.title || task.key}"`;
    if (keys.has(task.key)) problems.push(`two tasks share the key "${task.key}"`);
    keys.add(task.key);
    for (const field of ['title', 'prompt', 'promise'] as const) if (!task[field].trim()) problems.push(`${name} has no ${field}`);
    const same = existing.find((t) => t.title === task.title && t.source === task.source);
    if (same)
      problems.push(`${name} is already in .ralph/tasks.json as ${same.id} (same title and source): was this plan accepted before?`);
    for (const dependency of task.dependsOn) {
      if (!draft.tasks.some((t) => t.key === dependency) && !existingIds.has(dependency))
        problems.push(`${name} depends on "${dependency}", which is neither in the plan nor in .ralph/tasks.json`);
    }
  }
  const cycle = findCycle(draft.tasks);
  if (cycle) {
    const title = (key: string) => `"${draft.tasks.find((t) => t.key === key)?.title ?? key}"`;
    problems.push(`dependency cycle ${cycle.map(title).join(' → ')}`);
  }
  return problems;
}

/** The new task of a planned one, its dependencies given as ids. */
function toNewTask(task: PlannedTask, id: string, dependsOn: string[], priority: number): NewTask {
  const splitNote = task.split
    ? `\n\nThis is part ${task.split.part} of ${task.split.of} of "${task.split.from}", split because ${task.split.reason}. Do only this part.`
    : '';
  return {
    id,
    title: task.title,
    prompt: `${task.prompt}${splitNote}`,
    promise: task.promise,
    type: task.type as TaskType,
    complexity: task.complexity,
    dependsOn,
    priority,
    source: task.source,
    ...(task.check ? { check: task.check } : {}),
  };
}

/**
 * Saves an accepted plan: one task per planned task in review order (priority 100, 101, …),
 * ids `T-…` after the highest in the store, dependencies mapped to those ids. All or none;
 * refused (PlanRefusedError, nothing written) while `planProblems` finds any.
 */
export async function acceptPlan(store: TaskStore, draft: PlanDraft): Promise<Task[]> {
  const existing = await store.list();
  const problems = planProblems(draft, existing);
  if (problems.length > 0) throw new PlanRefusedError(problems);
  let next = existing.reduce((max, t) => Math.max(max, Number(/^T-(\d+)$/.exec(t.id)?.[1] ?? 0)), 0);
  const idOf = new Map(draft.tasks.map((t) => [t.key, `T-${String(++next).padStart(3, '0')}`]));
  // a dependency on a later task of the review is saved after it: the store adds in dependency order
  const ordered = dependencyOrder(draft.tasks);
  const inputs = ordered.map((task) =>
    toNewTask(
      task,
      idOf.get(task.key) as string,
      task.dependsOn.map((d) => idOf.get(d) ?? d),
      100 + draft.tasks.indexOf(task),
    ),
  );
  const added = await store.addMany(inputs);
  return draft.tasks.map((t) => added.find((a) => a.id === idOf.get(t.key)) as Task);
}
