import * as path from 'node:path';
import * as vscode from 'vscode';
import { runGit } from '../core/git/gitExec';
import type { TaskChanges } from '../core/review/taskChanges';

/** The scheme of read-only documents made of a git object: a file at a commit (or tree) of a repository. */
export const GIT_SCHEME = 'ralph-git';

interface GitRef {
  /** The repository (or worktree) to ask. */
  root: string;
  /** A commit or tree; empty: the file does not exist on that side. */
  ref: string;
  /** The task whose changes these are (line comments of a review are kept per task). */
  taskId: string;
}

/** A `ralph-git:` URI of `file` at `ref` in `root`. */
export function gitUri(file: string, at: GitRef): vscode.Uri {
  return vscode.Uri.from({ scheme: GIT_SCHEME, path: `/${file}`, query: JSON.stringify(at) });
}

export function parseGitUri(uri: vscode.Uri): (GitRef & { file: string }) | undefined {
  if (uri.scheme !== GIT_SCHEME) return undefined;
  try {
    const at = JSON.parse(uri.query) as Partial<GitRef>;
    if (typeof at.root !== 'string' || typeof at.ref !== 'string' || typeof at.taskId !== 'string') return undefined;
    return { root: at.root, ref: at.ref, taskId: at.taskId, file: uri.path.replace(/^\//, '') };
  } catch {
    return undefined;
  }
}

/** Serves `ralph-git:` documents with `git show <ref>:<file>` (empty when the file is not on that side). */
export class GitContentProvider implements vscode.TextDocumentContentProvider {
  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const at = parseGitUri(uri);
    if (!at || !at.ref) return '';
    const shown = await runGit(at.root, ['show', `${at.ref}:${at.file}`]);
    return shown.code === 0 ? shown.stdout : '';
  }
}

/**
 * The `[resource, original, modified]` triples of VS Code's multi-file diff (`vscode.changes`):
 * both sides as git objects; for a worktree, the modified side is the file on disk. An added
 * file has no original side and a deleted one no modified side (the editor shows them so).
 */
export function changeTriples(root: string, changes: TaskChanges): [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined][] {
  const base = changes.base ?? '';
  return changes.files.map((file) => {
    const onDisk = changes.worktree ? vscode.Uri.file(path.join(changes.worktree, ...file.path.split('/'))) : undefined;
    const head = onDisk ?? gitUri(file.path, { root, ref: changes.head ?? '', taskId: changes.taskId });
    const original = file.status === 'added' ? undefined : gitUri(file.path, { root, ref: base, taskId: changes.taskId });
    return [file.status === 'deleted' ? (original ?? head) : head, original, file.status === 'deleted' ? undefined : head];
  });
}
