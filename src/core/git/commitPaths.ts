import { lstat } from 'node:fs/promises';
import * as path from 'node:path';
import { GitCommandError, runGit } from './gitExec';

/**
 * What the loop's own commits take, whatever the repository's ignore rules say (an allowlist
 * `.gitignore` — `/*` then `!/lib/` — as npm's own packages have, an ignored `.ralph/`, nested
 * `.gitignore` files, `core.excludesFile`): everything git would add under the root, never
 * Ralph's own files. Those are excluded by name here, not through an ignore file the user may
 * have changed (`.ralph/.gitignore`, `.git/info/exclude`, which any `.gitignore` outranks).
 */

/**
 * Ralph's bookkeeping under `.ralph/`: the task store (rewritten every iteration) and the config
 * (an agent that rewrote it must not get its gates committed and believed by the next run), the
 * checkpoints, run logs, reports, worktrees, findings, locks and half-written files. The
 * progress notes (`.ralph/progress/`) are the task's work and are committed with it.
 */
export const BOOKKEEPING = [
  '.ralph/tasks.json',
  '.ralph/config.json',
  '.ralph/state',
  '.ralph/runs',
  '.ralph/reports',
  '.ralph/worktrees',
  '.ralph/observations.md',
  '.ralph/run.lock',
];
const BOOKKEEPING_GLOBS = ['.ralph/**/*.lock', '.ralph/**/*.lock/**', '.ralph/**/*.tmp'];

/** The files the iteration's commit never takes (the lists above); `changesSince` leaves out the first two too. */
export const EXCLUDED_FROM_COMMITS = BOOKKEEPING.slice(0, 2);

/** `-- . :(exclude)…`: the root but Ralph's own files and `own` (root-relative paths, e.g. the links into a worktree). */
export function commitPathspec(own: readonly string[] = []): string[] {
  return [
    '--',
    '.',
    ...[...BOOKKEEPING, ...own].map((p) => `:(exclude,literal)${p}`),
    ...BOOKKEEPING_GLOBS.map((p) => `:(exclude,glob)${p}`),
  ];
}

/** The paths an exclusion of `commitPathspec(own)` names before its first wildcard (what git compares ignored paths with). */
function excludedPrefixes(own: readonly string[]): string[] {
  return [...BOOKKEEPING, ...own, ...BOOKKEEPING_GLOBS.map((g) => g.slice(0, g.search(/[*?[]/)).replace(/\/+$/, ''))];
}

const IGNORED_REPORT = 'The following paths are ignored by one of your .gitignore files:';

/**
 * `git add -A` of everything under `root` but Ralph's own files and `own`. git reports an
 * exclusion that names an ignored path (an ignored `.ralph/`, or one under `/*`) as if it had
 * been asked to add it, and exits 1 — after staging everything else. That report, and only it,
 * is no failure: every path it names is one the exclusions name, or a folder of one.
 */
export async function stageWork(root: string, own: readonly string[] = []): Promise<void> {
  const args = ['-c', 'advice.addIgnoredFile=false', 'add', '-A', ...commitPathspec(own)];
  const added = await runGit(root, args);
  if (added.code === 0) return;
  if (added.code === 1 && onlyExclusionsReported(added.stderr, excludedPrefixes(own))) return;
  throw new GitCommandError(['add', '-A', ...commitPathspec(own)], added);
}

/** Whether `stderr` is git's report of ignored paths and nothing else, each path an exclusion or a folder of one. */
export function onlyExclusionsReported(stderr: string, excluded: readonly string[]): boolean {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('hint: '));
  if (lines[0] !== IGNORED_REPORT || lines.length < 2) return false;
  return lines.slice(1).every((reported) => excluded.some((e) => e === reported || e.startsWith(`${reported.replace(/\/+$/, '')}/`)));
}

/**
 * The links a worktree was given (`worktrees.link`) that are links there now: Ralph's, not the
 * task's work (a tracked path of that name is left to the commit, as the link was never made).
 */
export async function linksIn(root: string, links: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const rel of links) {
    const stat = await lstat(path.join(root, ...rel.split('/'))).catch(() => undefined);
    if (stat?.isSymbolicLink()) found.push(rel.replace(/\/+$/, ''));
  }
  return found;
}
