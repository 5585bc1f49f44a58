/** Base class of every error the core raises on purpose; `code` is stable for tests and the CLI. */
export class RalphError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A file under `.ralph/` (or a setting) that does not match its schema. */
export class ConfigError extends RalphError {
  constructor(
    message: string,
    readonly file?: string,
  ) {
    super(message, 'config');
  }
}

/** Another process holds the run lock of this workspace. */
export class LockError extends RalphError {
  constructor(
    message: string,
    readonly holderPid?: number,
  ) {
    super(message, 'locked');
  }
}

/** A path that resolves outside the workspace, into `.git/`, or through a link leaving it. */
export class PathEscapeError extends RalphError {
  constructor(message: string) {
    super(message, 'path-escape');
  }
}

/**
 * What kind of provider fault a model call ended with; each kind has its own behaviour
 * (see docs/models.md, "Provider faults"). Shared by every provider adapter.
 *   rate_limit      429 / "slow down": retry after the server's delay
 *   quota           quota exhausted / billing: no retry; fall back or halt with the provider's message
 *   auth            bad or missing key / no permission: halt at once, name the key's source
 *   context_length  the request is larger than the model's context: compact and retry once
 *   outage          5xx, connection resets, timeouts: retry, then fall back
 *   content_filter  the provider blocked the request or reply: fed back to the agent
 *   not_found       the model does not exist (any more) at the provider
 *   consent         the user refused the editor's consent prompt for the model
 *   bad_request     any other 4xx: a bug or an incompatible endpoint, no retry
 *   unknown         anything else
 */
export type ModelFaultKind =
  'rate_limit' | 'quota' | 'auth' | 'context_length' | 'outage' | 'content_filter' | 'not_found' | 'consent' | 'bad_request' | 'unknown';

/** The model endpoint failed after every retry, or answered something unusable. */
export class ModelError extends RalphError {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
    /** The fault's kind when the adapter could tell it apart. */
    readonly fault: ModelFaultKind = 'unknown',
  ) {
    super(message, 'model');
  }
}

/** The run was asked to stop (user Stop, Ctrl-C). */
export class StopRequestedError extends RalphError {
  constructor(message = 'stop requested') {
    super(message, 'stopped');
  }
}

export class TaskNotFoundError extends RalphError {
  constructor(readonly taskId: string) {
    super(`no task with id "${taskId}" in .ralph/tasks.json`, 'task-not-found');
  }
}

export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/**
 * A rollback that would change or lose other work, so nothing was changed: `dirty` (uncommitted
 * changes in files the revert touches), `conflict` (later commits changed the same lines),
 * `busy` (a merge, rebase or revert is in progress, or HEAD moved meanwhile).
 */
export class RollbackBlockedError extends RalphError {
  constructor(
    message: string,
    readonly reason: 'dirty' | 'conflict' | 'busy',
    readonly files: readonly string[] = [],
  ) {
    super(message, `rollback-${reason}`);
  }
}
