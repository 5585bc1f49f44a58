/**
 * `panel.sync`: the task store and checkpoints brought into the model. This is how the panel
 * shows the right state after a window reload or a run from the CLI, and how the cards follow
 * the actions taken on a task (Retry, Unblock…) that change the store but emit no event.
 */
import type { Handlers } from './reducerTypes';
import type { TaskSeed } from './panelInput';
import { emptyTask, type PanelState, type TaskView } from './panelState';
import { patch, trimTasks, updateIteration } from './taskUpdates';

function mergeCheckpoint(task: TaskView, seed: TaskSeed): TaskView {
  const cp = seed.checkpoint;
  if (!cp) return task;
  let next = patch(task, {
    elapsedMs: Math.max(task.elapsedMs, cp.elapsedMs),
    commits: Math.max(task.commits, cp.commits),
    tokens: Math.max(task.tokens, cp.tokens),
    costUsd: Math.max(task.costUsd, cp.costUsd),
    unpricedTokens: Math.max(task.unpricedTokens, cp.unpricedTokens),
    includedTokens: Math.max(task.includedTokens, cp.includedTokens ?? 0),
  });
  for (const record of cp.history) {
    const known = next.iterations.find((row) => row.n === record.n);
    // rows the model saw finish live are richer (delegations, compactions); keep them
    if (known?.durationMs !== undefined) continue;
    next = updateIteration(next, record.n, (row) => ({
      ...row,
      startedAt: record.startedAt,
      model: record.model,
      durationMs: record.durationMs,
      outcome: record.outcome,
      signal: record.signal,
      progress: record.progress,
      commit: record.commit,
      error: record.error,
      tokens: record.tokens,
      gates:
        record.gates.length > 0
          ? {
              passed: record.gates.filter((g) => g.passed).length,
              failed: record.gates.filter((g) => !g.passed).length,
              total: record.gates.length,
            }
          : undefined,
    }));
  }
  const rows = next.iterations;
  for (let i = 1; i < rows.length; i++) {
    if (
      rows[i].escalatedFrom === undefined &&
      rows[i - 1].model &&
      rows[i].model &&
      rows[i - 1].model !== rows[i].model &&
      rows[i - 1].n === rows[i].n - 1
    ) {
      const escalatedFrom = rows[i - 1].model;
      next = updateIteration(next, rows[i].n, (row) => ({ ...row, escalatedFrom }));
    }
  }
  return next;
}

function applySeed(task: TaskView, seed: TaskSeed): TaskView {
  const seen = seed.checkpoint ? seed.checkpoint.reviewHold : task.reviewHold;
  const held = seed.status !== 'review' ? undefined : JSON.stringify(seen) === JSON.stringify(task.reviewHold) ? task.reviewHold : seen;
  const patched = patch(task, {
    // a new array every sync: kept as it was when it says the same (no re-render for nothing)
    questions:
      seed.questions === undefined || JSON.stringify(seed.questions) === JSON.stringify(task.questions) ? task.questions : seed.questions,
    reviewHold: held,
    title: seed.title,
    status: seed.status,
    // the store has no limit of its own for most tasks (the config's applies): keep what the run said
    maxIterations: seed.maxIterations ?? task.maxIterations,
    iteration: Math.max(task.iteration, seed.iterations),
    progress: seed.progress ?? task.progress,
    lastSignal: seed.lastSignal ?? task.lastSignal,
    blockedReason: seed.blockedReason,
    remote: sameRemote(task.remote, seed.remote) ? task.remote : seed.remote,
    check: seed.check,
    proof: seed.proof ?? task.proof,
  });
  // a Retry or Rollback resets the store's counters: the old series is over
  const reset = seed.iterations === 0 && seed.status === 'todo' && task.iteration > 0;
  if (reset) return { ...emptyTask(task.id, seed.title, seed.status, seed.updatedAt), maxIterations: seed.maxIterations };
  return mergeCheckpoint(patched, seed);
}

function sameRemote(a: TaskSeed['remote'], b: TaskSeed['remote']): boolean {
  return a?.state === b?.state && a?.url === b?.url && a?.detail === b?.detail;
}

export const syncHandlers = {
  'panel.sync': (state, e) => {
    let tasks = state.tasks;
    for (const seed of e.tasks) {
      const index = tasks.findIndex((t) => t.id === seed.id);
      if (index >= 0) {
        const next = applySeed(tasks[index], seed);
        if (next !== tasks[index]) {
          tasks = tasks.slice();
          tasks[index] = next;
        }
      } else if (e.adopt || seed.remote) {
        // a task the forge runs shows even though it never ran here
        tasks = [...tasks, applySeed(emptyTask(seed.id, seed.title, seed.status, seed.updatedAt), seed)];
      }
    }
    if (tasks === state.tasks) return state;
    const next: PanelState = { ...state, tasks, currentTaskId: state.currentTaskId ?? tasks[tasks.length - 1]?.id };
    return trimTasks(next);
  },
} satisfies Handlers;
