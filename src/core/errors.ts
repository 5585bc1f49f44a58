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

/** The model endpoint failed after every retry, or answered something unusable. */
export class ModelError extends RalphError {
  constructor(
    message: string,
    readonly status?: number,
    readonly retryable = false,
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
