import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RalphError } from '../errors';
import { removeTree } from '../util/removeTree';
import { commitPathspec, linksIn, stageWork } from './commitPaths';
import { git, GitCommandError, gitStatus, runGit } from './gitExec';
import { lockFileOf, underGitLockRule } from './lockRule';
import {
  type ConflictHunk,
  extractConflictBlocks,
  MAX_HUNK_CHARS,
  MAX_HUNKS_CHARS,
  mergeByTree,
  mergeTreeSupported,
  parseMarkers,
} from './mergeTree';
import { RefReader } from './refRead';
import { uncommittedFiles, type WorktreeManager } from './worktrees';

/**
 * How a task's branch is brought onto the target's tip.
 * - `squash` (default): one three-way merge of the branch into the tip, committed as ONE commit
 *   whose only parent is the tip. That commit is exactly the tree the queue's gates checked, so
 *   the target is green at every commit it gains, history stays linear and bisectable, and a
 *   conflict is met once — not once per iteration commit as a rebase would replay them. A
 *   rebase also puts every iteration commit on the target, most of which were never green.
 * - `merge`: a `--no-ff` merge commit; the first-parent chain of the target is green at every
 *   step and the iteration commits stay reachable through the second parent.
 */
export type MergeStrategy = 'squash' | 'merge';

export type { ConflictHunk };

/** A task's branch to merge: its id, its commit's title and notes; `fresh` when it completed in this run (it cannot have landed before). */
export interface MergeTask {
  id: string;
  title: string;
  notes?: readonly string[];
  fresh?: boolean;
  /** The branch's commit to merge, read by the caller (a check built ahead of the task's own gates keeps it); default: the branch's tip now. */
  tip?: string;
}

export type PrepareResult =
  /** A commit `result` on top of `base`, in the merge worktree only: the target has not moved. */
  | { kind: 'ready'; base: string; result: string }
  /** The branch adds nothing the target does not already have. */
  | { kind: 'empty'; base: string }
  /** A commit of the target already carries this exact branch tip (a crash after landing). */
  | { kind: 'already-merged'; commit: string }
  | { kind: 'conflict'; base: string; files: string[]; hunks: ConflictHunk[] };

export type LandResult =
  | { kind: 'landed'; commit: string; followed: string[] }
  /** The target moved since `base` (the user committed): prepare again on the new tip. */
  | { kind: 'moved'; tip: string | undefined }
  /** A working tree with the target checked out has uncommitted changes the merge would touch. */
  | { kind: 'waiting'; worktree: string; files: string[]; reason: string };

const TRAILER_TASK = 'Ralph-Task';
const TRAILER_TIP = 'Ralph-Branch-Tip';
const FALLBACK_IDENTITY: NodeJS.ProcessEnv = {
  GIT_AUTHOR_NAME: 'Ralph Loop',
  GIT_AUTHOR_EMAIL: 'ralph-loop@localhost',
  GIT_COMMITTER_NAME: 'Ralph Loop',
  GIT_COMMITTER_EMAIL: 'ralph-loop@localhost',
};

/**
 * The queue's git side: a dedicated worktree (`.ralph/worktrees/_merge`, detached) in which a
 * task's branch is merged onto the target's tip and checked, and the compare-and-swap that
 * advances the target only when it still points where the check started.
 */
export class MergeWorkspace {
  /** The merge worktree was made or found registered by this process (later checks need no `git worktree list`). */
  private ensured = false;
  /** What this process left the merge worktree at: a commit, and whether anything ran there since. */
  private left: { commit: string; clean: boolean } | undefined;
  /** The trees of the merge commits built here (commit → tree), so the next prefix need not ask git. */
  private readonly trees = new Map<string, string>();
  /** The committer identity of the merge commits, looked up once a run. */
  private identity: Promise<NodeJS.ProcessEnv> | undefined;

  /** Branch tips and the checkouts of the target, read from git's files (no process per look). */
  readonly refs: RefReader;

  constructor(
    private readonly worktrees: WorktreeManager,
    /** Told of each stale git lock the queue removed (for a warning). */
    private readonly onLockCleared?: (cleared: { file: string; ageMs: number }) => void,
    /** This workspace's worktree: `.ralph/worktrees/_merge` unless the queue checks several prefixes at once. */
    private readonly dir: string = worktrees.mergePath,
  ) {
    this.refs = new RefReader(worktrees.root);
  }

  get path(): string {
    return this.dir;
  }

  /**
   * Merges `ralph/<taskId>` onto `onto` (default: the current tip of `target`) — as objects
   * only where git can (`merge-tree --write-tree`), else in the merge worktree — never touching
   * the target.
   */
  prepare(task: MergeTask, target: string, strategy: MergeStrategy, onto?: string): Promise<PrepareResult> {
    return this.underLockRule('the merge worktree', () => this.prepareOnce(task, target, strategy, onto));
  }

