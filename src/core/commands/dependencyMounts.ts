import { lstatSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { WORKTREE_CACHES } from '../git/worktreeList';
import { isUnder, mainWorkspaceOf } from './privateTmp';

/**
 * Installed dependencies (`worktrees.link`, default `node_modules`) inside the sandbox. The
 * packages are read-only to the agent's commands and gates, in a task's worktree (they are the
 * workspace's, reached through a link) and in the workspace alike: an agent cannot edit its test
 * runner. What tools write there is their cache, by the convention of find-cache-dir (nyc, ava,
 * babel-loader, eslint-loader, terser…): `node_modules/.cache`. That folder stays writable — in
 * the workspace it is the workspace's own; in a worktree (a task's, the merge queue's, a proof's
 * or a baseline's scratch) a folder of that worktree's own is mounted over it, so parallel tasks
 * never share a cache and nothing a task's tools write reaches the workspace's dependencies. The
 * worktree's folder lives in its git admin dir (`.git/worktrees/<name>/ralph-cache/`): never in
 * a working tree, whatever its ignore rules, and gone with the worktree.
 */
export const DEPENDENCY_CACHE = '.cache';

export interface CacheBind {
  /** The folder mounted (the worktree's own, or the cache itself in the workspace). */
  source: string;
  /** Where tools look for it: `<dependencies>/.cache`, real path. */
  target: string;
}

export interface DependencyMounts {
  /** Dependency folders inside the command's writable root, mounted read-only over it. */
  readOnly: string[];
  /** Writable caches mounted over each dependency folder's `.cache`. */
  caches: CacheBind[];
}

/**
 * The mounts of the dependency folders for a command whose writable root is `root` (the
 * workspace, or one of its worktrees under `.ralph/worktrees/`). A folder that does not exist is
 * skipped; a cache folder is made when missing (a mount needs a folder to mount over), and left
 * out when it cannot be made (then tools meet a read-only folder, as without this).
 */
export function dependencyMounts(root: string, links: readonly string[]): DependencyMounts {
  const mounts: DependencyMounts = { readOnly: [], caches: [] };
  const worktree = mainWorkspaceOf(root) !== root;
  for (const rel of links) {
    const real = realDir(path.join(root, ...rel.split('/')));
    if (!real) continue;
    const inside = isUnder(real, root);
    if (inside && !mounts.readOnly.includes(real)) mounts.readOnly.push(real);
    // the cache convention is node_modules' own: another linked path (a fixture, a venv) is only read-only
    if (path.basename(rel.replace(/\/+$/, '')) !== 'node_modules') continue;
    const target = path.join(real, DEPENDENCY_CACHE);
    if (!ensureDir(target)) continue;
    // the workspace's (or a worktree's own installed) dependencies: their cache is the command's own already
    const own = worktree && !inside ? worktreeCacheDir(root, rel) : target;
    if (own && ensureDir(own) && !mounts.caches.some((c) => c.target === target)) mounts.caches.push({ source: own, target });
  }
  return mounts;
}

/**
 * The folder a worktree keeps the cache of the linked dependency folder `rel` in: in its git
 * admin dir (read from its `.git` file); undefined when that cannot be read.
 */
export function worktreeCacheDir(worktree: string, rel: string): string | undefined {
  let pointer: string;
  try {
    pointer = readFileSync(path.join(worktree, '.git'), 'utf8');
  } catch {
    return undefined;
  }
  const gitDir = /^gitdir:\s*(.+?)\s*$/m.exec(pointer)?.[1];
  if (!gitDir) return undefined;
  return path.join(path.resolve(worktree, gitDir), WORKTREE_CACHES, ...rel.split('/'), DEPENDENCY_CACHE);
}

/** The real path of `p` when it is a directory (through links), else undefined. */
function realDir(p: string): string | undefined {
  try {
    return statSync(p).isDirectory() ? realpathSync(p) : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `dir` is a directory of its own (not a link), made when missing. */
function ensureDir(dir: string): boolean {
  try {
    const stat = lstatSync(dir, { throwIfNoEntry: false });
    if (stat) return stat.isDirectory();
    mkdirSync(dir, { recursive: true });
    return true;
  } catch {
    return false;
  }
}
