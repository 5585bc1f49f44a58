import type { RalphConfig } from '../config/schema';
import type { RalphEventBody } from '../events';
import { runGit } from '../git/gitExec';

/**
 * The branch the queue merges into: `merge.targetBranch`, else the branch checked out now.
 * Worktrees need a commit to start from: without one (a fresh repository) or without a
 * branch (detached HEAD) the run goes one task at a time in the workspace, and says why.
 */
export async function mergeTarget(
  workspace: string,
  config: Pick<RalphConfig, 'merge'>,
  emit: (body: RalphEventBody) => void,
): Promise<string | undefined> {
  const head = await runGit(workspace, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  const target = config.merge.targetBranch ?? (head.code === 0 ? head.stdout.trim() : undefined);
  const why = !target
    ? 'the workspace has no branch checked out (detached HEAD) and merge.targetBranch is not set'
    : (await runGit(workspace, ['rev-parse', '--verify', '--quiet', `refs/heads/${target}^{commit}`])).code !== 0
      ? `the target branch ${target} has no commit to start worktrees from`
      : undefined;
  if (!why) return target;
  emit({ type: 'warning', code: 'parallel-unavailable', message: `running one task at a time in the workspace: ${why}` });
  return undefined;
}