  private async prepareOnce(task: MergeTask, target: string, strategy: MergeStrategy, onto: string | undefined): Promise<PrepareResult> {
    const branch = this.worktrees.branchFor(task.id);
    const [branchTip, tip] = await Promise.all([task.tip ?? this.refs.branchTip(branch), this.refs.branchTip(target)]);
    if (!branchTip) throw new RalphError(`task ${task.id} has no branch ${branch} to merge`, 'no-task-branch');
    if (!tip) throw new RalphError(`target branch "${target}" does not exist`, 'no-target-branch');
    const base = onto ?? tip;
    // only work that may have landed before (a crash, an earlier run) is looked for on the target
    const already = task.fresh ? undefined : await this.findLanded(target, task.id, branchTip);
    if (already) return { kind: 'already-merged', commit: already };
    const notes = task.notes?.length ? `${task.notes.join('\n')}\n\n` : '';
    const message = `ralph(${task.id}): ${task.title}\n\n${notes}${TRAILER_TASK}: ${task.id}\n${TRAILER_TIP}: ${branchTip}\n`;
    if (await mergeTreeSupported(this.worktrees.root)) {
      return mergeByTree({
        root: this.worktrees.root,
        base,
        branchTip,
        branch,
        strategy,
        message,
        env: await this.identityEnv(),
        trees: this.trees,
      });
    }
    return this.prepareInWorktree(branch, base, strategy, message);
  }

  /** The merge as a checkout (git older than 2.38): in this workspace's worktree, committed there. */
  private async prepareInWorktree(branch: string, base: string, strategy: MergeStrategy, message: string): Promise<PrepareResult> {
    if ((await runGit(this.worktrees.root, ['merge-base', '--is-ancestor', branch, base])).code === 0) return { kind: 'empty', base };

    await this.checkout(base);
    this.left = undefined; // a merge in progress from here until it is committed or undone
    const args = strategy === 'squash' ? ['merge', '--squash', '--no-commit', branch] : ['merge', '--no-ff', '--no-commit', branch];
    const merged = await runGit(this.path, args);
    // one look at the index answers both: the unmerged paths, and whether anything is staged at all
    const index = await gitStatus(this.path, ['--untracked-files=no', '--no-renames']);
    const unmerged = index.conflicted;
    const staged = index.files.filter((f) => f.index !== ' ' && f.index !== '?');
    if (unmerged.length > 0) {
      const hunks = await conflictHunks(this.path, unmerged);
      await this.checkout(base); // aborts the merge: MERGE_HEAD, index and files back to the tip
      return { kind: 'conflict', base, files: unmerged, hunks };
    }
    if (merged.code !== 0) throw new RalphError(`git ${args.join(' ')} failed: ${(merged.stderr || merged.stdout).trim()}`, 'git');
    const markers = await leftoverMarkers(this.path);
    if (markers.length > 0) {
      // an agent committed an unresolved conflict: textually clean, yet it must never reach the target
      await this.checkout(base);
      return {
        kind: 'conflict',
        base,
        files: [...new Set(markers.map((m) => m.file))],
        hunks: markers.map((m) => ({ file: m.file, text: `leftover conflict marker at line ${m.line}` })),
      };
    }
    if (staged.length === 0) {
      await this.checkout(base);
      return { kind: 'empty', base };
    }
    this.left = undefined;
    await git(this.path, ['commit', '--no-verify', '-q', '-F', '-'], { input: message, env: await this.identityEnv() });
    const result = (await git(this.path, ['rev-parse', 'HEAD'])).trim();
    // everything the merge staged is in that commit: the tree is exactly the result
    this.left = { commit: result, clean: true };
    return { kind: 'ready', base, result };
  }

  /**
   * Advances `target` from `base` to `result` atomically (`update-ref` with the expected old
   * value). A working tree that has the target checked out follows: its index and files move
   * with a two-tree `read-tree -m -u`, which carries the user's unrelated changes forward and
   * refuses to overwrite any. When the user's uncommitted changes touch a file of the merge,
   * nothing moves and the answer says which files.
   */
  land(target: string, base: string, result: string): Promise<LandResult> {
    return this.underLockRule(`${target} and the working trees that have it checked out`, () => this.landOnce(target, base, result));
  }

