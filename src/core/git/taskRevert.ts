import { existsSync, promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RollbackBlockedError } from '../errors';
import { git, runGit } from './gitExec';
import { withWorktreeLock } from './worktrees';
import { type CommitAuthor, commitsTouching, dirtyPaths, filesOfCommits, type TaskCommit } from './taskCommits';

/** The empty tree: the "parent" of a root commit. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const FALLBACK_IDENTITY = ['-c', 'user.name=Ralph Loop', '-c', 'user.email=ralph-loop@localhost'];

/** A file a revert could not undo, and the later commits that changed it. */
export interface RevertBlocker {
  file: string;
  commits: CommitAuthor[];
}

/**
 * Which paths a revert undoes: everything but `exclude` (a directory, e.g. `.ralph`: the
 * config and `.gitignore` land in the first task's commit only because nobody committed them
 * before), plus the `include` files inside it (the task's own progress notes).
 */
export interface RevertScope {
  exclude?: string;
  include?: string[];
}

export interface RevertResult {
  /** The revert commit on HEAD; undefined when the changes were already gone (nothing to commit). */
  commit?: string;
  /** Files the revert changed. */
  files: string[];
}

/**
 * Reverts `commits` (oldest first) in one new commit on HEAD, all or nothing. The revert is
 * made in a temporary worktree, so a conflict never touches the person's working tree, index
 * or HEAD; only a clean result is brought over, as a fast-forward. Refuses, changing nothing,
 * when uncommitted changes sit in a file the revert would touch.
 */
export async function revertCommits(
  root: string,
  commits: readonly TaskCommit[],
  message: string,
  scope: RevertScope = {},
): Promise<RevertResult> {
  if (commits.length === 0) return { files: [] };
  await refuseDuringOperation(root);
  // git names files from the repository's top; the workspace may be a folder inside it
  const prefix = (await git(root, ['rev-parse', '--show-prefix'])).trim();
  const excluded = scope.exclude && `${prefix}${scope.exclude}`;
  const included = (scope.include ?? []).map((file) => `${prefix}${file}`);
  const inScope = (file: string) => !excluded || !(file === excluded || file.startsWith(`${excluded}/`)) || included.includes(file);
  const touched = (
    await filesOfCommits(
      root,
      commits.map((c) => c.sha),
    )
  ).filter(inScope);
  const touchedSet = new Set(touched);
  // the revert is committed in its own worktree: other uncommitted work (staged or not) stays as it is
  const dirty = (await dirtyPaths(root)).filter((d) => touchedSet.has(d.path));
  if (dirty.length > 0) {
    const files = [...new Set(dirty.map((d) => d.path))].sort();
    throw new RollbackBlockedError(
      `uncommitted changes in ${files.join(', ')}; the rollback would touch ${files.length === 1 ? 'it' : 'them'}. Commit or stash ${files.length === 1 ? 'it' : 'them'} first; nothing was changed.`,
      'dirty',
      files,
    );
  }
  const head = (await git(root, ['rev-parse', 'HEAD'])).trim();
  const temp = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-rollback-'));
  const tree = path.join(temp, 'tree');
  let newCommit: string | undefined;
  try {
    // in the repository's worktree queue: a prune beside this add (a run's agents, its merge queue) could take its half-written record
    await withWorktreeLock(realpathSync(root), () => git(root, ['worktree', 'add', '--detach', '--quiet', tree, head]));
    const conflicted = await applyReverse(root, tree, temp, [...commits].reverse(), scope);
    if (conflicted.length > 0) {
      const own = new Set(commits.map((c) => c.sha));
      const blockers: RevertBlocker[] = [];
      for (const file of conflicted) blockers.push({ file, commits: await commitsTouching(root, commits[0].sha, file, own) });
      throw new RollbackBlockedError(describeConflict(blockers), 'conflict', conflicted);
    }
    const staged = await runGit(tree, ['diff', '--cached', '--quiet']);
    if (staged.code === 0) return { files: [] };
    const identity = (await hasIdentity(tree)) ? [] : FALLBACK_IDENTITY;
    await git(tree, [...identity, 'commit', '--no-verify', '--quiet', '-m', message]);
    newCommit = (await git(tree, ['rev-parse', 'HEAD'])).trim();
  } finally {
    await withWorktreeLock(realpathSync(root), async () => {
      await runGit(root, ['worktree', 'remove', '--force', tree]);
      await fs.rm(temp, { recursive: true, force: true });
      await runGit(root, ['worktree', 'prune']);
    });
  }
  if ((await git(root, ['rev-parse', 'HEAD'])).trim() !== head) {
    throw new RollbackBlockedError('HEAD moved while the rollback was prepared; nothing was changed. Try again.', 'busy');
  }
  const merged = await runGit(root, ['merge', '--ff-only', '--quiet', newCommit]);
  if (merged.code !== 0) {
    throw new RollbackBlockedError(
      `the rollback could not be applied to the working tree; nothing was changed: ${(merged.stderr || merged.stdout).trim()}`,
      'busy',
    );
  }
  const files = (await git(root, ['diff-tree', '-r', '--no-commit-id', '--name-only', '-z', newCommit])).split('\0').filter(Boolean);
  return { commit: newCommit, files };
}

