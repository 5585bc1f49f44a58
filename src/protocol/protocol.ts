/**
 * The one protocol between the progress panel's host (`src/ui/panel`) and its webview
 * (`src/webview`): a discriminated union each way. The webview says `ready`; the host answers
 * with a full `snapshot`, then sends the inputs that follow in batches (`inputs`), each batch
 * numbered so the webview can tell a gap and ask to `resync`. After applying a message the
 * webview reports the sequence number it reached and a digest of its state (`applied`).
 *
 * Types and constants only (the webview bundle imports this file); the zod schemas that check
 * every message the host receives are in `protocolSchema.ts`.
 */
import type { PanelInput } from './panelInput';
import type { PanelState, WarningAction } from './panelState';

/** The `viewType` of the panel (also its serializer's key). */
export const PANEL_VIEW_TYPE = 'ralph.progress';

/** Host → webview. */
export type HostMessage =
  /** The whole model as of `seq`; replaces whatever the webview had. */
  | { type: 'snapshot'; seq: number; state: PanelState }
  /** Inputs `fromSeq..toSeq` in order (adjacent `model.delta` texts may arrive joined). */
  | { type: 'inputs'; fromSeq: number; toSeq: number; inputs: PanelInput[] }
  /** Show this task (the panel was opened on it from the tree). */
  | { type: 'focusTask'; taskId: string };

/** Commands the panel's buttons may run; each maps to `ralph.<name>` with the task id. */
export const PANEL_COMMANDS = [
  'startAutopilot',
  'addTask',
  'retryTask',
  'editTask',
  'increaseMaxIterations',
  'unblockTask',
  'cancelTask',
  'rollbackTask',
  'showReport',
  'runSelectedTask',
  'pause',
  'resume',
  'stop',
  'showLog',
  'runGates',
  'selectModel',
  'cleanUpWorktree',
  'answerTask',
  'showChanges',
  'approveTask',
  'requestChanges',
  'rejectTask',
  'showReviews',
  'conveneCouncil',
  'retryMerge',
  'keepOnBranch',
  'openWaitingFiles',
  'openRemote',
] as const;
export type PanelCommand = (typeof PANEL_COMMANDS)[number];

export const WARNING_ACTION_IDS = [
  'continue',
  'stop',
  'increaseMax',
  'reviewErrors',
  'dismiss',
] as const satisfies readonly WarningAction[];

/** Webview → host. */
export type WebviewMessage =
  /** The webview is listening; `seq` is what it restored from its saved state, if anything. */
  | { type: 'ready'; seq?: number }
  /** The webview applied everything up to `seq`; `digest` is `stateDigest` of its state. */
  | { type: 'applied'; seq: number; digest: string }
  /** The webview saw a gap in the sequence and wants a snapshot. */
  | { type: 'resync'; reason?: string }
  /** A button: run `ralph.<command>` (on `taskId` when given). */
  | { type: 'command'; command: PanelCommand; taskId?: string }
  /** The user's answer to a warning. */
  | { type: 'warningAction'; warningId: string; action: WarningAction }
  /** Open a report under `.ralph/reports/` in the editor. */
  | { type: 'openFile'; path: string }
  /** The person's answer to the task's question (the answer box); `approved` answers a gated command, `verdict` whether failing tests are part of the task. */
  | { type: 'answer'; taskId: string; text: string; approved?: boolean; verdict?: 'part' | 'unrelated' }
  /** Request Changes on a task waiting for review, with the feedback typed in the panel. */
  | { type: 'requestChanges'; taskId: string; text: string };

export type WebviewMessageType = WebviewMessage['type'];