  private async landOnce(target: string, base: string, result: string): Promise<LandResult> {
    const tip = await this.refs.branchTip(target);
    if (tip !== base) return { kind: 'moved', tip };
    const followers = await this.refs.checkoutsOf(target);
    // the merge's files matter only against a tree with uncommitted changes: asked alongside the first look at one
    const merging =
      followers.length > 0
        ? git(this.worktrees.root, ['diff', '--name-only', '-z', base, result]).then((out) => out.split('\0').filter(Boolean))
        : undefined;
    merging?.catch(() => undefined); // awaited below only where a tree has changes
    for (const worktree of followers) {
      const dirty = await uncommittedFiles(worktree);
      if (dirty.size === 0) continue;
      const changed = await merging!;
      const touched = changed.filter((f) => dirty.has(f));
      if (touched.length > 0) {
        return {
          kind: 'waiting',
          worktree,
          files: touched,
          reason: `uncommitted changes in ${worktree} to ${touched.join(', ')} would be overwritten by the merge; commit or stash them yourself (Ralph never does) and the merge continues`,
        };
      }
    }
    const followed: string[] = [];
    for (const worktree of followers) {
      const moved = await runGit(worktree, ['read-tree', '-m', '-u', base, result]);
      if (moved.code !== 0) {
        await this.unfollow(followed, base, result);
        // a lock is not the user's changes in the way: the rule decides (cleared and tried again, or the run halts)
        if (lockFileOf(moved.stderr)) throw new GitCommandError(['read-tree', '-m', '-u', base, result], moved);
        return {
          kind: 'waiting',
          worktree,
          files: [],
          reason: `${worktree} could not follow the merge: ${moved.stderr.trim().split('\n')[0]}`,
        };
      }
      followed.push(worktree);
    }
    const swapped = await runGit(this.worktrees.root, ['update-ref', '-m', `ralph: merge queue`, `refs/heads/${target}`, result, base]);
    if (swapped.code !== 0) {
      await this.unfollow(followed, base, result);
      if (lockFileOf(swapped.stderr)) throw new GitCommandError(['update-ref', `refs/heads/${target}`], swapped);
      return { kind: 'moved', tip: await this.refs.branchTip(target) };
    }
    return { kind: 'landed', commit: result, followed };
  }

  /** Leaves the merge worktree at `base` with no merge in progress and no stray files. */
  checkout(base: string): Promise<void> {
    return this.underLockRule('the merge worktree', () => this.checkoutOnce(base));
  }

  private async checkoutOnce(base: string): Promise<void> {
    await this.ensure(base);
    // the merge this process committed here last, with nothing run in it since, is that state already:
    // the usual case, where the last merge landed and became the tip the next one starts from
    if (this.left?.commit === base && this.left.clean) return;
    this.left = undefined;
    // HEAD is always detached here: a hard reset moves it and drops any merge in progress
    await git(this.path, ['reset', '-q', '--hard', base]);
    // untracked and ignored files too: the check must see exactly the merged tree, not build output of an earlier one
    await git(this.path, ['clean', '-q', '-ffdx']);
    await this.worktrees.linkShared(this.path);
    this.left = { commit: base, clean: true };
  }

  /** git's locks under the one rule: a stale one is cleared and the step done again, a held one stops it (`GitLockHeldError`). */
  private underLockRule<T>(where: string, op: () => Promise<T>): Promise<T> {
    const root = this.worktrees.root;
    return underGitLockRule(root, op, { where, shown: (file) => path.relative(root, file) || file, onCleared: this.onLockCleared });
  }

  /** Something ran in the merge worktree (the merged check): the next checkout cleans it. */
  used(): void {
    if (this.left) this.left = { ...this.left, clean: false };
  }

  /** The target commit that landed this branch tip, by its trailers; undefined when none did. */
  async findLanded(target: string, taskId: string, branchTip: string): Promise<string | undefined> {
    // a landing commit can only come after the branch forked: the target's commits the branch does not have, not the whole history
    const out = await runGit(this.worktrees.root, [
      'log',
      '-F',
      `--grep=${TRAILER_TIP}: ${branchTip}`,
      '--format=%H%x00%B%x01',
      `${branchTip}..refs/heads/${target}`,
    ]);
    if (out.code !== 0) return undefined;
    for (const record of out.stdout.split('\x01')) {
      const [sha, body] = record.trim().split('\0');
      if (sha && body?.split('\n').includes(`${TRAILER_TASK}: ${taskId}`)) return sha;
    }
    return undefined;
  }

  private ensure(base: string): Promise<void> {
    return this.worktrees.exclusive(() => this.ensureUnlocked(base));
  }

