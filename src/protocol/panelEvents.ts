/**
 * The loop's events as the progress panel receives them: the protocol's own types, so that the
 * webview bundle carries no core code. The host (`src/ui/panel/panelEvents.ts`) maps every core
 * event onto these (signals formatted, costs priced, worktree paths made relative) and the
 * compiler checks that mapping; shapes here are the fields the panel reads, nothing more.
 */

/** A task's status (the task store's vocabulary). */
export type TaskStatus =
  'todo' | 'in_progress' | 'done' | 'blocked' | 'needs_help' | 'failed' | 'timeout' | 'halted' | 'cancelled' | 'review';

/** Why an iteration ended the way it did. */
export type IterationOutcome = 'complete' | 'continue' | 'blocked' | 'needs_help' | 'error' | 'stopped';

/** A delegation's status, derived from its evidence. */
export type DelegationStatus = 'success' | 'partial' | 'failed' | 'escalated';

/** Where a task stands in the merge queue (`waiting`: the user's uncommitted changes are in the way). */
export type MergeState = 'queued' | 'merging' | 'checking' | 'waiting' | 'merged' | 'conflict' | 'failed' | 'review';

/** What kind of provider fault a model call ended with (the core's ModelFaultKind). */
export type ModelFaultKind =
  'rate_limit' | 'quota' | 'auth' | 'context_length' | 'outage' | 'content_filter' | 'not_found' | 'consent' | 'bad_request' | 'unknown';

/** What happened to a parallel task's worktree. */
export type WorktreeState = 'ready' | 'kept' | 'removed';

/** Where a parallel task's agent stands: talking to the model, its slot given away while its gates run, or waiting for one again. */
export type AgentSlotState = 'model' | 'gates' | 'waiting';

/**
 * A task's place in the merge chain while it is built or checked: 1 is the head (lands next);
 * `ahead` the tasks its prefix is built on (target + ahead… + it); `passed` its prefix is green
 * (it waits for the ones ahead to land); `coveredBy` the task whose check covers its batch;
 * `aside` held for review once green, so the ones behind are built without it.
 */
export interface MergeChainPlace {
  place: number;
  ahead: string[];
  passed?: boolean;
  coveredBy?: string;
  aside?: boolean;
}

/** A gate of the merge queue's re-check of the merged result. */
export interface MergeGateResult {
  name: string;
  passed: boolean;
  summary: string;
}

/** What a sub-agent returned, as far as the delegation card shows it. */
export interface DelegationOutcome {
  summary: string;
  toolEvidence: { tool: string; success: boolean; summary: string; pendingApproval?: boolean; externalId?: string }[];
  missingEvidence?: { tool: string; summary: string }[];
  escalation?: string;
}

/** A receipt line as the completion card shows it (formatted by the host: unknown stays unknown). */
export interface ReceiptLineView {
  calls: number;
  /** "in (cached) / out" token counts. */
  tokens: string;
  /** The estimate: "$0.0123", "unknown (no price in llm.prices)", "included (editor plan)"… */
  cost: string;
  /** The provider's own figure, marked as such, or "—". */
  providerCost: string;
  /** Failed calls and retries, when there were any. */
  failures?: string;
}

/** The cost receipt on the completion card: its total and the lines by role. */
export interface ReceiptView {
  total: ReceiptLineView;
  byRole: (ReceiptLineView & { role: string })[];
}

interface Usage {
  totalTokens: number;
}

