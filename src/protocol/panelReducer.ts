/**
 * The panel's reducer: `reducePanel(state, input)` → the next state, immutably (unchanged
 * parts keep their identity, so the webview re-renders only what changed, and an input that
 * changes nothing returns the same state). The host and the webview run the same code, which
 * is what lets a snapshot plus the inputs after it rebuild exactly the host's state.
 *
 * One handler per input type, checked at compile time: a new input type is an error until the
 * panel has a handler for it. At run time an unknown type (from a newer host) is ignored
 * rather than breaking the panel.
 */
import type { InputOf, PanelInput, PanelInputType } from './panelInput';
import { emptyTask, LIMITS, type PanelState, type TaskView, warningIdOf, type WarningView } from './panelState';
import { delegationHandlers } from './reduceDelegationsAndGates';
import { parallelHandlers, slotOf, withoutSlots } from './reduceParallel';
import { syncHandlers } from './reduceSync';
import type { Handler, Handlers } from './reducerTypes';
import { appendStream, clip, focusTask, lastIteration, patch, trimTasks, updateIteration, updateTask, upsertTask } from './taskUpdates';

const runHandlers = {
  // a new run starts without the last one's summary
  'run.started': (state, e) => ({
    ...state,
    run: { phase: 'running', runId: e.runId, startedAt: e.time },
    warnings: state.warnings.filter((w) => !w.resolved),
    // a new run starts with the entries the queue still holds (a crashed run's are queued again)
    queue: state.queue.filter((q) => q.state !== 'merged' && q.state !== 'conflict' && q.state !== 'failed'),
  }),
  'run.finished': (state, e) => ({
    ...withoutSlots(state),
    run: { ...state.run, phase: 'idle', finishedAt: e.time, reason: e.reason, ...(e.outcome ? { outcome: e.outcome } : {}) },
  }),
  'run.paused': (state) => (state.run.phase === 'running' ? { ...state, run: { ...state.run, phase: 'paused' } } : state),
  // resuming answers whatever warning was waiting: the person chose to go on
  'run.resumed': (state) =>
    state.run.phase === 'paused'
      ? {
          ...state,
          run: { ...state.run, phase: 'running' },
          warnings: state.warnings.map((w) => (w.resolved ? w : { ...w, resolved: 'continue' as const })),
        }
      : state,
  'panel.runPhase': (state, e) => (state.run.phase === e.phase ? state : { ...state, run: { ...state.run, phase: e.phase } }),
  warning: (state, e) => {
    const task = state.tasks.find((t) => t.id === e.taskId);
    const warning: WarningView = {
      id: warningIdOf(e.runId, e.seq),
      code: e.code,
      message: e.message,
      taskId: e.taskId,
      time: e.time,
      iteration: task?.iteration,
      maxIterations: task?.maxIterations,
    };
    let warnings = [...state.warnings, warning];
    while (warnings.length > LIMITS.warnings) {
      const resolved = warnings.findIndex((w) => w.resolved !== undefined);
      warnings = warnings.filter((_, i) => i !== (resolved >= 0 ? resolved : 0));
    }
    const next = { ...state, warnings };
    return updateTask(next, e.taskId, (t) => appendStream(t, t.iteration, { kind: 'note', level: 'warning', text: e.message }));
  },
  'panel.warningResolved': (state, e) => {
    const index = state.warnings.findIndex((w) => w.id === e.id);
    if (index < 0 || state.warnings[index].resolved === e.action) return state;
    const warnings = state.warnings.slice();
    warnings[index] = { ...warnings[index], resolved: e.action };
    return { ...state, warnings };
  },
  error: (state, e) => {
    const errors = [...state.errors, { time: e.time, message: clip(e.message), taskId: e.taskId }].slice(-LIMITS.errors);
    return updateTask({ ...state, errors }, e.taskId, (t) =>
      appendStream(t, t.iteration, { kind: 'note', level: 'error', text: clip(e.message) }),
    );
  },
} satisfies Handlers;

