/** Small immutable updates of the panel model, shared by the reducers. */
import { emptyTask, type IterationView, LIMITS, type PanelState, type StreamEntry, type TaskView } from './panelState';

/** Replaces the task `id` with `update(task)`; the same state when nothing changed or the task is unknown. */
export function updateTask(state: PanelState, id: string | undefined, update: (task: TaskView) => TaskView): PanelState {
  if (id === undefined) return state;
  const index = state.tasks.findIndex((t) => t.id === id);
  if (index < 0) return state;
  const task = state.tasks[index];
  const next = update(task);
  if (next === task) return state;
  const tasks = state.tasks.slice();
  tasks[index] = next;
  return { ...state, tasks };
}

/** Like `updateTask`, creating the task first when the model does not know it (a run that started before the panel). */
export function upsertTask(state: PanelState, id: string, time: string, update: (task: TaskView) => TaskView): PanelState {
  if (state.tasks.some((t) => t.id === id)) return updateTask(state, id, update);
  const created = update(emptyTask(id, id, 'in_progress', time));
  return trimTasks({ ...state, tasks: [...state.tasks, created] });
}

/** Moves the task to the end (most recently active) and makes it the current one. */
export function focusTask(state: PanelState, id: string): PanelState {
  const index = state.tasks.findIndex((t) => t.id === id);
  if (index < 0) return state;
  if (index === state.tasks.length - 1 && state.currentTaskId === id) return state;
  const tasks = state.tasks.slice();
  const [task] = tasks.splice(index, 1);
  tasks.push(task);
  return { ...state, tasks, currentTaskId: id };
}

/** Keeps at most `LIMITS.tasks` tasks, dropping the least recently active (never the current one). */
export function trimTasks(state: PanelState): PanelState {
  if (state.tasks.length <= LIMITS.tasks) return state;
  const tasks = state.tasks.slice();
  while (tasks.length > LIMITS.tasks) {
    const index = tasks.findIndex((t) => t.id !== state.currentTaskId);
    tasks.splice(index < 0 ? 0 : index, 1);
  }
  return { ...state, tasks };
}

/** Shallow patch that keeps the same object when every value is already equal. */
export function patch<T extends object>(target: T, changes: Partial<T>): T {
  for (const key of Object.keys(changes) as (keyof T)[]) {
    if (target[key] !== changes[key]) return { ...target, ...changes };
  }
  return target;
}

function blankIteration(n: number): IterationView {
  return { n, startedAt: '', model: '', tokens: 0, delegations: 0, compactions: 0 };
}

/** Updates (creating when missing) the timeline row of iteration `n`; rows stay ordered and bounded. */
export function updateIteration(task: TaskView, n: number, update: (row: IterationView) => IterationView): TaskView {
  const rows = task.iterations;
  let index = -1;
  for (let i = rows.length - 1; i >= 0; i--) {
    if (rows[i].n === n) {
      index = i;
      break;
    }
  }
  const current = index >= 0 ? rows[index] : blankIteration(n);
  const next = update(current);
  if (index >= 0 && next === current) return task;
  let iterations: IterationView[];
  if (index >= 0) {
    iterations = rows.slice();
    iterations[index] = next;
  } else {
    iterations = [...rows, next].sort((a, b) => a.n - b.n);
    if (iterations.length > LIMITS.iterations) iterations = iterations.slice(-LIMITS.iterations);
  }
  return { ...task, iterations };
}

export function lastIteration(task: TaskView): IterationView | undefined {
  return task.iterations[task.iterations.length - 1];
}

/** Appends to the live stream; consecutive text of the same agent is one entry. */
export function appendStream(task: TaskView, iteration: number, entry: StreamEntry): TaskView {
  const stream = task.streamIteration === iteration ? task.stream : [];
  const last = stream[stream.length - 1];
  let next: StreamEntry[];
  if (entry.kind === 'text' && last?.kind === 'text' && last.agent === entry.agent) {
    next = stream.slice();
    next[next.length - 1] = { ...last, text: clipTail(last.text + entry.text, LIMITS.streamChars) };
  } else {
    next = [...stream, entry.kind === 'text' ? { ...entry, text: clipTail(entry.text, LIMITS.streamChars) } : entry];
    if (next.length > LIMITS.streamEntries) next = next.slice(-LIMITS.streamEntries);
  }
  return { ...task, stream: next, streamIteration: iteration };
}

/** The last `max` characters (the stream keeps the newest text). */
export function clipTail(text: string, max: number): string {
  return text.length <= max ? text : text.slice(text.length - max);
}

/** The first `max` characters, marked when cut. */
export function clip(text: string, max: number = LIMITS.textChars): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}
