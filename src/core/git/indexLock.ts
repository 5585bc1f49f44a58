import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** A lock younger than this may belong to a git process that is just starting; leave it. */
export const INDEX_LOCK_MIN_AGE_MS = 2_000;

export type IndexLockCheck =
  { state: 'absent' } | { state: 'removed'; file: string; ageMs: number } | { state: 'kept'; file: string; why: string };

/** `<repo>/.git`, or the directory a `.git` file (worktree, submodule) points to. */
export async function gitDirOf(root: string): Promise<string> {
  const dotGit = path.join(root, '.git');
  const stat = await fs.stat(dotGit).catch(() => undefined);
  if (stat?.isFile()) {
    const match = /^gitdir:\s*(.+)$/m.exec(await fs.readFile(dotGit, 'utf8'));
    if (match) return path.resolve(root, match[1].trim());
  }
  return dotGit;
}

/** The repository's common git dir (shared refs, objects): a linked worktree's `commondir`, else the git dir itself. */
async function commonDirOf(gitDir: string): Promise<string> {
  const pointer = (await fs.readFile(path.join(gitDir, 'commondir'), 'utf8').catch(() => '')).trim();
  return pointer ? path.resolve(gitDir, pointer) : gitDir;
}

/**
 * Removes `index.lock` only when no live process can hold it: no git process on this machine
 * works in the repository (its cwd inside the work tree or the git dir, read from /proc) and
 * the lock is older than a git start-up. Anything it cannot verify (no /proc, a young lock, a
 * git process at work) keeps the lock and says why.
 */
export function clearStaleIndexLock(root: string, now = Date.now(), procDir = '/proc'): Promise<IndexLockCheck> {
  return clearStaleGitLock(root, undefined, now, procDir);
}

/**
 * The same rule for any lock file git names (`index.lock`, `HEAD.lock`, a ref's `.lock`) —
 * only inside the repository's git dirs: a path from a message that points anywhere else is
 * never removed (answered `kept`).
 */
export async function clearStaleGitLock(
  root: string,
  lockFile: string | undefined,
  now = Date.now(),
  procDir = '/proc',
): Promise<IndexLockCheck> {
  const gitDir = await realDir(await gitDirOf(root));
  const commonDir = await realDir(await commonDirOf(gitDir));
  const named = lockFile === undefined ? path.join(gitDir, 'index.lock') : path.resolve(root, lockFile);
  const file = path.join(await realDir(path.dirname(named)), path.basename(named));
  const inside = [gitDir, commonDir].some((dir) => file.startsWith(`${dir}${path.sep}`));
  if (!inside || !file.endsWith('.lock')) return { state: 'kept', file, why: 'it is not a lock file of this repository' };
  const stat = await fs.lstat(file).catch(() => undefined);
  if (!stat) return { state: 'absent' };
  const ageMs = Math.max(0, now - stat.mtimeMs);
  if (ageMs < INDEX_LOCK_MIN_AGE_MS) return { state: 'kept', file, why: 'it was created moments ago, a git process may be using it' };
  // the main work tree holds every linked worktree (.ralph/worktrees/…): its git processes count too
  const mainRoot = path.basename(commonDir) === '.git' ? path.dirname(commonDir) : commonDir;
  const holders = await gitProcessesIn(
    [...new Set([path.resolve(root), path.resolve(gitDir), path.resolve(commonDir), path.resolve(mainRoot)])],
    procDir,
  );
  if (holders === undefined) return { state: 'kept', file, why: 'this system has no /proc to check for running git processes' };
  if (holders.length > 0) return { state: 'kept', file, why: `git process ${holders.join(', ')} is working in this repository` };
  await fs.rm(file, { force: true });
  return { state: 'removed', file, ageMs };
}

/** The directory with its links resolved (/tmp vs /private/tmp), as it is when it cannot be. */
async function realDir(dir: string): Promise<string> {
  return fs.realpath(dir).catch(() => path.resolve(dir));
}

/** Pids of git processes whose working directory is inside one of `dirs`; undefined without /proc. */
async function gitProcessesIn(dirs: readonly string[], procDir: string): Promise<number[] | undefined> {
  let entries: string[];
  try {
    entries = await fs.readdir(procDir);
  } catch {
    return undefined;
  }
  const found: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    const comm = (await fs.readFile(path.join(procDir, entry, 'comm'), 'utf8').catch(() => '')).trim();
    if (!/^git(-|$)/.test(comm)) continue;
    let cwd: string | undefined;
    try {
      cwd = await fs.readlink(path.join(procDir, entry, 'cwd'));
    } catch (error) {
      // gone, or a zombie (no cwd any more): holds nothing; one whose cwd we may not read could be ours to fear
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
    }
    if (cwd === undefined || dirs.some((dir) => cwd === dir || cwd.startsWith(`${dir}${path.sep}`))) found.push(Number(entry));
  }
  return found;
}
