import { RalphError } from '../errors';
import { git, GitCommandError, type GitResult, runGit } from './gitExec';

export interface ConflictHunk {
  file: string;
  /** The conflict blocks of the file as git wrote them (markers included), capped. */
  text: string;
}

export type TreeMergeResult =
  | { kind: 'ready'; base: string; result: string }
  | { kind: 'empty'; base: string }
  | { kind: 'conflict'; base: string; files: string[]; hunks: ConflictHunk[] };

export const MAX_HUNK_CHARS = 1500;
export const MAX_HUNKS_CHARS = 6000;

/** Repositories whose merges are built in a worktree whatever git can do (`useMergeTree(root, false)`). */
const overridden = new Map<string, Promise<boolean>>();
/** Whether this process's git has `merge-tree --write-tree`: asked once (the same git serves every repository). */
let gitHasMergeTree: Promise<boolean> | undefined;

/** `git merge-tree --write-tree` (git ≥ 2.38) is there: merged trees are built without a checkout. */
export function mergeTreeSupported(root: string): Promise<boolean> {
  const forced = overridden.get(root);
  if (forced) return forced;
  gitHasMergeTree ??= runGit(root, ['version']).then((out) => {
    const m = /git version (\d+)\.(\d+)/.exec(out.stdout);
    if (m === null) gitHasMergeTree = undefined; // no answer (git could not start): asked again next time
    return m !== null && (Number(m[1]) > 2 || (Number(m[1]) === 2 && Number(m[2]) >= 38));
  });
  return gitHasMergeTree;
}

/**
 * Builds merges in a worktree even where `merge-tree` is there (`false`), or as git allows
 * (`undefined`): the fallback of older git, tested and measured on this one.
 */
export function useMergeTree(root: string, allowed: boolean | undefined): void {
  if (allowed === false) overridden.set(root, Promise.resolve(false));
  else overridden.delete(root);
}

export interface TreeMergeInput {
  root: string;
  /** The commit the task's changes go on: the target's tip, or the prefix of the tasks ahead of it. */
  base: string;
  branchTip: string;
  /** The task's branch by name (`ralph/T-1`): the conflict markers name it, as a worktree merge's do. */
  branch: string;
  strategy: 'squash' | 'merge';
  message: string;
  env: NodeJS.ProcessEnv;
  /** The trees of commits this queue made (commit → tree): the next prefix's base is most often one of them. */
  trees?: Map<string, string>;
}

/**
 * The three-way merge of a task's branch onto `base`, written as objects only (`merge-tree
 * --write-tree`, then `commit-tree`): no worktree, no index, no files touched — the queue can
 * build a whole chain of prefixes in the time one checkout took. The commit is the one the
 * worktree merge would have made: squash (one parent, `base`) or a merge (`base` and the branch).
 */
export async function mergeByTree(input: TreeMergeInput): Promise<TreeMergeResult> {
  const { root, base, branchTip, branch } = input;
  // the branch by name (its tip is `branchTip`: its agent is done) so that conflict markers say whose side is whose
  // the base's tree (unless the queue made the base) is read alongside: a prefix is one step shorter
  const known = input.trees?.get(base);
  const baseTreeRead = known === undefined ? runGit(root, ['rev-parse', `${base}^{tree}`]) : undefined;
  const merged = await runGit(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', base, branch]);
  if (merged.code !== 0 && merged.code !== 1)
    throw new RalphError(`git merge-tree failed: ${(merged.stderr || merged.stdout).trim()}`, 'git');
  const [tree, ...rest] = merged.stdout.split('\n');
  if (merged.code === 1) {
    const files = [...new Set(rest.map((l) => l.trim()).filter(Boolean))];
    return { kind: 'conflict', base, files, hunks: await treeConflictHunks(root, tree.trim(), files) };
  }
  // a branch the base already contains merges to the base's own tree: nothing to land
  const baseTree = known ?? (await treeOf(base, baseTreeRead!));
  if (tree.trim() === baseTree) return { kind: 'empty', base };
  const parents = input.strategy === 'squash' ? ['-p', base] : ['-p', base, '-p', branchTip];
  // the commit is written while the markers are looked for: a commit of a tree that has some is never used (an unreachable object)
  const [markers, commit] = await Promise.all([
    leftoverMarkersBetween(root, base, tree.trim()),
    git(root, ['commit-tree', tree.trim(), ...parents, '-F', '-'], { input: input.message, env: input.env }),
  ]);
  if (markers.length > 0) {
    // an agent committed an unresolved conflict: textually clean, yet it must never reach the target
    return {
      kind: 'conflict',
      base,
      files: [...new Set(markers.map((m) => m.file))],
      hunks: markers.map((m) => ({ file: m.file, text: `leftover conflict marker at line ${m.line}` })),
    };
  }
  const result = commit.trim();
  input.trees?.set(result, tree.trim());
  return { kind: 'ready', base, result };
}

/** The tree `rev-parse <base>^{tree}` answered; git's error when it could not. */
async function treeOf(base: string, read: Promise<GitResult>): Promise<string> {
  const result = await read;
  if (result.code !== 0) throw new GitCommandError(['rev-parse', `${base}^{tree}`], result);
  return result.stdout.trim();
}

/** Conflict markers a diff from `base` to `tree` adds (`git diff --check` names them). */
export async function leftoverMarkersBetween(root: string, base: string, tree: string): Promise<{ file: string; line: number }[]> {
  return parseMarkers((await runGit(root, ['diff', '--check', base, tree])).stdout);
}

export function parseMarkers(out: string): { file: string; line: number }[] {
  const found: { file: string; line: number }[] = [];
  for (const line of out.split('\n')) {
    const match = /^(.+):(\d+): leftover conflict marker$/.exec(line);
    if (match) found.push({ file: match[1], line: Number(match[2]) });
  }
  return found;
}

/** The conflicted files as merge-tree wrote them into its tree (with their markers), capped. */
async function treeConflictHunks(root: string, tree: string, files: string[]): Promise<ConflictHunk[]> {
  const hunks: ConflictHunk[] = [];
  let budget = MAX_HUNKS_CHARS;
  for (const file of files) {
    if (budget <= 0) break;
    const read = await runGit(root, ['cat-file', '-p', `${tree}:${file}`]);
    const blocks =
      read.code !== 0
        ? '(binary or deleted on one side)'
        : extractConflictBlocks(read.stdout) || '(deleted on one side, changed on the other)';
    const cap = Math.min(MAX_HUNK_CHARS, budget);
    const capped = blocks.length > cap ? `${blocks.slice(0, cap)}\n… [truncated]` : blocks;
    budget -= capped.length;
    hunks.push({ file, text: capped });
  }
  return hunks;
}

/** The `<<<<<<<` … `>>>>>>>` blocks of a file, with their line numbers. */
export function extractConflictBlocks(text: string): string {
  const lines = text.split('\n');
  const out: string[] = [];
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    if (start < 0 && lines[i].startsWith('<<<<<<<')) start = i;
    if (start >= 0) out.push(lines[i]);
    if (start >= 0 && lines[i].startsWith('>>>>>>>')) {
      out.splice(out.length - (i - start + 1), 0, `@@ line ${start + 1}`);
      start = -1;
    }
  }
  return out.join('\n');
}
