/**
 * Core events → the panel protocol's events (`src/protocol/panelEvents.ts`). The webview never sees
 * a core type: signals arrive formatted, model calls priced, worktree paths relative to the
 * workspace, and events the panel does not show (checkpoints, baselines…) are left out here.
 * Each case is checked by the compiler against both unions, which keeps the protocol single.
 */
import type { RalphConfig } from '../../core/config/schema';
import type * as core from '../../core/events';
import type { ModelFaultKind } from '../../core/errors';
import { WORKTREES_DIR } from '../../core/git/worktrees';
import { estimateCostUsd } from '../../core/llm/pricing';
import { formatSignal } from '../../core/signals/types';
import type { TaskStatus as CoreTaskStatus } from '../../core/tasks/schema';
import type { DelegationStatus as CoreDelegationStatus } from '../../core/agent/delegation/types';
import type * as shared from '../../protocol/panelEvents';
import { undecided } from '../../core/util/exhaustive';
import { receiptView } from './receiptView';
import { AGENT_CLI_ADAPTERS } from '../../core/agentCli/adapters';
import type { CliAgentKind } from '../../core/agentKinds';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** Compile-time: the protocol's vocabularies are the core's, word for word. */
const VOCABULARY_MATCHES: [
  Same<shared.TaskStatus, CoreTaskStatus>,
  Same<shared.IterationOutcome, core.IterationOutcome>,
  Same<shared.MergeState, core.MergeState>,
  Same<shared.WorktreeState, core.WorktreeState>,
  Same<shared.DelegationStatus, CoreDelegationStatus>,
  Same<shared.ModelFaultKind, ModelFaultKind>,
  Same<shared.AgentSlotState, core.AgentSlotState>,
] = [true, true, true, true, true, true, true];
void VOCABULARY_MATCHES;

/** The agent's name as people know it: `Built-in agent`, `Claude Code`, `Codex`… */
function agentName(kind: string): string {
  if (kind === 'builtin') return 'Built-in agent';
  return kind in AGENT_CLI_ADAPTERS ? AGENT_CLI_ADAPTERS[kind as CliAgentKind].label : kind;
}

/** `.ralph/worktrees/<id>` for a worktree of the workspace; the path as given otherwise. */
export function relativeWorktreePath(absolute: string): string {
  const normal = absolute.replace(/\\/g, '/');
  const at = normal.lastIndexOf(`/${WORKTREES_DIR}/`);
  return at >= 0 ? normal.slice(at + 1) : normal;
}

export function toPanelEvent(
  event: core.RalphEvent,
  prices: RalphConfig['llm']['prices'],
  provider?: RalphConfig['llm']['provider'],
): shared.PanelEvent | undefined {
  switch (event.type) {
    case 'signal':
      return signalEvent(event);
    case 'model.response': {
      const costUsd = estimateCostUsd(event.model, event.usage, prices, provider);
      return {
        type: 'model.response',
        taskId: event.taskId,
        iteration: event.iteration,
        usage: { totalTokens: event.usage.totalTokens },
        ...(costUsd === undefined ? (provider === 'vscode' ? { included: true } : {}) : { costUsd }),
        runId: event.runId,
        seq: event.seq,
        time: event.time,
      };
    }
    case 'task.finished':
      return {
        type: 'task.finished',
        taskId: event.taskId,
        status: event.status,
        iterations: event.iterations,
        reason: event.reason,
        ...(event.receipt ? { receipt: receiptView(event.receipt) } : {}),
        ...(event.proof ? { proof: event.proof } : {}),
        runId: event.runId,
        seq: event.seq,
        time: event.time,
      };
    case 'worktree':
      return {
        type: 'worktree',
        taskId: event.taskId,
        state: event.state,
        path: relativeWorktreePath(event.path),
        branch: event.branch,
        runId: event.runId,
        seq: event.seq,
        time: event.time,
      };
    case 'iteration.started':
    case 'agent.session':
      return agentEvent(event);
    case 'git.commit':
      // the file list can be long and the panel does not show it
      return {
        type: 'git.commit',
        taskId: event.taskId,
        iteration: event.iteration,
        sha: event.sha,
        message: event.message,
        runId: event.runId,
        seq: event.seq,
        time: event.time,
      };
    default:
      return asIsOrHidden(event);
  }
}

/** A signal, formatted, with what its kind carries (progress, a reason, a question). */
function signalEvent(event: Extract<core.RalphEvent, { type: 'signal' }>): shared.PanelEvent {
  const s = event.signal;
  const base = {
    type: 'signal' as const,
    taskId: event.taskId,
    iteration: event.iteration,
    kind: s.kind,
    text: formatSignal(s),
    runId: event.runId,
    seq: event.seq,
    time: event.time,
  };
  if (s.kind === 'PROGRESS') return { ...base, percent: s.percent };
  if (s.kind === 'BLOCKED') return { ...base, reason: s.reason };
  if (s.kind === 'NEEDS_HELP') return { ...base, reason: s.question };
  return base;
}

/** An iteration's start and an agent CLI's session, the agent named as people know it. */
function agentEvent(event: Extract<core.RalphEvent, { type: 'iteration.started' | 'agent.session' }>): shared.PanelEvent {
  switch (event.type) {
    case 'iteration.started':
      return {
        type: 'iteration.started',
        taskId: event.taskId,
        iteration: event.iteration,
        maxIterations: event.maxIterations,
        model: event.model,
        ...(event.agent ? { agent: agentName(event.agent) } : {}),
        runId: event.runId,
        seq: event.seq,
        time: event.time,
      };
    case 'agent.session':
      // its session id is the run log's; the model it reported is the panel's
      return {
        type: 'agent.session',
        taskId: event.taskId,
        iteration: event.iteration,
        agent: agentName(event.agent),
        ...(event.model ? { model: event.model } : {}),
        runId: event.runId,
        seq: event.seq,
        time: event.time,
      };
  }
}

/** The events `toPanelEvent` reshapes; every other one is decided below. */
type Reshaped = 'signal' | 'model.response' | 'task.finished' | 'worktree' | 'git.commit' | 'iteration.started' | 'agent.session';

/**
 * The events the panel shows as they are (each checked against the protocol's union), and those it
 * does not show; a new core event is a compile error here until it is decided.
 */
function asIsOrHidden(event: Exclude<core.RalphEvent, { type: Reshaped }>): shared.PanelEvent | undefined {
  switch (event.type) {
    case 'run.started':
    case 'run.finished':
    case 'run.paused':
    case 'run.resumed':
    case 'task.started':
    case 'task.status':
    case 'iteration.finished':
    case 'model.delta':
    case 'model.retry':
    case 'model.fault':
    case 'wind-down':
    case 'tool.call':
    case 'tool.result':
    case 'delegation.started':
    case 'delegation.result':
    case 'compaction':
    case 'gate.started':
    case 'gate.finished':
    case 'report.written':
    case 'escalation':
    case 'council.started':
    case 'council.finished':
    case 'warning':
    case 'error':
    case 'merge':
    case 'agent.slot':
      return event;
    // not shown by the panel (planning runs have their own review panel)
    case 'checkpoint':
    case 'integrity.baseline':
    case 'budget':
    case 'warning.answered':
    case 'model.fallback':
    case 'proof':
    case 'plan.started':
    case 'plan.finished':
      return undefined;
    default:
      return undecided(event, undefined);
  }
}
