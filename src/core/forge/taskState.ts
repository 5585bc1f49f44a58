import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RalphError } from '../errors';
import { git, runGit } from '../git/gitExec';

/**
 * Where a task's state travels between CI jobs and machines: a branch of its own,
 * `ralph-state/<taskId>`, whose commits hold only Ralph's files of that task — the task record,
 * its checkpoint (iteration, history, escalation, cost receipt) and its reports. It never shares
 * history with the code: the task's work is on `ralph/<taskId>`, its pull request's head; the
 * state stays out of the pull request and out of the target. A re-run job, a later job, or a
 * local `ralph run` fetches both and resumes where the last one stopped.
 *
 * Written with git plumbing (a temporary index, no checkout), so it never touches a working tree.
 */
export const STATE_BRANCH_PREFIX = 'ralph-state/';

export function stateBranch(taskId: string): string {
  return `${STATE_BRANCH_PREFIX}${taskId}`;
}

/** Files of a task's state, by path inside the state branch (`task.json`, `state/<id>.json`, `reports/<id>/final.md`…). */
export type StateFiles = Record<string, string>;

/** Push and fetch credentials for an https remote: an extra header given to that one git process only. */
export interface GitAuth {
  env: NodeJS.ProcessEnv;
}

/**
 * The git environment that authenticates to an https remote with `token` (the header GitHub's
 * checkout action uses), in the git process's own configuration (GIT_CONFIG_*): nothing is
 * written to `.git/config`, where the agent's commands could read it.
 */
export function tokenAuth(remoteUrl: string, token: string | undefined): GitAuth {
  if (!token || !/^https?:\/\//i.test(remoteUrl)) return { env: {} };
  const origin = new URL(remoteUrl);
  const basic = Buffer.from(`x-access-token:${token}`).toString('base64');
  return {
    env: {
      GIT_CONFIG_COUNT: '1',
      GIT_CONFIG_KEY_0: `http.${origin.protocol}//${origin.host}/.extraheader`,
      GIT_CONFIG_VALUE_0: `AUTHORIZATION: basic ${basic}`,
    },
  };
}

/** Fetches `refs/heads/<branch>` of `remote` into `local` (a ref); false when the remote has no such branch. */
export async function fetchRef(workspace: string, remote: string, branch: string, local: string, auth: GitAuth): Promise<boolean> {
  const result = await runGit(workspace, ['fetch', '--no-tags', '--quiet', remote, `+refs/heads/${branch}:${local}`], { env: auth.env });
  if (result.code === 0) return true;
  if (/couldn't find remote ref|no such ref|not our ref/i.test(result.stderr)) return false;
  throw new RalphError(`could not fetch ${branch} from ${remote}: ${result.stderr.trim().split('\n').slice(-2).join(' ')}`, 'git');
}

/** The task's state as last pushed, or undefined when it was never pushed. */
export async function loadTaskState(workspace: string, remote: string, taskId: string, auth: GitAuth): Promise<StateFiles | undefined> {
  const ref = `refs/heads/${stateBranch(taskId)}`;
  if (!(await fetchRef(workspace, remote, stateBranch(taskId), ref, auth))) return undefined;
  const listing = await git(workspace, ['ls-tree', '-r', '-z', '--full-tree', ref]);
  const files: StateFiles = {};
  for (const entry of listing.split('\0').filter(Boolean)) {
    const match = /^\d+ blob ([0-9a-f]+)\t(.+)$/s.exec(entry);
    if (match) files[match[2]] = await git(workspace, ['cat-file', 'blob', match[1]]);
  }
  return files;
}

/**
 * Commits `files` as the task's new state (parent: the state as fetched, when there is one) and
 * pushes it. The branch is the task's alone: the push is forced, so a job that lost a race with
 * an older one still leaves the newest state.
 */
export async function saveTaskState(
  workspace: string,
  remote: string,
  taskId: string,
  files: StateFiles,
  message: string,
  auth: GitAuth,
): Promise<string> {
  const ref = `refs/heads/${stateBranch(taskId)}`;
  const index = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-state-')), 'index');
  try {
    const env = { GIT_INDEX_FILE: index };
    for (const [file, content] of Object.entries(files)) {
      const blob = (await git(workspace, ['hash-object', '-w', '--stdin'], { input: content })).trim();
      await git(workspace, ['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`], { env });
    }
    const tree = (await git(workspace, ['write-tree'], { env })).trim();
    const parent = await runGit(workspace, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`]);
    const commit = (
      await git(workspace, ['commit-tree', tree, ...(parent.code === 0 ? ['-p', parent.stdout.trim()] : []), '-m', message], {
        env: identity(),
      })
    ).trim();
    await git(workspace, ['update-ref', ref, commit]);
    await git(workspace, ['push', '--quiet', '--force', remote, `${ref}:${ref}`], { env: auth.env });
    return commit;
  } finally {
    await fs.rm(path.dirname(index), { recursive: true, force: true });
  }
}

/** Pushes the task's branch (its work); never forced: commits someone else added to it are not lost. */
export async function pushBranch(workspace: string, remote: string, branch: string, auth: GitAuth): Promise<void> {
  const result = await runGit(workspace, ['push', '--quiet', remote, `refs/heads/${branch}:refs/heads/${branch}`], { env: auth.env });
  if (result.code !== 0) {
    throw new RalphError(`could not push ${branch} to ${remote}: ${result.stderr.trim().split('\n').slice(-3).join(' ')}`, 'git');
  }
}

/** The committer of state commits when git has none configured (a CI runner). */
function identity(): NodeJS.ProcessEnv {
  return {
    GIT_AUTHOR_NAME: process.env.GIT_AUTHOR_NAME ?? 'Ralph Loop',
    GIT_AUTHOR_EMAIL: process.env.GIT_AUTHOR_EMAIL ?? 'ralph-loop@users.noreply.github.com',
    GIT_COMMITTER_NAME: process.env.GIT_COMMITTER_NAME ?? 'Ralph Loop',
    GIT_COMMITTER_EMAIL: process.env.GIT_COMMITTER_EMAIL ?? 'ralph-loop@users.noreply.github.com',
  };
}