const taskHandlers = {
  'task.started': (state, e) => {
    const existing = state.tasks.find((t) => t.id === e.taskId);
    // a fresh start (after Retry or Rollback) begins a new series; a resume continues the old one
    const base: TaskView = existing && e.resumed ? existing : emptyTask(e.taskId, e.title, 'in_progress', e.time);
    const task: TaskView = {
      ...base,
      title: e.title,
      status: 'in_progress',
      maxIterations: e.maxIterations,
      iteration: e.resumed ? Math.max(base.iteration, e.iteration - 1) : 0,
      finish: undefined,
      receipt: undefined,
      blockedReason: undefined,
      // the autopilot announces the worktree just before the task starts in it
      worktree: existing?.worktree,
      updatedAt: e.time,
    };
    const tasks = existing ? state.tasks.map((t) => (t.id === e.taskId ? task : t)) : [...state.tasks, task];
    return trimTasks(focusTask({ ...state, tasks }, e.taskId));
  },
  'task.status': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      patch(t, { status: e.to, ...(e.to === 'blocked' || e.to === 'needs_help' ? { blockedReason: e.reason ?? t.blockedReason } : {}) }),
    ),
  'task.finished': (state, e) =>
    upsertTask(state, e.taskId, e.time, (t) => ({
      ...slotOf(t, undefined),
      status: e.status,
      finish: { status: e.status, reason: e.reason, iterations: e.iterations, time: e.time },
      receipt: e.receipt ?? t.receipt,
      proof: e.proof ?? t.proof,
      blockedReason: e.status === 'blocked' || e.status === 'needs_help' || e.status === 'halted' ? e.reason : undefined,
      updatedAt: e.time,
    })),
  'iteration.started': (state, e) => {
    const next = upsertTask(state, e.taskId, e.time, (t) => {
      const previous = lastIteration(t);
      const escalatedFrom =
        previous && previous.n < e.iteration && previous.model && previous.model !== e.model ? previous.model : undefined;
      const withRow = updateIteration(t, e.iteration, () => ({
        n: e.iteration,
        startedAt: e.time,
        model: e.model,
        ...(e.agent ? { agent: e.agent } : {}),
        escalatedFrom,
        tokens: 0,
        delegations: 0,
        compactions: 0,
      }));
      return {
        // a new conversation: the task holds an agent slot
        ...slotOf(withRow, undefined),
        iteration: e.iteration,
        maxIterations: e.maxIterations,
        model: e.model,
        agent: e.agent,
        stream: [],
        streamIteration: e.iteration,
        updatedAt: e.time,
      };
    });
    return focusTask(next, e.taskId);
  },
  'agent.session': (state, e) =>
    e.model === undefined
      ? state
      : updateTask(state, e.taskId, (t) => updateIteration(t, e.iteration, (row) => ({ ...row, sessionModel: clip(e.model ?? '', 200) }))),
  'iteration.finished': (state, e) =>
    updateTask(state, e.taskId, (t) => {
      const complete = e.outcome === 'complete';
      const withRow = updateIteration(t, e.iteration, (row) => ({
        ...row,
        durationMs: e.durationMs,
        outcome: e.outcome,
        signal: e.signal,
        commit: e.commit ?? row.commit,
        error: e.error === undefined ? undefined : clip(e.error, 500),
        progress: complete ? 100 : row.progress,
      }));
      return {
        ...withRow,
        elapsedMs: t.elapsedMs + e.durationMs,
        lastSignal: e.signal ?? t.lastSignal,
        progress: complete ? 100 : t.progress,
        updatedAt: e.time,
      };
    }),
  signal: (state, e) =>
    updateTask(state, e.taskId, (t) => {
      let next: TaskView = { ...t, lastSignal: e.text };
      const percent = e.percent;
      if (e.kind === 'PROGRESS' && percent !== undefined) {
        next = updateIteration({ ...next, progress: percent }, e.iteration, (row) => ({ ...row, progress: percent }));
      } else if ((e.kind === 'BLOCKED' || e.kind === 'NEEDS_HELP') && e.reason !== undefined) {
        next.blockedReason = e.reason;
      }
      return next;
    }),
  'git.commit': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      updateIteration({ ...t, commits: t.commits + 1, lastCommit: { sha: e.sha, message: e.message } }, e.iteration, (row) => ({
        ...row,
        commit: e.sha,
      })),
    ),
  'report.written': (state, e) =>
    updateTask(state, e.taskId, (t) => ({
      ...t,
      report: { file: e.file, final: e.final, text: t.report?.file === e.file ? t.report.text : undefined },
    })),
  'panel.report': (state, e) =>
    updateTask(state, e.taskId, (t) => ({ ...t, report: { file: e.file, final: e.final, text: clip(e.text, LIMITS.reportChars) } })),
} satisfies Handlers;

/** The panel's words for what the loop did about a model fault. */
const FAULT_NOTE: Record<'halt' | 'compact-retry' | 'feedback' | 'error', string> = {
  halt: 'model fault — task halted',
  'compact-retry': 'context too long — compacted, retrying once',
  feedback: 'content filtered — told to the agent',
  error: 'model fault — iteration failed',
};

