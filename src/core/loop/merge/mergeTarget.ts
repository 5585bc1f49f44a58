import type { RalphConfig } from '../../config/schema';
import type { RalphEventBody } from '../../events';
import { runGit } from '../../git/gitExec';
import { HeadReader, RefReader } from '../../git/refRead';

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
  // read from git's files (no process on the way to the first agent), else asked of git
  const target = config.merge.targetBranch ?? (await checkedOutBranch(workspace));
  const why = !target
    ? 'the workspace has no branch checked out (detached HEAD) and merge.targetBranch is not set'
    : !(await new RefReader(workspace).branchTip(target))
      ? `the target branch ${target} has no commit to start worktrees from`
      : undefined;
  if (!why) return target;
  emit({ type: 'warning', code: 'parallel-unavailable', message: `running one task at a time in the workspace: ${why}` });
  return undefined;
}

/** The branch checked out in the workspace; undefined on a detached HEAD. */
async function checkedOutBranch(workspace: string): Promise<string | undefined> {
  const read = await new HeadReader(workspace).branch();
  if (read !== undefined) return read ?? undefined;
  const head = await runGit(workspace, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return head.code === 0 ? head.stdout.trim() : undefined;
}
