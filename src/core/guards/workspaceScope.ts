import { realpathSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PathEscapeError } from '../errors';

/** Symlink hops followed by hand (for dangling links) before giving up, like the kernel's ELOOP limit. */
const MAX_LINK_HOPS = 40;

export interface ResolveOptions {
  /** The caller will create or replace the file: the workspace root itself is refused. */
  forWrite?: boolean;
}

/**
 * The fence around every path the agent names (DESIGN §4). A path is accepted only when it
 * stays inside the workspace after `..` is applied and after every symlink on the way is
 * followed, and when no segment of it is `.git` (the repository's internals, or a worktree's
 * `.git` file). Violations raise `PathEscapeError`; the tool registry turns those into
 * "refused: …" results for the model.
 */
export class WorkspaceScope {
  /** The workspace's real path (symlinks resolved once, at construction). */
  readonly root: string;
  /** The root as given, resolved but not de-symlinked; absolute paths under it are accepted too. */
  private readonly givenRoot: string;

  /**
   * `dependencies`: workspace-relative folders of installed dependencies (`worktrees.link`), never
   * written by the agent: it must not be able to edit its test runner (its commands cannot either,
   * see commands/dependencyMounts.ts). In a worktree they are links out of it, refused anyway.
   */
  constructor(
    root: string,
    private readonly dependencies: readonly string[] = [],
  ) {
    this.givenRoot = path.resolve(root);
    this.root = realpathOrSelf(this.givenRoot);
  }

  /** The absolute real path of `p` (relative to the root, or absolute inside it). */
  async resolve(p: string, opts: ResolveOptions = {}): Promise<string> {
    if (typeof p !== 'string' || p.trim() === '') throw new PathEscapeError('an empty path names no file');
    if (p.includes('\0')) throw new PathEscapeError(`path ${JSON.stringify(p)} contains a NUL byte`);

    const lexical = this.lexicalPath(p);
    this.refuseGitSegments(p, lexical);

    const real = await realpathDeep(lexical);
    if (!isInside(this.root, real)) {
      throw new PathEscapeError(`path "${p}" leads through a symbolic link to ${real}, outside the workspace ${this.root}`);
    }
    this.refuseGitSegments(p, real);
    if (opts.forWrite && real === this.root) {
      throw new PathEscapeError(`path "${p}" is the workspace root itself, not a file that can be written`);
    }
    if (opts.forWrite) {
      this.refuseOrchestratorFiles(p, real);
      this.refuseDependencies(p, real);
    }
    return real;
  }

  private refuseDependencies(original: string, real: string): void {
    const rel = path.relative(this.root, real).split(path.sep).join('/');
    const dependency = this.dependencies.find((d) => rel === d.replace(/\/+$/, '') || rel.startsWith(`${d.replace(/\/+$/, '')}/`));
    if (dependency)
      throw new PathEscapeError(
        `path "${original}" is inside ${dependency}, the installed dependencies (worktrees.link): they are read-only to the agent; change the project's own files`,
      );
  }

  /**
   * `.ralph/` holds the orchestrator's own records (task store, config, checkpoints, run logs):
   * an agent that could write them could mark its own task done. Only its notes are its to write.
   */
  private refuseOrchestratorFiles(original: string, real: string): void {
    const rel = path.relative(this.root, real).split(path.sep);
    if (rel[0] !== '.ralph') return;
    if (rel[1] === 'progress' && rel.length > 2) return;
    throw new PathEscapeError(`path "${original}" is one of Ralph's own files under .ralph/; only .ralph/progress/ notes can be written`);
  }

  /** `abs` relative to the root, with forward slashes; `.` for the root itself. */
  relative(abs: string): string {
    const resolved = path.resolve(abs);
    const base = isInside(this.root, resolved) || !isInside(this.givenRoot, resolved) ? this.root : this.givenRoot;
    const rel = path.relative(base, resolved);
    return rel === '' ? '.' : rel.split(path.sep).join('/');
  }

  /** Applies `..` and the root without touching the disk; refuses anything that lands outside. */
  private lexicalPath(p: string): string {
    if (!path.isAbsolute(p)) {
      const abs = path.resolve(this.root, p);
      if (!isInside(this.root, abs)) {
        throw new PathEscapeError(`path "${p}" climbs out of the workspace with ".." (workspace: ${this.root})`);
      }
      return abs;
    }
    const abs = path.resolve(p);
    if (isInside(this.root, abs)) return abs;
    // Accept the symlinked spelling of the root (e.g. /tmp vs /private/tmp) by rebasing onto the real one.
    if (isInside(this.givenRoot, abs)) return path.join(this.root, path.relative(this.givenRoot, abs));
    throw new PathEscapeError(`absolute path "${p}" is outside the workspace ${this.root}`);
  }

  private refuseGitSegments(original: string, abs: string): void {
    const rel = path.relative(this.root, abs);
    if (rel.split(path.sep).some((segment) => segment.toLowerCase() === '.git')) {
      throw new PathEscapeError(`path "${original}" is inside .git; repository internals are off limits (use git_commit)`);
    }
  }
}

function isInside(root: string, candidate: string): boolean {
  const rel = path.relative(root, candidate);
  return rel === '' || (!rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel));
}

function realpathOrSelf(p: string): string {
  try {
    return realpathSync.native(p);
  } catch {
    return p;
  }
}

/**
 * `realpath` that also works for paths that don't exist yet: the deepest existing ancestor is
 * resolved and the missing tail appended. A dangling symlink on the way is followed by hand, so
 * a link to a not-yet-existing file outside the workspace is still seen as pointing outside.
 */
async function realpathDeep(abs: string, hops = 0): Promise<string> {
  if (hops > MAX_LINK_HOPS) throw new PathEscapeError(`path ${abs} has too many levels of symbolic links`);
  const tail: string[] = [];
  let current = abs;
  for (;;) {
    try {
      return path.join(await fs.realpath(current), ...tail);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP') throw new PathEscapeError(`path ${abs} has a symbolic link loop`);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error;
    }
    const link = await fs.lstat(current).catch(() => undefined);
    if (link?.isSymbolicLink()) {
      // The link's parent exists (lstat found the link), so it can be resolved for real first.
      const parent = await fs.realpath(path.dirname(current));
      const target = path.resolve(parent, await fs.readlink(current));
      return realpathDeep(path.join(target, ...tail), hops + 1);
    }
    const parent = path.dirname(current);
    if (parent === current) return path.join(current, ...tail);
    tail.unshift(path.basename(current));
    current = parent;
  }
}
