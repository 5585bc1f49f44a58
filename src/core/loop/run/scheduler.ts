import { RalphError } from '../../errors';
import type { Task, TaskStatus } from '../../tasks/schema';
import { dependenciesDone, READY } from '../../tasks/select';

/**
 * Where every task of a parallel run stands, from the autopilot's point of view. Pure data:
 * the functions below are the whole scheduling policy (seed 004, "Parallel Agent
 * Coordination"): fill the free slots with the next ready tasks, wait for any agent to end,
 * repeat until nothing runs, nothing waits to merge and nothing is ready. A slot is a model
 * conversation (issue 34): while a task's gates run it goes to the next task (`slotGiven`), and
 * the task sent back by them asks for one again (`slotWanted`), ahead of every new start.
 */
export interface SchedulerState {
  /** Tasks with an agent slot: a model conversation (and the iteration's steps up to its gates). */
  readonly running: readonly string[];
  /** Tasks whose loop goes on without a slot while their gates (and proof) run: the slot went to the next task. */
  readonly gating?: readonly string[];
  /** Sent back by their own gates, in the order they asked: they get the next free slots before any task starts. */
  readonly waiting?: readonly string[];
  /** Finished by their agent (COMPLETE, gates green), waiting in or going through the merge queue. */
  readonly merging: readonly string[];
  /** Sent back by the queue (conflict, red merged check): they get the next free slot first. */
  readonly returning: readonly string[];
  /** Ended in this run (merged, blocked, failed…): not picked again by this run, unless a person acts on it (see `reopen`). */
  readonly ended: readonly string[];
  /** Held for a person's review (`merge.review` manual, or a merge that waited too long for the person's tree). */
  readonly reviewing?: readonly string[];
}

export const EMPTY_SCHEDULE: SchedulerState = {
  running: [],
  gating: [],
  waiting: [],
  merging: [],
  returning: [],
  ended: [],
  reviewing: [],
};

/** How an agent's turn on a task ended. `complete` = COMPLETE with the required gates green in its worktree. */
export type AgentEnd = 'complete' | Exclude<TaskStatus, 'todo' | 'done'>;

/** Tasks that may start now, best first: returned from the queue, then interrupted ones (a crash), then ready `todo`s. */
export function readyTasks(tasks: readonly Task[], state: SchedulerState): Task[] {
  const busy = new Set([...atWork(state), ...state.merging, ...state.ended, ...(state.reviewing ?? [])]);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const returning = state.returning.map((id) => byId.get(id)).filter((t): t is Task => t !== undefined && !state.running.includes(t.id));
  const free = tasks.filter((t) => !busy.has(t.id) && !state.returning.includes(t.id));
  const interrupted = free.filter((t) => t.status === 'in_progress').sort(byPriority);
  // `done` is set only once a task's work is merged, so a dependent starts from a tip that has it
  const todo = free.filter((t) => READY.has(t.status) && dependenciesDone(t, byId)).sort(byPriority);
  return [...returning, ...interrupted, ...todo];
}

/** Tasks whose loop runs: with a slot, on their gates, or waiting for a slot again. */
export function atWork(state: SchedulerState): string[] {
  return [...state.running, ...(state.gating ?? []), ...(state.waiting ?? [])];
}

/**
 * Fills up to `maxParallel` slots: first the tasks their gates sent back (`resume`, in the order
 * they asked), then new starts (`start`, best first) — while fewer than `maxAtWork` tasks are at
 * work (with a slot or on their gates: a task started beyond that would only wait in the gates' line).
 */
