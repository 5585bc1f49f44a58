/**
 * What changes the panel's model: the loop's events (as the host projects them) and notes the
 * host adds from what it knows besides the event stream (task store, checkpoints, reports,
 * the user's answers to warnings). The host applies each input to its model and sends the
 * same inputs to the webview, which applies them with the same reducer.
 */
import type { IterationOutcome, PanelEvent, TaskStatus } from './panelEvents';
import type { QuestionView, RemoteView, ReviewHoldView, RunPhase, WarningAction } from './panelState';

export type { PanelEvent };

export interface IterationSeed {
  n: number;
  startedAt: string;
  durationMs: number;
  model: string;
  outcome: IterationOutcome;
  signal?: string;
  progress?: number;
  commit?: string;
  error?: string;
  tokens: number;
  gates: { passed: boolean }[];
}

/** What a checkpoint (`.ralph/state/<id>.json`) says about a task's past iterations. */
export interface CheckpointSeed {
  elapsedMs: number;
  commits: number;
  tokens: number;
  costUsd: number;
  unpricedTokens: number;
  /** Tokens of editor models the editor's plan pays for. */
  includedTokens?: number;
  history: IterationSeed[];
  /** The result it holds for review, if any. */
  reviewHold?: ReviewHoldView;
}

/** A task as the store (and, when it has one, its checkpoint) describes it. */
export interface TaskSeed {
  id: string;
  title: string;
  status: TaskStatus;
  maxIterations?: number;
  iterations: number;
  progress?: number;
  lastSignal?: string;
  blockedReason?: string;
  updatedAt: string;
  /** The task's questions and answers (the last few). */
  questions?: QuestionView[];
  checkpoint?: CheckpointSeed;
  /** Where the task stands on the forge while (and after) it runs as a CI job. */
  remote?: RemoteView;
  /** The task's `check` command. */
  check?: string;
  /** Its last fail-to-pass proof, one line. */
  proof?: string;
}

export type HostNote =
  /** Task store (and checkpoints) → model; `adopt` adds tasks the model does not know yet. */
  | { type: 'panel.sync'; time: string; tasks: TaskSeed[]; adopt: boolean }
  /** A report file's content (final reports). */
  | { type: 'panel.report'; taskId: string; file: string; final: boolean; text: string }
  /** The user answered a warning (in the panel or its notification). */
  | { type: 'panel.warningResolved'; id: string; action: WarningAction }
  /** The run's phase as the host knows it (Stop pressed → `stopping`). */
  | { type: 'panel.runPhase'; phase: RunPhase }
  /** A task's worktree as the host found it on disk (`path` absent: it has none any more, e.g. after Clean Up Worktree). */
  | { type: 'panel.worktree'; taskId: string; path?: string };

export type PanelInput = PanelEvent | HostNote;

export type PanelInputType = PanelInput['type'];
export type InputOf<T extends PanelInputType> = Extract<PanelInput, { type: T }>;
