/**
 * The progress panel's model: what the host keeps for the panel and sends as a snapshot, and
 * what the webview rebuilds from the snapshot plus incremental inputs. Plain JSON data only
 * (it crosses `postMessage` and is persisted), no DOM and no `vscode`.
 */
import { type WarningAnswer, warningRule } from '../core/warningPolicy';
import type {
  DelegationStatus,
  IterationOutcome,
  MergeChainPlace,
  MergeGateResult,
  MergeState,
  ReceiptView,
  TaskStatus,
} from './panelEvents';

/** Bounds that keep the model (and so every snapshot) small however long a run goes. */
export const LIMITS = {
  tasks: 30,
  iterations: 200,
  delegations: 40,
  evidence: 24,
  streamEntries: 300,
  streamChars: 40_000,
  textChars: 4_000,
  warnings: 20,
  errors: 20,
  failingTests: 20,
  reportChars: 20_000,
  workspaceGates: 20,
  queue: 20,
  questions: 10,
} as const;

/** The run as the panel shows it. `stopping` comes from the host (the user pressed Stop). */
export type RunPhase = 'idle' | 'running' | 'paused' | 'stopping';

export interface RunView {
  phase: RunPhase;
  runId?: string;
  startedAt?: string;
  finishedAt?: string;
  /** Why the last run ended. */
  reason?: string;
  /** How the last run ended for the person: done / needs you (questions, reviews) / failed. */
  outcome?: RunOutcomeView;
}

/** The run-end summary (the core's RunOutcome). */
export interface RunOutcomeView {
  done: string[];
  questions: { taskId: string; question: string }[];
  reviews: string[];
  failed: { taskId: string; status: TaskStatus; reason: string }[];
}

/** A question the task asked (NEEDS_HELP, a block, a gated command, a review's feedback) and its answer. */
export interface QuestionView {
  id: string;
  kind: 'help' | 'command' | 'merge' | 'review' | 'verdict';
  question: string;
  askedAt: string;
  iteration?: number;
  command?: string;
  files?: string[];
  /** `verdict` questions: the failing tests asked about (part of the task, or unrelated). */
  tests?: string[];
  answer?: string;
  answeredAt?: string;
  approved?: boolean;
}

/** The checked merge result a task holds for review: where it would land and what the merged check said. */
export interface ReviewHoldView {
  target: string;
  reason: string;
  gates: MergeGateResult[];
  /** The person's files that kept it from landing, when that is why it waits. */
  files?: string[];
  heldAt: string;
}

export interface TestCounts {
  passed: number;
  failed: number;
  total: number;
  failing: string[];
}

/** One gate of the latest gate run; `passed` is absent while it runs. */
export interface GateView {
  name: string;
  kind: string;
  required: boolean;
  command?: string;
  passed?: boolean;
  summary?: string;
  durationMs?: number;
  tests?: TestCounts;
  severity?: string;
  /** Gate integrity against the task's base: how the gate was weakened, or the changes the task was allowed to make. */
  integrity?: { violations: string[]; allowed: string[] };
  /** Failing tests that already failed at the task's base (or on the merge target's tip): named, not held against the task. */
  preExisting?: string[];
  /** Failing tests that failed at the base too, held against the task or forgiven: the evidence of each. */
  baseFailures?: { name: string; held: boolean; why: string }[];
  /** Tests that failed, then passed when the gate ran again. */
  flaky?: string[];
  /** Why the failures of a gate that was red at the base too could not be compared with it. */
  baselineNote?: string;
  /** The run was a part of the suite: its test files, and the suite's tests at the base when known. */
  part?: { files: number; of?: number };
  /** Why the whole suite ran where a part could have (the agent claims COMPLETE, a config changed…). */
  whole?: string;
  /** Set on hand-run gates: the gate run they belong to. */
  runId?: string;
}

/** One row of the iteration timeline. */
export interface IterationView {
  n: number;
  startedAt: string;
  /** As the core names it: the built-in agent's model, or `Claude Code: opus` (`agentModelOf` words it). */
  model: string;
  /** Who did the iteration's work (`Built-in agent`, `Claude Code`); absent in runs logged before it was told. */
  agent?: string;
  /** The model an agent CLI's session reported running on. */
  sessionModel?: string;
  /** The previous iteration's model when this one runs on another (an escalation mark). */
  escalatedFrom?: string;
  durationMs?: number;
  progress?: number;
  signal?: string;
  outcome?: IterationOutcome;
  commit?: string;
  error?: string;
  tokens: number;
  gates?: { passed: number; failed: number; total: number };
  delegations: number;
  compactions: number;
}