const streamHandlers = {
  'model.delta': (state, e) =>
    updateTask(state, e.taskId, (t) => appendStream(t, e.iteration, { kind: 'text', ...agentOf(e), text: e.text })),
  'model.response': (state, e) =>
    updateTask(state, e.taskId, (t) => {
      const tokens = e.usage.totalTokens;
      const priced = e.costUsd !== undefined;
      return updateIteration(
        {
          ...t,
          tokens: t.tokens + tokens,
          costUsd: t.costUsd + (e.costUsd ?? 0),
          unpricedTokens: t.unpricedTokens + (priced || e.included ? 0 : tokens),
          includedTokens: t.includedTokens + (!priced && e.included ? tokens : 0),
        },
        e.iteration,
        (row) => ({ ...row, tokens: row.tokens + tokens }),
      );
    }),
  'model.retry': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, t.iteration, {
        kind: 'note',
        level: 'warning',
        text: `model call failed (${e.fault === 'rate_limit' ? 'rate limited: ' : ''}${clip(e.reason, 300)}); retry ${e.attempt}/${e.maxRetries} in ${Math.round(e.delayMs / 100) / 10}s`,
      }),
    ),
  'tool.call': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, e.iteration, { kind: 'tool', ...agentOf(e), callId: e.callId, tool: e.tool, args: clip(e.args, 300) }),
    ),
  'tool.result': (state, e) =>
    updateTask(state, e.taskId, (t) => {
      const stream = t.streamIteration === e.iteration ? t.stream : [];
      for (let i = stream.length - 1; i >= 0; i--) {
        const entry = stream[i];
        if (entry.kind === 'tool' && entry.callId === e.callId && entry.agent === e.agent) {
          const next = stream.slice();
          next[i] = { ...entry, ok: e.ok, summary: clip(e.summary, 500), durationMs: e.durationMs };
          return { ...t, stream: next };
        }
      }
      return appendStream(t, e.iteration, {
        kind: 'tool',
        ...agentOf(e),
        callId: e.callId,
        tool: e.tool,
        args: '',
        ok: e.ok,
        summary: clip(e.summary, 500),
        durationMs: e.durationMs,
      });
    }),
  'model.fault': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, e.iteration, {
        kind: 'note',
        level: e.action === 'halt' || e.action === 'error' ? 'error' : 'warning',
        text: `${e.agent ? `[${e.agent}] ` : ''}${FAULT_NOTE[e.action]} (${e.fault.replace('_', ' ')}, ${e.model}): ${clip(e.message, 300)}`,
      }),
    ),
  'wind-down': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, e.iteration, {
        kind: 'note',
        level: e.wrote.length > 0 ? 'warning' : 'error',
        text: `wind-down (${clip(e.reason, 200)}): ${e.wrote.length > 0 ? `progress notes written to ${e.wrote.join(', ')}, then committed` : `no progress notes written${e.error ? ` — ${clip(e.error, 200)}` : ''}`}`,
      }),
    ),
  escalation: (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, t.iteration, { kind: 'note', level: 'warning', text: `escalated ${e.from} → ${e.to}: ${clip(e.reason, 300)}` }),
    ),
  'council.started': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, t.iteration, {
        kind: 'note',
        level: 'warning',
        text: `bug council convened (${e.models.join(', ')}): ${clip(e.reason, 300)}`,
      }),
    ),
  'council.finished': (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(t, t.iteration, { kind: 'note', level: 'info', text: `council plan: ${clip(e.plan, 1500)}` }),
    ),
  compaction: (state, e) =>
    updateTask(state, e.taskId, (t) =>
      appendStream(
        updateIteration(t, e.iteration, (row) => ({ ...row, compactions: row.compactions + 1 })),
        e.iteration,
        {
          kind: 'note',
          level: 'info',
          text: `compacted the ${e.scope === 'orchestrator' ? 'orchestrator' : `${e.scope} sub-agent`}'s context: ${e.tokensBefore} → ${e.tokensAfter} tokens (original request pinned)`,
        },
      ),
    ),
} satisfies Handlers;

/** Only a sub-agent's entries carry `agent` (no undefined keys in the model). */
function agentOf(e: { agent?: string }): { agent?: string } {
  return e.agent ? { agent: e.agent } : {};
}

const HANDLERS = {
  ...runHandlers,
  ...taskHandlers,
  ...streamHandlers,
  ...delegationHandlers,
  ...syncHandlers,
  ...parallelHandlers,
} satisfies Handlers;

/** Compile-time: every input of the protocol has its handler (a new event is an error here until the panel decides on it). */
type Unhandled = Exclude<PanelInputType, keyof typeof HANDLERS>;
const EVERY_INPUT_HANDLED: [Unhandled] extends [never] ? true : Unhandled = true;
void EVERY_INPUT_HANDLED;

export function reducePanel(state: PanelState, input: PanelInput): PanelState {
  const handler = (HANDLERS as Handlers)[input.type] as Handler<PanelInputType> | undefined;
  return handler ? handler(state, input as InputOf<PanelInputType>) : state;
}
