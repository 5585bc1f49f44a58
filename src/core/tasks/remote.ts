import { z } from 'zod';

/**
 * Where a task that runs as a CI job stands on the forge, as the tree, the panel and
 * `ralph remote status` show it: `queued` (dispatched, the job has not started), `running`,
 * `pr-open` (the job ended and its pull request waits: for auto-merge, a review, or as a draft
 * after a failure), `in-queue` (in the forge's merge queue), `merged`, `failed`.
 */
export const REMOTE_STATES = ['queued', 'running', 'pr-open', 'in-queue', 'merged', 'failed'] as const;
export type RemoteState = (typeof REMOTE_STATES)[number];

/** Remote states in which the forge still works on the task: no local run may take it. */
export const REMOTE_ACTIVE: ReadonlySet<RemoteState> = new Set(['queued', 'running', 'pr-open', 'in-queue']);

/** Task `remote` (DESIGN §7): `{ state, url }` plus what following the task needs. */
export const TaskRemoteSchema = z.strictObject({
  state: z.enum(REMOTE_STATES),
  /** The job while it runs, the pull request once there is one. */
  url: z.string(),
  /** The workflow run that works on the task now. */
  runId: z.number().int().optional(),
  /** The task's pull request. */
  pr: z.number().int().optional(),
  /** When the task was last dispatched (ISO). */
  dispatchedAt: z.string().optional(),
  /** The dispatch's id (the run's title names it): finds the run when the forge did not say which it started. */
  dispatch: z.string().optional(),
  /** Times the merge queue removed its pull request and it went back to its agent. */
  returns: z.number().int().min(0).optional(),
  /** The last merge-queue removal already handled (ISO time of the forge's event). */
  removedAt: z.string().optional(),
  /** One line on the state: the job's conclusion, the queue's reason. */
  detail: z.string().optional(),
});
export type TaskRemote = z.infer<typeof TaskRemoteSchema>;

/** Whether the forge holds the task now (dispatched and neither merged nor failed). */
export function remoteActive(remote: TaskRemote | undefined): boolean {
  return remote !== undefined && REMOTE_ACTIVE.has(remote.state);
}