export type EvidenceTag = 'OK' | 'ERROR' | 'PENDING' | 'MISSING';

export interface EvidenceLine {
  tag: EvidenceTag;
  tool: string;
  summary: string;
  externalId?: string;
}

/** A delegation envelope as a card; `running` until its result arrives. */
export interface DelegationView {
  id: string;
  iteration: number;
  target: string;
  objective: string;
  expectedOutcome?: string;
  model: string;
  status: DelegationStatus | 'running';
  startedAt: string;
  durationMs?: number;
  tokens?: number;
  evidence: EvidenceLine[];
  summary?: string;
  escalation?: string;
  envelope?: string;
}

/** The live stream of the running iteration: the agents' text, their tool calls, notes. */
export type StreamEntry =
  | { kind: 'text'; agent?: string; text: string }
  | { kind: 'tool'; agent?: string; callId: string; tool: string; args: string; ok?: boolean; summary?: string; durationMs?: number }
  | { kind: 'note'; level: 'info' | 'warning' | 'error'; text: string };

/** How a task ended, for the completion / timeout / blocked cards. */
export interface FinishView {
  status: TaskStatus;
  reason: string;
  iterations: number;
  time: string;
}

export interface ReportView {
  file: string;
  final: boolean;
  /** The report's markdown (final reports only), shortened to `LIMITS.reportChars`. */
  text?: string;
}

/** One entry of the merge queue view: a task the queue holds, merges, re-checks, landed or sent back. */
export interface QueueEntryView {
  taskId: string;
  title: string;
  state: MergeState;
  /** When the entry reached its state. */
  time: string;
  /** Times the task entered the queue. */
  attempts: number;
  detail?: string;
  /** Conflicting files, or the files of the user's tree that hold the merge up. */
  files?: string[];
  commit?: string;
  /** The required gates of the merged check. */
  gates?: MergeGateResult[];
  /** The task's fail-to-pass proof, one line, when it needed one. */
  proof?: string;
  /** Its place in the merge chain while it is built or checked (which prefix its check is on, what it waits for). */
  chain?: MergeChainPlace;
  /** Checked ahead of its own gates (`merge.checkAhead`): its agent is still at work on them. */
  provisional?: boolean;
}

/** A task that runs as a CI job: its forge state (queued, running, pr-open, in-queue, merged, failed) and the job's or pull request's address. */
export interface RemoteView {
  state: 'queued' | 'running' | 'pr-open' | 'in-queue' | 'merged' | 'failed';
  url: string;
  detail?: string;
}

export interface TaskView {
  id: string;
  title: string;
  status: TaskStatus;
  maxIterations?: number;
  /** The iteration running, or the last one run. */
  iteration: number;
  progress?: number;
  lastSignal?: string;
  model?: string;
  /** The agent of the iteration running, or of the last one run. */
  agent?: string;
  blockedReason?: string;
  /** Active time on the task: the sum of finished iterations' durations. */
  elapsedMs: number;
  commits: number;
  lastCommit?: { sha: string; message: string };
  tokens: number;
  /** Estimated from `llm.prices`; tokens of models without a price are counted apart. */
  costUsd: number;
  unpricedTokens: number;
  /** Tokens of editor models without a price: the editor's plan pays for them (not unknown, not $0). */
  includedTokens: number;
  tests?: TestCounts;
  /** The latest gate run of this task and the iteration it belongs to. */
  gates: GateView[];
  gatesIteration?: number;
  iterations: IterationView[];
  delegations: DelegationView[];
  stream: StreamEntry[];
  streamIteration?: number;
  finish?: FinishView;
  /** The task's cost receipt when it ended (by model and role; unknown and provider-reported costs kept apart). */
  receipt?: ReceiptView;
  /** The task's executable promise: a command run as a required gate of this task only. */
  check?: string;
  /** The task's fail-to-pass proof in one line (the tests that fail on its base code), when it needed one. */
  proof?: string;
  report?: ReportView;
  /** The task's worktree (relative to the workspace) while it has one: running, or kept after a failure. */
  worktree?: string;
  /** The task's latest state in the merge queue. */
  merge?: MergeState;
  /** Its agent slot went to another task while its gates run (`gates`), or they sent it back and it waits for one (`waiting`); absent: talking to the model. */
  slot?: 'gates' | 'waiting';
  /** Set when `gates` are the merge queue's re-check of the merged result on this branch (not an iteration's). */
  gatesMergeTarget?: string;
  /**
   * The merged check's gates while it runs ahead of the task's own (`merge.checkAhead`): the card
   * keeps showing the agent's own gates meanwhile, and takes these once the task's work is the queue's.
   */
  aheadGates?: GateView[];
  /** The task runs (or ran) as a CI job on the forge. */
  remote?: RemoteView;

