/**
 * Reducers of parallel runs: the merge queue's entries (`merge`), each task's worktree
 * (`worktree`, `panel.worktree`), its place in the queue, which tells a running agent's tile
 * from a task whose work waits to be merged, and its agent slot (`agent.slot`), which tells an
 * agent talking to the model from a task whose gates run without one.
 */
import type { Handlers } from './reducerTypes';
import { LIMITS, type PanelState, type QueueEntryView, type TaskView } from './panelState';
import type { MergeState } from './panelEvents';
import { clip, patch, updateTask, upsertTask } from './taskUpdates';

/** Finished entries (landed, or sent back to their agent) are dropped first when the list is full. */
function boundQueue(queue: QueueEntryView[]): QueueEntryView[] {
  const next = queue.slice();
  while (next.length > LIMITS.queue) {
    const done = next.findIndex((q) => q.state === 'merged' || q.state === 'conflict' || q.state === 'failed');
    next.splice(done >= 0 ? done : 0, 1);
  }
  return next;
}

export const parallelHandlers = {
  merge: (state, e) => {
    const index = state.queue.findIndex((q) => q.taskId === e.taskId);
    const previous = index >= 0 ? state.queue[index] : undefined;
    const title = e.title ?? previous?.title ?? state.tasks.find((t) => t.id === e.taskId)?.title ?? e.taskId;
    // a new attempt (queued again) or a new merge starts without the last one's verdict
    // and one taken back (checked ahead of its own gates, which failed) keeps nothing of that check
    const takenBack = previous?.provisional === true && !e.provisional && e.state === 'failed';
    const fresh = e.state === 'queued' || e.state === 'merging' || takenBack;
    const entry: QueueEntryView = {
      taskId: e.taskId,
      title,
      state: e.state,
      time: e.time,
      attempts: e.attempts ?? previous?.attempts ?? 1,
      ...(e.detail !== undefined ? { detail: clip(e.detail, 1000) } : {}),
      ...(e.files?.length ? { files: e.files.slice(0, 20) } : {}),
      ...(e.commit ? { commit: e.commit } : {}),
      ...(e.proof ? { proof: clip(e.proof, 500) } : previous?.proof ? { proof: previous.proof } : {}),
      ...(e.chain ? { chain: { ...e.chain, ahead: e.chain.ahead.slice(0, 20) } } : {}),
      ...(e.provisional ? { provisional: true } : {}),
      ...(e.gates
        ? { gates: e.gates.map((g) => ({ name: g.name, passed: g.passed, summary: clip(g.summary, 300) })) }
        : !fresh && previous?.gates
          ? { gates: previous.gates }
          : {}),
    };
    let queue: QueueEntryView[];
    if (previous && e.state === 'queued' && (previous.state === 'conflict' || previous.state === 'failed' || previous.state === 'merged')) {
      // back in the queue after its agent's fix: it queues behind the others again
      queue = [...state.queue.filter((q) => q.taskId !== e.taskId), entry];
    } else if (previous) {
      queue = state.queue.slice();
      queue[index] = entry;
    } else {
      queue = [...state.queue, entry];
    }
    const next: PanelState = { ...state, queue: boundQueue(queue), mergeTarget: e.target ?? state.mergeTarget };
    // checked ahead of its own gates, its agent is still at work: its tile stays a running agent's
    const merge = e.provisional ? undefined : e.state;
    return upsertTask(next, e.taskId, e.time, (t) => {
      const moved = patch(fromAhead(t, e, next.mergeTarget), { merge, title: t.title === t.id ? title : t.title });
      // its work is the queue's now: its loop has ended, with or without a slot
      return e.provisional ? moved : slotOf(moved, undefined);
    });
  },
  'agent.slot': (state, e) => updateTask(state, e.taskId, (t) => slotOf(t, e.state === 'model' ? undefined : e.state)),
  worktree: (state, e) => {
    if (e.state === 'removed') return updateTask(state, e.taskId, (t) => patch(t, { worktree: undefined }));
    return upsertTask(state, e.taskId, e.time, (t) => patch(t, { worktree: e.path }));
  },
  'panel.worktree': (state, e) => updateTask(state, e.taskId, (t) => patch(t, { worktree: e.path })),
} satisfies Handlers;

/** The task with its agent slot's state (`undefined`: it talks to the model, or its loop ended); the same object when unchanged. */
export function slotOf(t: TaskView, slot: TaskView['slot']): TaskView {
  if (t.slot === slot) return t;
  if (slot) return { ...t, slot };
  const next = { ...t };
  delete next.slot;
  return next;
}

/** No task keeps a slot's state once the run is over (a new run's agents say theirs again). */
export function withoutSlots(state: PanelState): PanelState {
  if (!state.tasks.some((t) => t.slot)) return state;
  return { ...state, tasks: state.tasks.map((t) => slotOf(t, undefined)) };
}

/**
 * The merged check's gates kept aside while the task's agent worked on its own: shown on its card
 * once its work is the queue's (confirmed), dropped when the check was taken back.
 */
function fromAhead(t: TaskView, e: { provisional?: boolean; state: MergeState }, target: string | undefined): TaskView {
  if (e.provisional || !t.aheadGates) return t;
  const { aheadGates, ...rest } = t;
  if (e.state !== 'merging' && e.state !== 'checking') return rest;
  return { ...rest, gates: aheadGates, gatesIteration: undefined, gatesMergeTarget: target ?? 'the target branch' };
}

/** The task's merged check runs ahead of its own gates (its agent is still at work on them). */
export function checkedAhead(state: PanelState, taskId: string): boolean {
  return state.queue.find((q) => q.taskId === taskId)?.provisional === true;
}

/** The branch of the merged check when the task's gates run in the queue's re-check. */
export function mergeCheckTarget(state: PanelState, taskId: string): string | undefined {
  const entry = state.queue.find((q) => q.taskId === taskId);
  return entry?.state === 'checking' ? (state.mergeTarget ?? 'the target branch') : undefined;
}
