import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { RalphError } from '../errors';
import { readTextIfExists, writeFileAtomic } from '../util/atomicWrite';
import { removeTree } from '../util/removeTree';
import { git, GitCommandError, runGit } from './gitExec';
import { RefReader } from './refRead';
import {
  parseWorktreeList,
  type Registered,
  removeIfExists,
  uncommittedFiles,
  unregisterWorktree,
  withWorktreeLock,
  worktreeGitDir,
} from './worktreeList';

export { uncommittedFiles, withWorktreeLock };

/** Where task worktrees live, relative to the workspace (DESIGN §3). */
export const WORKTREES_DIR = '.ralph/worktrees';
/** The queue's own worktree; `_` cannot start a task id, so it never clashes with one. */
export const MERGE_WORKTREE = '_merge';

/** `_merge`, `_merge-2`, …: the merge queue's worktrees. */
export function isMergeWorktree(name: string): boolean {
  return name === MERGE_WORKTREE || /^_merge-\d+$/.test(name);
}
const BRANCH_PREFIX = 'ralph/';
const TASK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
const EXCLUDE_LINE = `/${WORKTREES_DIR}/`;

export interface TaskWorktree {
  taskId: string;
  path: string;
  /** `ralph/<taskId>`, or undefined when the worktree's HEAD is detached. */
  branch?: string;
  head?: string;
  /** Git's lock reason (`initializing` when a crash interrupted `git worktree add`). */
  locked?: string;
}

export interface CreatedWorktree {
  taskId: string;
  path: string;
  branch: string;
  /** The commit the branch was made from (the target's tip), or the branch's tip when it already existed. */
  base: string;
  /** False when an existing worktree (or branch) of the task was picked up again. */
  created: boolean;
}

export interface PruneReport {
  removedWorktrees: string[];
  removedBranches: string[];
  removedLocks: string[];
  removedDirs: string[];
}

/** A `git worktree add` decided on: its arguments, and the worktree it makes. */
interface AddPlan {
  args: string[];
  made: CreatedWorktree;
}

/**
 * Task worktrees on real git: `.ralph/worktrees/<taskId>` on branch `ralph/<taskId>`, made from
 * the target branch's current tip. Everything it creates can be found again from git alone
 * (`git worktree list`, `refs/heads/ralph/*`), so a crashed run leaves nothing `prune` cannot see.
 */
export class WorktreeManager {
  /** The workspace with symlinks resolved: git reports worktree paths that way. */
  readonly root: string;
  readonly dir: string;

  /**
   * `links`: untracked paths of the workspace (installed dependencies) symlinked into every
   * worktree, so that gates find them; git never sees the links (excluded like the worktrees).
   */
  constructor(
    root: string,
    readonly links: readonly string[] = [],
  ) {
    this.root = realpathSync(root);
    this.dir = path.join(this.root, ...WORKTREES_DIR.split('/'));
    this.refs = new RefReader(this.root);
  }