  /** What the task asked the person, and the answers (the last ones, oldest first). */
  questions?: QuestionView[];
  /** Status `review`: the held result (from the task's checkpoint). */
  reviewHold?: ReviewHoldView;
  updatedAt: string;
}

export type WarningAction = WarningAnswer | 'dismiss';

/** A warning's id: its run and sequence number (the notification and the panel agree on it). */
export function warningIdOf(runId: string, seq: number): string {
  return `${runId}:${seq}`;
}

export interface WarningView {
  id: string;
  code: string;
  message: string;
  taskId?: string;
  time: string;
  /** The task's iteration and limit when the warning came. */
  iteration?: number;
  maxIterations?: number;
  /** The action taken; the warning stays visible, resolved. */
  resolved?: WarningAction;
}

export interface ErrorView {
  time: string;
  message: string;
  taskId?: string;
}

export interface PanelState {
  version: 1;
  run: RunView;
  /** Tasks seen in runs or restored from checkpoints, least recently active first. */
  tasks: TaskView[];
  /** The task the panel follows: the running one, else the last one that ran. */
  currentTaskId?: string;
  warnings: WarningView[];
  errors: ErrorView[];
  /** Gates run by hand (Run Quality Gates), outside any task. */
  workspaceGates: GateView[];
  /** The merge queue of parallel runs, in order of arrival (landed and sent-back entries stay until the next run). */
  queue: QueueEntryView[];
  /** The branch the queue merges into. */
  mergeTarget?: string;
}

export function emptyPanelState(): PanelState {
  return { version: 1, run: { phase: 'idle' }, tasks: [], warnings: [], errors: [], workspaceGates: [], queue: [] };
}

/** Merge states in which the queue still holds the task (its agent is done with it for now). */
export const IN_QUEUE: readonly MergeState[] = ['queued', 'merging', 'checking', 'waiting'];

/** The running agents: tasks in progress whose work is not in the merge queue. */
export function runningAgents(state: PanelState): TaskView[] {
  return state.tasks.filter((t) => t.status === 'in_progress' && !(t.merge && IN_QUEUE.includes(t.merge)));
}

export function emptyTask(id: string, title: string, status: TaskStatus, time: string): TaskView {
  return {
    id,
    title,
    status,
    iteration: 0,
    elapsedMs: 0,
    commits: 0,
    tokens: 0,
    costUsd: 0,
    unpricedTokens: 0,
    includedTokens: 0,
    gates: [],
    iterations: [],
    delegations: [],
    stream: [],
    updatedAt: time,
  };
}

/** The actions the UI offers on a warning: a safeguard's answers (the core's warning policy), else Dismiss. */
export function warningActions(code: string): readonly WarningAction[] {
  return warningRule(code)?.answers ?? ['dismiss'];
}

export const WARNING_ACTION_LABEL: Readonly<Record<WarningAction, string>> = {
  continue: 'Continue',
  stop: 'Stop',
  increaseMax: 'Increase Max',
  reviewErrors: 'Review Errors',
  dismiss: 'Dismiss',
};

/**
 * A stable fingerprint of the state (FNV-1a over canonical JSON: sorted keys, no undefined),
 * so that the host's state and the webview's rebuilt one compare equal whatever the key order.
 */
export function stateDigest(state: PanelState): string {
  const text = canonicalJson(state);
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return `${text.length.toString(16)}-${hash.toString(16).padStart(8, '0')}`;
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record)
    .filter((k) => record[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(record[k])}`).join(',')}}`;
}
