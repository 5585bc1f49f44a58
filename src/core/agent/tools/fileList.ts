import { promises as fs } from 'node:fs';
import { runGit } from '../../git/gitExec';
import * as path from 'node:path';
import type { WorkspaceScope } from '../../guards/workspaceScope';

/** Directories the plain walk never enters (git mode gets the same effect from .gitignore). */
const SKIPPED_DIRS = new Set(['node_modules', '.git']);
/** Upper bound of the plain walk, so a huge unignored tree cannot stall a tool call. */
const MAX_WALK_ENTRIES = 100_000;

export interface WorkspaceFiles {
  /** Workspace-relative paths with forward slashes, sorted. */
  files: string[];
  /** How the list was made: git honours .gitignore; the walk only skips node_modules and .git. */
  source: 'git' | 'walk';
}

/**
 * The files at or under `abs` (a path already resolved by the scope). In a git work tree this
 * is `git ls-files --cached --others --exclude-standard` minus files deleted from disk, so
 * .gitignore is honoured; elsewhere a walk that does not follow symlinked directories.
 */
export async function listWorkspaceFiles(scope: WorkspaceScope, abs: string): Promise<WorkspaceFiles> {
  const rel = scope.relative(abs);
  const fromGit = await gitFiles(scope.root, rel);
  if (fromGit) return { files: fromGit, source: 'git' };
  return { files: await walkFiles(scope, abs), source: 'walk' };
}

async function gitFiles(root: string, rel: string): Promise<string[] | undefined> {
  try {
    const listed = await git(root, ['ls-files', '--cached', '--others', '--exclude-standard', '-z', '--', rel]);
    const deleted = new Set(splitNul(await git(root, ['ls-files', '--deleted', '-z', '--', rel])));
    const files = new Set(splitNul(listed).filter((file) => !deleted.has(file) && !hasGitSegment(file)));
    return [...files].sort();
  } catch {
    // Not a work tree, or no git on PATH: the caller walks instead.
    return undefined;
  }
}

async function git(cwd: string, args: string[]): Promise<string> {
  // Literal pathspecs: a folder named `src[1]` must not be read as a glob by git; names as they are (no quoting).
  // Through runGit: the hardened options, the helper process, the repository decided by the folder.
  const result = await runGit(cwd, ['--literal-pathspecs', '-c', 'core.quotePath=false', ...args]);
  if (result.code !== 0) throw new Error(`git ${args[0]} failed: ${result.stderr.trim()}`);
  return result.stdout;
}

function splitNul(text: string): string[] {
  return text.split('\0').filter((entry) => entry !== '');
}

function hasGitSegment(file: string): boolean {
  return file.split('/').some((segment) => segment.toLowerCase() === '.git');
}

async function walkFiles(scope: WorkspaceScope, abs: string): Promise<string[]> {
  const stat = await fs.stat(abs);
  if (!stat.isDirectory()) return [scope.relative(abs)];
  const files: string[] = [];
  const pending = [abs];
  while (pending.length > 0 && files.length < MAX_WALK_ENTRIES) {
    const dir = pending.pop() as string;
    const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) pending.push(full);
      } else if (entry.name !== '.git') {
        files.push(scope.relative(full));
      }
    }
  }
  return files.sort();
}

/** Git's heuristic: a NUL byte in the first 8,000 bytes means binary. */
export function looksBinary(data: Uint8Array): boolean {
  return data.subarray(0, 8000).includes(0);
}
