import { RalphError } from '../errors';
import type { RalphEventBody } from '../events';
import { GitLockHeldError } from '../git/lockRule';

/**
 * A run that must stop by itself, not by the user: a git lock held in a tree every task needs
 * (the user's working tree, the merge worktree, the target's ref) would make every agent and
 * every merge wait on it. The running agents are stopped as by Stop (state saved, resumable),
 * with the reason, and nothing new starts.
 */
export class RunHalt {
  private readonly controller = new AbortController();
  private why: string | undefined;

  /** Aborts when the run halts; its reason is a `RalphError` with code `run-halted`. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get reason(): string | undefined {
    return this.why;
  }

  halt(reason: string, emit: (body: RalphEventBody) => void): void {
    if (this.why !== undefined) return;
    this.why = reason;
    emit({ type: 'warning', code: 'run-halted', message: `the run stops: ${reason}` });
    this.controller.abort(new RalphError(reason, 'run-halted'));
  }
}

/** Why an error of the merge queue halts the whole run, or undefined when it does not. */
export function runHaltOf(error: unknown): string | undefined {
  return error instanceof GitLockHeldError ? error.message : undefined;
}

/** The reason a run halted by itself, from the abort signal its agents got; undefined for the user's Stop. */
export function runHaltReason(stop: AbortSignal): string | undefined {
  const reason: unknown = stop.reason;
  return reason instanceof RalphError && reason.code === 'run-halted' ? reason.message : undefined;
}
