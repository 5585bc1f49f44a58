import { errorMessage } from '../../errors';
import { GitLockHeldError, underGitLockRule } from '../../git/lockRule';
import type { CommitInfo } from '../../git/gitService';
import type { Task } from '../../tasks/schema';
import type { TaskLoopServices } from './types';

/** The iteration's own commit, when a killed process made it before recording it. */
export async function committedAlready(services: TaskLoopServices, task: Task, n: number): Promise<{ commit: CommitInfo } | undefined> {
  const [head] = await services.git.log(1).catch(() => []);
  if (head?.message !== iterationMessage(task, n)) return undefined;
  const changes = await services.git.changesSince(`${head.sha}~1`).catch(() => undefined);
  const files = changes ? [...changes.added, ...changes.modified, ...changes.deleted] : [];
  return { commit: { sha: head.sha, files } };
}

function iterationMessage(task: Task, n: number): string {
  return `ralph(${task.id}): iteration ${n}`;
}

/**
 * Commits the iteration's work (`changed`: what the `git status` taken alongside the write-ahead
 * checkpoint said). A failure is the iteration's failure (returned, not swallowed). git's locks
 * follow the one rule (`underGitLockRule`): a stale `index.lock` no live git process holds is
 * cleared and the commit tried again; one that stays held stops the commit with the way out.
 */
export async function commitIteration(
  services: TaskLoopServices,
  task: Task,
  n: number,
  changed: boolean | undefined,
): Promise<{ commit: CommitInfo | undefined } | CommitFailure> {
  if (!services.config.loop.commitEachIteration) return { commit: undefined };
  const message = iterationMessage(task, n);
  const root = (services.work ?? services.paths).workspace;
  let hint = changed;
  try {
    const commit = await underGitLockRule(
      root,
      () => {
        const known = hint;
        hint = undefined; // a retry looks again
        return services.guard.orchestratorCommit(() => services.git.commitAll(message, known));
      },
      {
        where: services.work ? `the worktree of ${task.id}` : 'your working tree',
        shown: (file) => services.paths.relative(file),
        onCleared: ({ file, ageMs }) =>
          services.emit({
            type: 'warning',
            taskId: task.id,
            code: 'git-lock-cleared',
            message: `removed a stale ${services.paths.relative(file)} (${Math.round(ageMs / 1000)} s old, no git process works in this repository) and committed again`,
          }),
      },
    );
    if (commit) services.emit({ type: 'git.commit', taskId: task.id, iteration: n, sha: commit.sha, message, files: commit.files });
    if (commit?.withheld)
      services.emit({
        type: 'warning',
        taskId: task.id,
        code: 'secret-withheld',
        message: `not committed, they hold a secret value: ${commit.withheld.join(', ')}`,
      });
    return { commit };
  } catch (error) {
    const held = error instanceof GitLockHeldError;
    const text = `could not commit iteration ${n}: ${errorMessage(error).trim()}${held ? ` (resume with: ralph run --task ${task.id}; iteration ${n} is committed then, without a new model call)` : ''}; the iteration's changes are uncommitted in the working tree`;
    services.emit({ type: 'warning', taskId: task.id, code: 'commit-failed', message: text });
    return { error: text, lockHeld: held, sharedTree: services.work === undefined };
  }
}

export interface CommitFailure {
  error: string;
  /** A git lock that stayed held: the iteration is finished by the next run from its write-ahead record. */
  lockHeld: boolean;
  /** The commit was in the user's working tree, which every task shares: the run cannot go on. */
  sharedTree: boolean;
}