/** The event bodies the panel shows. */
export type PanelEventBody =
  | { type: 'run.started' }
  /** `outcome`: done / needs you / failed, for the run-end summary. */
  | {
      type: 'run.finished';
      reason: string;
      outcome?: {
        done: string[];
        questions: { taskId: string; question: string }[];
        reviews: string[];
        failed: { taskId: string; status: TaskStatus; reason: string }[];
      };
    }
  | { type: 'run.paused'; taskId?: string }
  | { type: 'run.resumed'; taskId?: string }
  | { type: 'task.started'; taskId: string; title: string; iteration: number; maxIterations: number; resumed: boolean }
  | { type: 'task.status'; taskId: string; from: TaskStatus; to: TaskStatus; reason?: string }
  /** `receipt`: the task's cost receipt, formatted by the host. */
  /** `proof`: the task's fail-to-pass proof in one line, when it needed one. */
  | { type: 'task.finished'; taskId: string; status: TaskStatus; iterations: number; reason: string; receipt?: ReceiptView; proof?: string }
  /** `model`: the built-in agent's model, or the CLI's label and model (`Claude Code: opus`); `agent`: who works (`Built-in agent`, `Claude Code`). */
  | { type: 'iteration.started'; taskId: string; iteration: number; maxIterations: number; model: string; agent?: string }
  /** An agent CLI's session began: `model` is the one it reported running on. */
  | { type: 'agent.session'; taskId: string; iteration: number; agent: string; model?: string }
  | {
      type: 'iteration.finished';
      taskId: string;
      iteration: number;
      outcome: IterationOutcome;
      signal?: string;
      durationMs: number;
      commit?: string;
      error?: string;
    }
  | { type: 'model.delta'; taskId: string; iteration: number; text: string; agent?: string }
  /** `costUsd`: estimated by the host from `llm.prices`; absent when the model has no price. */
  /** `included`: no price, and the editor's plan pays for it (an editor model, `llm.provider` "vscode"). */
  | { type: 'model.response'; taskId: string; iteration: number; usage: Usage; costUsd?: number; included?: boolean }
  | { type: 'model.retry'; taskId?: string; attempt: number; maxRetries: number; delayMs: number; reason: string; fault?: ModelFaultKind }
  | {
      type: 'model.fault';
      taskId: string;
      iteration: number;
      model: string;
      fault: ModelFaultKind;
      action: 'halt' | 'compact-retry' | 'feedback' | 'error';
      message: string;
      agent?: string;
    }
  | {
      type: 'wind-down';
      taskId: string;
      iteration: number;
      cause: 'budget' | 'timeout' | 'stop';
      reason: string;
      wrote: string[];
      error?: string;
    }
  | { type: 'tool.call'; taskId: string; iteration: number; callId: string; tool: string; args: string; agent?: string }
  | {
      type: 'tool.result';
      taskId: string;
      iteration: number;
      callId: string;
      tool: string;
      ok: boolean;
      summary: string;
      durationMs: number;
      agent?: string;
    }
  | {
      type: 'delegation.started';
      taskId: string;
      iteration: number;
      delegationId: string;
      target: string;
      objective: string;
      expectedOutcome?: string;
      model: string;
    }
  | {
      type: 'delegation.result';
      taskId: string;
      iteration: number;
      delegationId: string;
      target: string;
      objective: string;
      model: string;
      status: DelegationStatus;
      result: DelegationOutcome;
      envelope: string;
      usage: Usage;
      durationMs: number;
    }
  | { type: 'compaction'; taskId: string; iteration: number; scope: string; tokensBefore: number; tokensAfter: number }
  /** `text` as the timeline shows it (`PROGRESS:50`); `percent` for PROGRESS, `reason` for BLOCKED / NEEDS_HELP. */
  | {
      type: 'signal';
      taskId: string;
      iteration: number;
      kind: 'COMPLETE' | 'PROGRESS' | 'BLOCKED' | 'NEEDS_HELP';
      text: string;
      percent?: number;
      reason?: string;
    }
  | { type: 'git.commit'; taskId: string; iteration: number; sha: string; message: string }
  | { type: 'gate.started'; taskId?: string; iteration?: number; gate: string; kind: string; command: string; scope?: 'affected' }
  | {
      type: 'gate.finished';
      taskId?: string;
      iteration?: number;
      gate: string;
      kind: string;
      required: boolean;
      passed: boolean;
      summary: string;
      durationMs: number;
      tests?: { passed: number; failed: number; total: number; failing: string[] };
      severity?: string;
      integrity?: { violations: string[]; allowed: string[] };
      /** Failing tests already failing at the task's base (or on the merge target's tip): named, not held against the task. */
      preExisting?: string[];
      /** Failing tests that failed at the base too: held against the task or forgiven, with the evidence. */
      baseFailures?: { name: string; held: boolean; why: string }[];
      /** Tests that failed, then passed when the gate ran again. */
      flaky?: string[];
      /** Why a red gate's failures could not be compared with the base (the runner names none). */
      baselineNote?: string;
      /** A part of the suite (the tests the task's changes reach), or the whole and why where a part was possible. */
      scope?: { kind: 'affected'; files: number; of?: number } | { kind: 'full'; why: string };
    }
  | { type: 'report.written'; taskId: string; file: string; final: boolean }
  | { type: 'escalation'; taskId: string; from: string; to: string; reason: string }
  | { type: 'council.started'; taskId: string; models: string[]; reason: string }
  | { type: 'council.finished'; taskId: string; plan: string }
  | { type: 'warning'; taskId?: string; code: string; message: string }
  | { type: 'error'; taskId?: string; message: string }
  /** The merge queue moved a task; `target`: the branch it merges into; `gates`: the merged check's results. */
  | {
      type: 'merge';
      taskId: string;
      state: MergeState;
      detail?: string;
      files?: string[];
      commit?: string;
      title?: string;
      target?: string;
      attempts?: number;
      gates?: MergeGateResult[];
      proof?: string;
      chain?: MergeChainPlace;
      /** Checked ahead of its own gates: its agent signalled COMPLETE and its gates still run; decided once they pass. */
      provisional?: boolean;
    }
  /** `path` relative to the workspace (`.ralph/worktrees/<id>`). */
  | { type: 'worktree'; taskId: string; state: WorktreeState; path: string; branch: string }
  /** A parallel task's agent slot moved (issue 34). */
  | { type: 'agent.slot'; taskId: string; state: AgentSlotState };

/** The stamp every event carries: its run, its sequence number in the run, its ISO time. */
export interface EventStamp {
  runId: string;
  seq: number;
  time: string;
}

export type PanelEvent = PanelEventBody & EventStamp;
export type PanelEventType = PanelEvent['type'];
export type PanelEventOf<T extends PanelEventType> = Extract<PanelEvent, { type: T }>;