export function fillSlots(
  state: SchedulerState,
  tasks: readonly Task[],
  maxParallel: number,
  maxAtWork = Number.POSITIVE_INFINITY,
): { state: SchedulerState; start: Task[]; resume: string[] } {
  const free = Math.max(0, Math.floor(maxParallel) - state.running.length);
  const waiting = state.waiting ?? [];
  const resume = waiting.slice(0, free);
  const room = Math.max(0, Math.min(free - resume.length, maxAtWork - atWork(state).length));
  const start = readyTasks(tasks, state).slice(0, room);
  if (start.length === 0 && resume.length === 0) return { state, start, resume };
  const ids = start.map((t) => t.id);
  return {
    state: {
      ...state,
      running: [...state.running, ...resume, ...ids],
      waiting: waiting.slice(resume.length),
      returning: state.returning.filter((id) => !ids.includes(id)),
    },
    start,
    resume,
  };
}

/** A task's gates start: its slot goes to the next task while they run (its loop goes on without one). */
export function slotGiven(state: SchedulerState, taskId: string): SchedulerState {
  if (!state.running.includes(taskId)) return state;
  return { ...state, running: without(state.running, taskId), gating: [...(state.gating ?? []), taskId] };
}

/** A task's gates sent it back to its agent: it waits for a slot, which `fillSlots` gives it before any new start. */
export function slotWanted(state: SchedulerState, taskId: string): SchedulerState {
  if (!(state.gating ?? []).includes(taskId)) return state;
  return { ...state, gating: without(state.gating ?? [], taskId), waiting: [...(state.waiting ?? []), taskId] };
}

/** An agent ended (with its slot or on its gates): COMPLETE goes on to the merge queue; anything else ends the task for this run. */
export function agentEnded(state: SchedulerState, taskId: string, end: AgentEnd): SchedulerState {
  if (!atWork(state).includes(taskId)) throw new RalphError(`task ${taskId} has no agent at work`, 'scheduler');
  const left = {
    ...state,
    running: without(state.running, taskId),
    gating: without(state.gating ?? [], taskId),
    waiting: without(state.waiting ?? [], taskId),
  };
  if (end === 'complete') return { ...left, merging: [...state.merging, taskId] };
  return { ...left, ended: [...state.ended, taskId] };
}

/** The queue is through with a task: merged (done), sent back to its agent, held for review, or given up on (needs_help, failed). */
export function mergeEnded(state: SchedulerState, taskId: string, result: 'merged' | 'returned' | 'gave-up' | 'review'): SchedulerState {
  if (!state.merging.includes(taskId)) throw new RalphError(`task ${taskId} is not in the merge queue`, 'scheduler');
  const merging = state.merging.filter((id) => id !== taskId);
  if (result === 'returned') return { ...state, merging, returning: [...state.returning, taskId] };
  if (result === 'review') return { ...state, merging, reviewing: [...(state.reviewing ?? []), taskId] };
  return { ...state, merging, ended: [...state.ended, taskId] };
}

/**
 * A person acted on tasks this run had left (answered, unblocked, raised the limit, requested
 * changes, approved): they leave `ended` / `reviewing`, so the run picks them up again — an
 * approved one through the merge queue (`approved`), the others as ready tasks.
 */
export function reopen(state: SchedulerState, ids: readonly string[], approved: readonly string[] = []): SchedulerState {
  if (ids.length === 0 && approved.length === 0) return state;
  const gone = new Set([...ids, ...approved]);
  return {
    ...state,
    ended: state.ended.filter((id) => !gone.has(id)),
    reviewing: (state.reviewing ?? []).filter((id) => !gone.has(id)),
    merging: [...state.merging, ...approved.filter((id) => !state.merging.includes(id))],
  };
}

/** The run is over: no agent runs, nothing waits to merge, and no task could start. */
export function scheduleFinished(state: SchedulerState, tasks: readonly Task[]): boolean {
  // tasks held for review do not keep the run going: a person approves them later, with or without a run
  return atWork(state).length === 0 && state.merging.length === 0 && readyTasks(tasks, state).length === 0;
}

function without(ids: readonly string[], taskId: string): string[] {
  return ids.filter((id) => id !== taskId);
}

function byPriority(a: Task, b: Task): number {
  return a.priority - b.priority || a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id);
}
