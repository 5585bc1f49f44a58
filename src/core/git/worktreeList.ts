import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { readTextIfExists } from '../util/atomicWrite';
import { gitStatus } from './gitExec';
/** A worktree as `git worktree list --porcelain` reports it. */
export interface Registered {
  path: string;
  head?: string;
  branch?: string;
  locked?: string;
  /** git would remove this record at `worktree prune` (its folder or git dir is gone). */
  prunable?: boolean;
}

/** The records of `git worktree list --porcelain`, one per block. */
export function parseWorktreeList(out: string): Registered[] {
  const result: Registered[] = [];
  for (const block of out.split('\n\n')) {
    const entry: Partial<Registered> = {};
    for (const line of block.split('\n')) {
      const [key, ...rest] = line.split(' ');
      const value = rest.join(' ');
      if (key === 'worktree') entry.path = value;
      else if (key === 'HEAD') entry.head = value;
      else if (key === 'branch') entry.branch = value.replace(/^refs\/heads\//, '');
      else if (key === 'locked') entry.locked = value;
      else if (key === 'prunable') entry.prunable = true;
    }
    if (entry.path) result.push(entry as Registered);
  }
  return result;
}

/**
 * One queue per repository for git commands that add, remove, prune or list worktrees. git reads
 * every registered worktree for these (and for `branch -D`), and one that another process is in
 * the middle of adding has no `commondir` yet: `fatal: failed to read .git/worktrees/<id>/commondir`.
 * Agents starting together and the merge queue's own worktree would otherwise race that way.
 */
const worktreeQueues = new Map<string, Promise<unknown>>();

export function withWorktreeLock<T>(root: string, work: () => Promise<T>): Promise<T> {
  const previous = worktreeQueues.get(root) ?? Promise.resolve();
  const run = previous.then(work, work);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  worktreeQueues.set(root, settled);
  void settled.then(() => {
    if (worktreeQueues.get(root) === settled) worktreeQueues.delete(root);
  });
  return run;
}

/** Paths with uncommitted changes (staged, unstaged, untracked) in a working tree; a rename's source too. */
export async function uncommittedFiles(worktree: string): Promise<Set<string>> {
  const files = new Set<string>();
  for (const f of (await gitStatus(worktree, ['--untracked-files=all'])).files) {
    files.add(f.path);
    if (f.from) files.add(f.from); // a rename's source
  }
  return files;
}

/** The git dir of a linked worktree, read from its `.git` file (`gitdir: …`). */
export async function worktreeGitDir(wtPath: string): Promise<string | undefined> {
  const pointer = await readTextIfExists(path.join(wtPath, '.git')).catch(() => undefined);
  const dir = pointer && /^gitdir: (.+)$/m.exec(pointer)?.[1]?.trim();
  return dir ? path.resolve(wtPath, dir) : undefined;
}

/** The folder in a worktree's git admin dir that holds its dependency caches (commands/dependencyMounts.ts). */
export const WORKTREE_CACHES = 'ralph-cache';

/**
 * What `git worktree remove --force --force` does, without a git process: git's record of the
 * worktree (`<common>/worktrees/<name>`) goes, and its folder is moved aside in the same folder
 * (a rename: its name is free at once) as `_gone-…`, which the caller deletes when it likes (a
 * crash leaves it to the next prune, as a folder git does not know). Undefined, with nothing
 * touched, when the worktree's record is not where git keeps records: the caller asks git then.
 */
export async function unregisterWorktree(wtPath: string, commonDir: string): Promise<string | undefined> {
  const record = await worktreeGitDir(wtPath);
  if (!record || path.dirname(record) !== path.join(commonDir, 'worktrees')) return undefined;
  // its dependency caches (many files) go with its folder, after the lock: moved into it first
  await fs.rename(path.join(record, WORKTREE_CACHES), path.join(wtPath, `.${WORKTREE_CACHES}-gone`)).catch(() => undefined);
  await fs.rm(record, { recursive: true, force: true });
  const aside = path.join(path.dirname(wtPath), `_gone-${path.basename(wtPath)}-${randomBytes(4).toString('hex')}`);
  await fs.rename(wtPath, aside);
  return aside;
}

export function removeIfExists(file: string): Promise<boolean> {
  return fs.unlink(file).then(
    () => true,
    () => false,
  );
}