  private async ensureUnlocked(base: string): Promise<void> {
    // made or found by this process already: still there while its `.git` file points at git's record of it
    if (this.ensured && (await this.registeredHere())) return;
    this.left = undefined; // found (another process's) or made anew: its state is not known here
    const listed = await git(this.worktrees.root, ['worktree', 'list', '--porcelain']);
    if (listed.split('\n').includes(`worktree ${this.path}`) && (await fs.stat(path.join(this.path, '.git')).catch(() => undefined))) {
      this.ensured = true;
      return;
    }
    await removeTree(this.path);
    await runGit(this.worktrees.root, ['worktree', 'prune']);
    await this.worktrees.ensureIgnored();
    await git(this.worktrees.root, ['worktree', 'add', '--detach', this.path, base]);
    this.ensured = true;
  }

  /** Whether the merge worktree's `.git` file names a record of it that git still keeps (no git process: a stat). */
  private async registeredHere(): Promise<boolean> {
    const pointer = await fs.readFile(path.join(this.path, '.git'), 'utf8').catch(() => '');
    const gitdir = /^gitdir: (.+)$/m.exec(pointer)?.[1]?.trim();
    if (!gitdir) return false;
    const record = path.resolve(this.path, gitdir);
    return (await fs.stat(path.join(record, 'HEAD')).catch(() => undefined)) !== undefined;
  }

  private async unfollow(worktrees: string[], base: string, result: string): Promise<void> {
    for (const worktree of worktrees) await runGit(worktree, ['read-tree', '-m', '-u', result, base]);
  }

  /** Commits need an author; fresh containers and CI machines often have none configured. */
  private identityEnv(): Promise<NodeJS.ProcessEnv> {
    this.identity ??= identityEnv(this.path);
    return this.identity;
  }
}

/**
 * Brings the target's tip into a task's worktree (a merge commit on its branch), so that its
 * agent works on the new tip. On a conflict the merge is left in progress — the markers are in
 * the files, and the agent's next commit concludes the merge. Returns the conflicting files.
 */
export function mergeTargetInto(worktree: string, target: string, taskId: string, links: readonly string[] = []): Promise<string[]> {
  return underGitLockRule(worktree, () => mergeTargetIntoOnce(worktree, target, taskId, links), { where: `the worktree of ${taskId}` });
}

/** `links`: the paths linked into the worktree (`worktrees.link`), never its work. */
async function mergeTargetIntoOnce(worktree: string, target: string, taskId: string, links: readonly string[]): Promise<string[]> {
  const own = await linksIn(worktree, links);
  if ((await gitStatus(worktree, ['--untracked-files=all', ...commitPathspec(own)])).files.length > 0) {
    await stageWork(worktree, own);
    await git(worktree, ['commit', '--no-verify', '-q', '-m', `ralph(${taskId}): uncommitted work before merging ${target}`], {
      env: await identityEnv(worktree),
    });
  }
  const merged = await runGit(
    worktree,
    ['merge', '--no-ff', '--no-edit', '-m', `ralph(${taskId}): merge ${target} (merge queue)`, target],
    { env: await identityEnv(worktree) },
  );
  const unmerged = (await git(worktree, ['diff', '--name-only', '-z', '--diff-filter=U'])).split('\0').filter(Boolean);
  if (merged.code !== 0 && unmerged.length === 0)
    throw new RalphError(`could not merge ${target} into the worktree of ${taskId}: ${(merged.stderr || merged.stdout).trim()}`, 'git');
  return unmerged;
}

async function identityEnv(dir: string): Promise<NodeJS.ProcessEnv> {
  const set = (await runGit(dir, ['config', '--get-regexp', '^user\\.(name|email)$'])).stdout.split('\n');
  const has = (key: string) => set.some((line) => line.startsWith(`${key} `) && line.slice(key.length + 1).trim() !== '');
  return has('user.name') && has('user.email') ? {} : FALLBACK_IDENTITY;
}

/** Conflict markers staged in the merge worktree (`git diff --check` names them). */
async function leftoverMarkers(dir: string): Promise<{ file: string; line: number }[]> {
  return parseMarkers((await runGit(dir, ['diff', '--cached', '--check'])).stdout);
}

async function conflictHunks(dir: string, files: string[]): Promise<ConflictHunk[]> {
  const hunks: ConflictHunk[] = [];
  let budget = MAX_HUNKS_CHARS;
  for (const file of files) {
    if (budget <= 0) break;
    const text = await fs.readFile(path.join(dir, file), 'utf8').catch(() => undefined);
    const blocks =
      text === undefined ? '(binary or deleted on one side)' : extractConflictBlocks(text) || '(deleted on one side, changed on the other)';
    const capped =
      blocks.length > Math.min(MAX_HUNK_CHARS, budget) ? `${blocks.slice(0, Math.min(MAX_HUNK_CHARS, budget))}\n… [truncated]` : blocks;
    budget -= capped.length;
    hunks.push({ file, text: capped });
  }
  return hunks;
}