/**
 * Applies each commit's inverse (newest first) to the temporary worktree's index and files with
 * a three-way merge, as `git revert` would, but limited to the scope. Returns the files that
 * could not be reverted cleanly (empty: all applied).
 */
async function applyReverse(
  root: string,
  tree: string,
  temp: string,
  newestFirst: readonly TaskCommit[],
  scope: RevertScope,
): Promise<string[]> {
  const specs = scope.exclude ? [['.', `:(exclude)${scope.exclude}`], ...(scope.include ?? []).map((file) => [file])] : [['.']];
  for (const [index, commit] of newestFirst.entries()) {
    const parent = (await runGit(root, ['rev-parse', '--verify', '-q', `${commit.sha}^`])).stdout.trim() || EMPTY_TREE;
    let patch = '';
    for (const spec of specs)
      patch += await git(root, ['diff', '--binary', '--full-index', '--no-renames', '--no-color', commit.sha, parent, '--', ...spec]);
    if (!patch.trim()) continue;
    const file = path.join(temp, `revert-${index}.patch`);
    await fs.writeFile(file, patch);
    const applied = await runGit(tree, ['apply', '--3way', '--index', '--whitespace=nowarn', file]);
    if (applied.code === 0) continue;
    const unmerged = (await git(tree, ['diff', '--name-only', '--diff-filter=U', '-z'])).split('\0').filter(Boolean);
    if (unmerged.length > 0) return unmerged;
    // a patch that cannot even be placed (the file is gone since): git names it in its errors
    const named = [
      ...[...applied.stderr.matchAll(/^error: patch failed: (.+):\d+$/gm)].map((m) => m[1]),
      ...[
        ...applied.stderr.matchAll(
          /^error: (.+?): (?:patch does not apply|does not exist in index|already exists in .+|does not match index)$/gm,
        ),
      ].map((m) => m[1]),
    ];
    if (named.length > 0) return [...new Set(named)];
    throw new Error(`git apply failed: ${(applied.stderr || applied.stdout).trim()}`);
  }
  return [];
}

/** "a.txt: changed since by T-002 (abc1234 ralph(T-002): iteration 1), by you (def5678 "tweak")". */
export function describeConflict(blockers: readonly RevertBlocker[]): string {
  const lines = blockers.map(({ file, commits }) => {
    if (commits.length === 0) return `  ${file}`;
    const who = commits.map((c) =>
      c.taskId ? `task ${c.taskId} (${c.sha.slice(0, 7)} ${c.subject})` : `your commit ${c.sha.slice(0, 7)} "${c.subject}"`,
    );
    return `  ${file}: changed since by ${[...new Set(who)].join(', ')}`;
  });
  return `the revert conflicts with later work, so nothing was changed:\n${lines.join('\n')}\nRoll back the later work first, or undo the task's changes by hand.`;
}

async function refuseDuringOperation(root: string): Promise<void> {
  for (const marker of ['MERGE_HEAD', 'CHERRY_PICK_HEAD', 'REVERT_HEAD', 'rebase-merge', 'rebase-apply']) {
    const where = (await git(root, ['rev-parse', '--git-path', marker])).trim();
    if (existsSync(path.resolve(root, where))) {
      throw new RollbackBlockedError(
        `a git ${marker
          .replace(/_HEAD$|-.*$/, '')
          .toLowerCase()
          .replace('_', '-')} is in progress in this repository; finish or abort it first. Nothing was changed.`,
        'busy',
      );
    }
  }
}

async function hasIdentity(cwd: string): Promise<boolean> {
  const author = await runGit(cwd, ['var', 'GIT_AUTHOR_IDENT']);
  const committer = await runGit(cwd, ['var', 'GIT_COMMITTER_IDENT']);
  return author.code === 0 && committer.code === 0;
}
