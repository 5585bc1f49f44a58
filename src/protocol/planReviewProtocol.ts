/**
 * The protocol between the plan review's host (`src/ui/planReview`) and its webview
 * (`src/webview/planReview.ts`): the webview says `ready`, the host answers with the whole
 * review state and sends it again after every change; the webview sends the person's edits
 * (edit, drop, move, merge) and the verdict (accept, discard). The host holds the plan: the
 * webview never decides what is saved. Types only; the zod schema is `planReviewSchema.ts`.
 */

/** The `viewType` of the plan review panel. */
export const PLAN_REVIEW_VIEW_TYPE = 'ralph.planReview';

/** A proposed task as the review shows and edits it. */
export interface ReviewTask {
  key: string;
  title: string;
  prompt: string;
  promise: string;
  check?: string;
  type: string;
  complexity: number;
  /** Keys of other tasks of the plan, or ids of tasks already in the store. */
  dependsOn: string[];
  /** `docs/prd.md#login`. */
  source: string;
  section?: string;
  split?: { from: string; part: number; of: number; reason: string };
  notes: string[];
}

export interface PlanReviewState {
  runId: string;
  document: string;
  section?: string;
  model: string;
  tasks: ReviewTask[];
  /** The model's notes on the plan. */
  notes?: string;
  /** Why it cannot be accepted as it is (a dependency cycle, named); empty when it can. */
  problems: string[];
  /** Tasks already in the store, for dependencies on them. */
  existing: { id: string; title: string }[];
  /** The task types to choose from. */
  types: string[];
  status: 'reviewing' | 'saving' | 'accepted' | 'discarded';
  /** The tasks saved, once accepted. */
  accepted?: { id: string; title: string }[];
  /** What went wrong with the last request (shown until the next change). */
  error?: string;
}

/** Host → webview. */
export type PlanReviewHostMessage = { type: 'state'; state: PlanReviewState };

/** The fields of a task the review edits. */
export interface ReviewEdit {
  title?: string;
  prompt?: string;
  promise?: string;
  /** An empty string removes the check. */
  check?: string;
  type?: string;
  complexity?: number;
  dependsOn?: string[];
}

/** Webview → host. */
export type PlanReviewMessage =
  | { type: 'ready' }
  | { type: 'edit'; key: string; fields: ReviewEdit }
  | { type: 'drop'; key: string }
  /** Move to position `to` (0-based). */
  | { type: 'move'; key: string; to: number }
  /** Merge task `other` into task `into`. */
  | { type: 'merge'; into: string; other: string }
  | { type: 'accept' }
  | { type: 'discard' }
  | { type: 'openReport' }
  | { type: 'openSource'; key: string };

export type PlanReviewMessageType = PlanReviewMessage['type'];
