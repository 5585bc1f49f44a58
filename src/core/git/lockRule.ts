import { errorMessage, RalphError } from '../errors';
import { type GitResult, runGit } from './gitExec';
import { clearStaleGitLock, type IndexLockCheck } from './indexLock';

/**
 * How long a lock that is kept (a git process works in the repository, or the lock is too young
 * to judge) is waited for before giving up: long enough for the editor's own `git status` or a
 * commit hook, short enough that nothing waits forever.
 */
export const GIT_LOCK_WAIT_MS = 15_000;
const POLL_MS = 250;
/** Operations tried at most this often against locks that keep coming back. */
const MAX_ATTEMPTS = 3;

/** Git could not take its lock, and the lock is not stale: the work stops here with the way out. */
export class GitLockHeldError extends RalphError {
  constructor(
    message: string,
    readonly file: string,
  ) {
    super(message, 'git-lock-held');
  }
}

export interface LockRuleOptions {
  /** What the lock keeps git from changing, for the message ("your working tree", "the merge worktree"). */
  where: string;
  /** Paths as shown to the user (relative to the workspace). */
  shown?(file: string): string;
  /** A stale lock was removed; the operation is tried again. */
  onCleared?(cleared: { file: string; ageMs: number }): void;
  waitMs?: number;
}

/** The lock file git could not create, from its message (`Unable to create '<file>': File exists.`). */
export function lockFileOf(text: string): string | undefined {
  return /Unable to create '([^']+\.lock)': File exists/.exec(text)?.[1];
}

/**
 * The one rule for git's lock files, on every path (the user's working tree, a task's worktree,
 * the merge worktree): a lock no git process holds and older than a git start-up is removed
 * and the operation tried again; a lock that stays held past `waitMs` stops the operation with
 * a `GitLockHeldError` naming the lock, why it was kept and how to go on. Never a retry forever.
 */
export async function underGitLockRule<T>(root: string, op: () => Promise<T>, options: LockRuleOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (error) {
      const file = lockFileOf(errorMessage(error));
      if (!file) throw error;
      await settleOrThrow(root, file, attempt, options);
    }
  }
}

/** `runGit` under the rule: a lock failure is settled and the command run again; other failures are returned as they are. */
export async function runGitUnderLockRule(
  root: string,
  cwd: string,
  args: readonly string[],
  options: LockRuleOptions,
  gitOptions: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<GitResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await runGit(cwd, args, gitOptions);
    const file = result.code === 0 ? undefined : lockFileOf(result.stderr);
    if (!file) return result;
    await settleOrThrow(root, file, attempt, options);
  }
}

async function settleOrThrow(root: string, file: string, attempt: number, options: LockRuleOptions): Promise<void> {
  const shown = options.shown ?? ((f: string) => f);
  if (attempt >= MAX_ATTEMPTS) {
    throw new GitLockHeldError(
      `git cannot change ${options.where}: ${shown(file)} came back ${attempt} times (a git process keeps taking it); once no git process works in this repository, run again`,
      file,
    );
  }
  const check = await settleGitLock(root, file, options.waitMs ?? GIT_LOCK_WAIT_MS);
  if (check.state === 'removed') options.onCleared?.({ file: check.file, ageMs: check.ageMs });
  if (check.state !== 'kept') return;
  const waited = Math.round((options.waitMs ?? GIT_LOCK_WAIT_MS) / 1000);
  throw new GitLockHeldError(
    `git cannot change ${options.where}: ${shown(check.file)} was kept because ${check.why} (waited ${waited} s); once no git process works in this repository, delete it (rm ${shown(check.file)}) and run again`,
    check.file,
  );
}

/**
 * Judges `file` until it is gone or removed as stale, or `waitMs` passed: a young lock ages into
 * judgement, a git process at work may finish. A path outside the repository's git dirs is
 * answered at once (kept), never waited on.
 */
export async function settleGitLock(
  root: string,
  file: string | undefined,
  waitMs: number,
  sleep = (ms: number) => new Promise((r) => setTimeout(r, ms)),
): Promise<IndexLockCheck> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const check = await clearStaleGitLock(root, file);
    if (check.state !== 'kept' || check.why.startsWith('it is not') || Date.now() >= deadline) return check;
    await sleep(Math.max(1, Math.min(POLL_MS, deadline - Date.now())));
  }
}