  /** Runs `work` alone among this repository's worktree commands (see withWorktreeLock). */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    return withWorktreeLock(this.root, work);
  }

  /** Branch tips read from the repository's files. */
  private readonly refs: RefReader;

  pathFor(taskId: string): string {
    return path.join(this.dir, checkedId(taskId));
  }

  branchFor(taskId: string): string {
    return `${BRANCH_PREFIX}${checkedId(taskId)}`;
  }

  get mergePath(): string {
    return path.join(this.dir, MERGE_WORKTREE);
  }

  /** The merge queue's worktree number `n` (0: `_merge`, then `_merge-2`, `_merge-3`, … for concurrent checks). */
  mergePathFor(n: number): string {
    return n === 0 ? this.mergePath : path.join(this.dir, `${MERGE_WORKTREE}-${n + 1}`);
  }

  /**
   * Keeps `.ralph/worktrees/` out of `git status` and `git add -A` of the workspace. It goes to
   * `.git/info/exclude` rather than a tracked `.gitignore`: shared by every worktree, never
   * committed, and it does not dirty the user's working tree.
   */
  async ensureIgnored(): Promise<void> {
    const exclude = path.join(await this.refs.common(), 'info', 'exclude');
    const current = (await readTextIfExists(exclude)) ?? '';
    const lines = current.split('\n').map((line) => line.trim());
    // a symlink is not a directory to git: `node_modules/` in a .gitignore would not hide the link
    const missing = [EXCLUDE_LINE, ...this.links.map((l) => `/${l.replace(/\/+$/, '')}`)].filter((line) => !lines.includes(line));
    if (missing.length === 0) return;
    const sep = current === '' || current.endsWith('\n') ? '' : '\n';
    await writeFileAtomic(exclude, `${current}${sep}# Ralph Loop task worktrees (and the paths linked into them)\n${missing.join('\n')}\n`);
  }

  /** Links the configured paths of the workspace into a worktree (those that exist and are not there yet). */
  async linkShared(worktree: string): Promise<void> {
    for (const rel of this.links) {
      const source = path.join(this.root, rel);
      const target = path.join(worktree, rel);
      if (!(await fs.stat(source).catch(() => undefined))) continue;
      if (await fs.lstat(target).catch(() => undefined)) continue; // tracked there, or linked already
      await fs.mkdir(path.dirname(target), { recursive: true });
      await fs.symlink(source, target, 'junction');
    }
  }

  /**
   * The task's worktree, created from the CURRENT tip of `targetBranch`; an existing one (a
   * resumed task) is returned as it is, with its commits and uncommitted work. `fresh` starts
   * over from the tip: the old worktree and branch are dropped (Retry from the new tip).
   */
  create(taskId: string, targetBranch: string, options: { fresh?: boolean } = {}): Promise<CreatedWorktree> {
    return this.exclusive(() => this.createUnlocked(taskId, targetBranch, options));
  }

  private async createUnlocked(taskId: string, targetBranch: string, options: { fresh?: boolean }): Promise<CreatedWorktree> {
    const wtPath = this.pathFor(taskId);
    const branch = this.branchFor(taskId);
    await this.ensureIgnored();
    // no folder there (a new task, nearly always): added at once, without first listing every worktree
    let plan: AddPlan | undefined;
    if (!(await fs.lstat(wtPath).catch(() => undefined))) {
      plan = await this.addPlan(taskId, targetBranch, options);
      if (await this.addNew(plan)) return plan.made;
    }
    const existing = (await this.registered()).find((w) => w.path === wtPath);
    if (existing && options.fresh) await this.removeUnlocked(taskId, { deleteBranch: true });
    else if (existing && !existing.prunable && existing.locked === undefined) {
      if (existing.branch !== branch)
        throw new RalphError(`worktree ${wtPath} is on ${existing.branch ?? 'a detached HEAD'}, not ${branch}`, 'worktree-branch');
      await this.linkShared(wtPath);
      return { taskId, path: wtPath, branch, base: existing.head ?? '', created: false };
    } else if (existing) await this.forceRemove(wtPath); // a crash interrupted `worktree add`, or its files are gone
    if (existing || (await fs.lstat(wtPath).catch(() => undefined))) {
      await removeTree(wtPath); // unregistered leftovers: no git metadata, nothing to keep
      await runGit(this.root, ['worktree', 'prune']);
    }
    await fs.mkdir(this.dir, { recursive: true });
    // planned before a refused add, which may have made the branch already: the plan of before holds
    plan ??= await this.addPlan(taskId, targetBranch, options);
    await git(this.root, plan.args);
    await this.linkShared(wtPath);
    return plan.made;
  }

  /**
   * Adds the planned worktree where no folder is. False when git refuses because it still has a
   * record of a worktree there (its folder gone): the caller clears that record first, as before.
   */
  private async addNew(plan: AddPlan): Promise<boolean> {
    await fs.mkdir(this.dir, { recursive: true });
    const added = await runGit(this.root, plan.args);
    if (added.code !== 0) {
      if (/already registered|already checked out|is already used by worktree/.test(added.stderr)) return false;
      throw new GitCommandError(plan.args, added);
    }
    await this.linkShared(plan.made.path);
    return true;
  }

  /** How the task's worktree is added: on its surviving branch (its commits kept), else on a new branch from the target's tip. */
  private async addPlan(taskId: string, targetBranch: string, options: { fresh?: boolean }): Promise<AddPlan> {
    const wtPath = this.pathFor(taskId);
    const branch = this.branchFor(taskId);
    // both tips read from git's files (no process on the way to a task's first model call)
    const tip = await this.refs.branchTip(targetBranch);
    if (!tip) throw new RalphError(`target branch "${targetBranch}" does not exist (or has no commits)`, 'no-target-branch');
    const branchTip = options.fresh ? undefined : await this.refs.branchTip(branch);
    // the task's branch survived (its worktree did not): its commits are the task's work, keep them
    if (branchTip)
      return { args: ['worktree', 'add', wtPath, branch], made: { taskId, path: wtPath, branch, base: branchTip, created: false } };
    return { args: ['worktree', 'add', '-B', branch, wtPath, tip], made: { taskId, path: wtPath, branch, base: tip, created: true } };
  }

  /** Task worktrees git knows of (the merge worktree excluded). */
  list(): Promise<TaskWorktree[]> {
    return this.exclusive(() => this.listUnlocked());
  }

  private async listUnlocked(): Promise<TaskWorktree[]> {
    return (
      (await this.registered())
        // `_merge` (the queue's) and `_proof-<id>` (a fail-to-pass proof's scratch): `_` starts no task id
        .filter((w) => path.dirname(w.path) === this.dir && !path.basename(w.path).startsWith('_'))
        .map((w) => ({ taskId: path.basename(w.path), path: w.path, branch: w.branch, head: w.head, locked: w.locked }))
    );
  }

  /** Removes the task's worktree (uncommitted files in it are lost) and, when asked, its branch. */
  async remove(taskId: string, options: { deleteBranch: boolean }): Promise<void> {
    // under the lock git's record goes and the folder is moved aside (no git process); its files go after.
    // The branch goes under the lock too: `git branch -D` reads every worktree's record, and beside
    // another removal it met one half gone ("Invalid path '.git/worktrees/T-043'", tasks landed together)
    let branchFailure: unknown;
    const aside = await this.exclusive(async () => {
      const moved = await unregisterWorktree(this.pathFor(taskId), await this.refs.common()).catch(() => undefined);
      if (!moved) await this.removeUnlocked(taskId, { deleteBranch: false });
      if (options.deleteBranch)
        branchFailure = await this.deleteBranch(this.branchFor(taskId)).catch((error: unknown) => error ?? 'failed');
      return moved;
    });
    if (aside) await removeTree(aside);
    if (branchFailure !== undefined) throw branchFailure;
  }

  private async removeUnlocked(taskId: string, options: { deleteBranch: boolean }): Promise<void> {
    const wtPath = this.pathFor(taskId);
    // its folder there (nearly always): `worktree remove` takes the folder and git's record of it together,
    // and says when git has no record of it; no folder: only a record may be left, which prune clears
    const removed = (await fs.lstat(wtPath).catch(() => undefined)) !== undefined && (await this.forceRemove(wtPath));
    await removeTree(wtPath);
    if (!removed) await runGit(this.root, ['worktree', 'prune']);
    if (options.deleteBranch) await this.deleteBranch(this.branchFor(taskId));
  }

  /** Removes the merge queue's worktrees (between runs they hold nothing worth keeping). */
  removeMergeWorktree(): Promise<void> {
    return this.exclusive(() => this.removeMergeWorktreeUnlocked());
  }

  private async removeMergeWorktreeUnlocked(): Promise<void> {
    // no merge worktree's folder (merges built as objects): nothing to list; a record whose folder went is the next run's prune
    const leftovers = (await fs.readdir(this.dir).catch(() => [] as string[])).filter(isMergeWorktree);
    if (leftovers.length === 0) return;
    const registered = (await this.registered()).filter((w) => path.dirname(w.path) === this.dir && isMergeWorktree(path.basename(w.path)));
    for (const w of registered) await this.forceRemove(w.path);
    for (const name of leftovers) await removeTree(path.join(this.dir, name));
    await runGit(this.root, ['worktree', 'prune']);
  }

  /** Branches `ralph/<taskId>` that exist, by task id. */
  async branches(): Promise<Map<string, string>> {
    const out = await git(this.root, ['for-each-ref', '--format=%(refname:short) %(objectname)', `refs/heads/${BRANCH_PREFIX}`]);
    const result = new Map<string, string>();
    for (const line of out.split('\n').filter(Boolean)) {
      const [name, sha] = line.split(' ');
      result.set(name.slice(BRANCH_PREFIX.length), sha);
    }
    return result;
  }

  /**
   * Cleans up what a crashed run left. Call it only while holding the run lock, before any
   * agent starts: then no Ralph git process runs in these worktrees and every lock file in
   * their git dirs is stale. Worktrees of tasks not in `keep` are removed, and branches of
   * tasks not in `keepBranches` (default: `keep`); kept ones lose only their stale lock files.
   * Directories git does not know go too (no metadata, so no commits in them).
   */
  prune(keep: ReadonlySet<string>, keepBranches: ReadonlySet<string> = keep): Promise<PruneReport> {
    return this.exclusive(() => this.pruneUnlocked(keep, keepBranches));
  }

  private async pruneUnlocked(keep: ReadonlySet<string>, keepBranches: ReadonlySet<string>): Promise<PruneReport> {
    const report: PruneReport = { removedWorktrees: [], removedBranches: [], removedLocks: [], removedDirs: [] };
    if (await this.nothingLeft()) return report;
    await runGit(this.root, ['worktree', 'prune']);
    const registered = (await this.registered()).filter((w) => path.dirname(w.path) === this.dir);
    for (const w of registered) {
      const name = path.basename(w.path);
      report.removedLocks.push(...(await this.removeStaleLocks(w.path)));
      if (isMergeWorktree(name) || !keep.has(name) || w.locked === 'initializing') {
        await this.forceRemove(w.path);
        await removeTree(w.path);
        report.removedWorktrees.push(w.path);
      }
    }
    await runGit(this.root, ['worktree', 'prune']);
    const stillRegistered = new Set((await this.registered()).map((w) => w.path));
    for (const entry of await fs.readdir(this.dir).catch(() => [] as string[])) {
      const full = path.join(this.dir, entry);
      if (stillRegistered.has(full)) continue;
      await removeTree(full);
      report.removedDirs.push(full);
    }
    const commonDir = path.resolve(this.root, (await git(this.root, ['rev-parse', '--git-common-dir'])).trim());
    const checkedOut = new Set((await this.registered()).map((w) => w.branch).filter(Boolean));
    for (const taskId of (await this.branches()).keys()) {
      const lock = path.join(commonDir, 'refs', 'heads', ...`${BRANCH_PREFIX}${taskId}.lock`.split('/'));
      if (await removeIfExists(lock)) report.removedLocks.push(lock);
      if (keepBranches.has(taskId) || checkedOut.has(`${BRANCH_PREFIX}${taskId}`)) continue;
      await this.deleteBranch(`${BRANCH_PREFIX}${taskId}`);
      report.removedBranches.push(`${BRANCH_PREFIX}${taskId}`);
    }
    return report;
  }

  /**
   * Whether a crash left nothing to prune (the usual start of a run): no worktree of the folder
   * registered, nothing in the folder, no `ralph/*` branch, and no record git would prune (the
   * list's `prunable`: what `worktree prune` removes). Read from git's files when the repository
   * has no linked worktree at all, else two git calls instead of the full pass's seven.
   */
  private async nothingLeft(): Promise<boolean> {
    if ((await fs.readdir(this.dir).catch(() => [] as string[])).length > 0) return false;
    if (await this.refs.noLinkedWorktreesNorBranches(BRANCH_PREFIX)) return true;
    const [registered, branches] = await Promise.all([this.registered(), this.branches()]);
    return branches.size === 0 && registered.every((w) => !w.prunable && path.dirname(w.path) !== this.dir);
  }

  /** The commits local branches point at (branches that do not exist are absent). */
  async branchTips(branches: readonly string[]): Promise<Map<string, string>> {
    const out = await git(this.root, [
      'for-each-ref',
      '--format=%(refname)%00%(objectname)%00%(objecttype)',
      ...branches.map((b) => `refs/heads/${b}`),
    ]);
    const tips = new Map<string, string>();
    for (const line of out.split('\n').filter(Boolean)) {
      const [ref, sha, type] = line.split('\0');
      const name = ref.slice('refs/heads/'.length);
      // for-each-ref matches by prefix too (refs/heads/ralph/T-1 would list refs/heads/ralph/T-1/x): exact names only
      if (type === 'commit' && branches.includes(name)) tips.set(name, sha);
    }
    return tips;
  }

  /** The commit a local branch points at, or undefined when there is no such branch. */
  async branchTip(branch: string): Promise<string | undefined> {
    const result = await runGit(this.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
    return result.code === 0 ? result.stdout.trim() : undefined;
  }

  private async deleteBranch(branch: string): Promise<void> {
    const result = await runGit(this.root, ['branch', '-D', branch]);
    if (result.code !== 0 && !/not found/.test(result.stderr))
      throw new RalphError(`could not delete branch ${branch}: ${result.stderr.trim()}`, 'git');
  }

  /** `--force` twice: also a locked worktree, and one with uncommitted changes. True when git removed it (folder and record). */
  private async forceRemove(wtPath: string): Promise<boolean> {
    await this.removeStaleLocks(wtPath);
    const result = await runGit(this.root, ['worktree', 'remove', '--force', '--force', wtPath]);
    if (result.code !== 0 && !/is not a working tree/.test(result.stderr)) {
      // the admin entry may be half-written (crash in `worktree add`): drop the files, then let prune clear the entry
      await removeTree(wtPath);
      await runGit(this.root, ['worktree', 'prune']);
    }
    return result.code === 0;
  }

  /** `index.lock` / `HEAD.lock` in the worktree's own git dir. */
  private async removeStaleLocks(wtPath: string): Promise<string[]> {
    const gitDir = await worktreeGitDir(wtPath);
    if (!gitDir) return [];
    const removed: string[] = [];
    for (const name of ['index.lock', 'HEAD.lock']) {
      const file = path.join(gitDir, name);
      if (await removeIfExists(file)) removed.push(file);
    }
    return removed;
  }

  private async registered(): Promise<Registered[]> {
    return parseWorktreeList(await git(this.root, ['worktree', 'list', '--porcelain']));
  }
}

function checkedId(taskId: string): string {
  if (!TASK_ID.test(taskId) || taskId.length > 64)
    throw new RalphError(`"${taskId}" is not a valid task id for a worktree`, 'invalid-task-id');
  return taskId;
}
