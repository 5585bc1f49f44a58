import { RalphError } from '../errors';
import type { GitCall, GitLogEntry, GitReply, GitStatusFile } from './gitCalls';
import { callGit } from './gitHost';

/**
 * `-c` options on every git call of the orchestrator: hooks, fsmonitor and pager are programs the
 * repository's config (which an agent could have written) would otherwise make git run on the
 * orchestrator's own commits and status checks. Commits also pass --no-verify; diffs --no-ext-diff.
 * No automatic gc / maintenance after the orchestrator's commits: with parallel agents it would
 * prune and repack under the other agents' worktrees while they work (the user's own git still does).
 */
export const HARDENED_GIT_CONFIG = [
  'core.hooksPath=/dev/null',
  'core.fsmonitor=false',
  'core.pager=cat',
  'gc.auto=0',
  'maintenance.auto=false',
];

export interface GitResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** A git command that failed where the caller needed it to succeed. */
export class GitCommandError extends RalphError {
  constructor(
    readonly args: readonly string[],
    readonly result: GitResult,
  ) {
    super(`git ${args.join(' ')} failed (exit ${result.code}): ${gitMessage(result)}`, 'git');
  }
}

/**
 * What git said, in whole sentences: its `fatal:` / `error:` line (which names the cause: a lock,
 * a path) with the rest of its paragraph, then git's closing paragraph when it is short (e.g.
 * "Aborting"). Git's long advice paragraphs are left out rather than cut mid-sentence — for a
 * lock it is replaced by one line saying what the lock means.
 */
export function gitMessage(result: Pick<GitResult, 'stdout' | 'stderr'>): string {
  const paragraphs = (result.stderr || result.stdout)
    .split(/\n\s*\n/)
    .map((p) =>
      p
        .split('\n')
        .map((line) => line.trim())
        .filter(Boolean),
    )
    .filter((p) => p.length > 0);
  const at = paragraphs.findIndex((p) => p.some((line) => /^(fatal|error):/.test(line)));
  if (at < 0) return (paragraphs.at(-1) ?? []).slice(-3).join(' ');
  const cause = paragraphs[at].slice(paragraphs[at].findIndex((line) => /^(fatal|error):/.test(line)));
  if (/^(fatal|error): Unable to create '[^']+\.lock': File exists\.?$/.test(cause[0])) {
    return `${cause[0]} Another git process is working in this repository, or one that crashed left the lock behind.`;
  }
  const last = paragraphs.at(-1) ?? [];
  const closing = at < paragraphs.length - 1 && last.length <= 2 ? last : [];
  return [...cause.slice(0, 6), ...closing].join(' ');
}

/** Variables a git hook or a parent git sets that would point every call at their repository instead of the folder it runs in. */
const REPOSITORY_OVERRIDES = ['GIT_DIR', 'GIT_WORK_TREE', 'GIT_INDEX_FILE', 'GIT_OBJECT_DIRECTORY', 'GIT_COMMON_DIR'];

/**
 * The environment of every git call: C locale (what is parsed does not depend on the user's
 * language), never a prompt, and the repository decided by the folder, not by variables inherited
 * from a hook (`extra` may still set them on purpose).
 */
function gitEnv(extra: NodeJS.ProcessEnv | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of REPOSITORY_OVERRIDES) delete env[name];
  return { ...env, ...extra, LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_EDITOR: 'true' };
}

/**
 * Runs git and returns its exit code and output without throwing: the worktree manager and the
 * merge queue branch on exit codes (a conflict is an answer, not an error). Messages in C locale
 * so that what is parsed does not depend on the user's language; never a prompt; no hook, no
 * fsmonitor, no pager (`HARDENED_GIT_CONFIG`). Run through simple-git in a small helper process,
 * not this one (see gitHost.ts).
 */
export async function runGit(
  cwd: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<GitResult> {
  const { code, stdout, stderr } = await callGit({
    op: 'raw',
    cwd,
    env: gitEnv(options.env),
    config: HARDENED_GIT_CONFIG,
    args,
    input: options.input,
  });
  return { code, stdout, stderr };
}

/**
 * Runs git as `runGit` does, its standard output handed to `onText` piece by piece as git prints
 * it and never held whole (the result's `stdout` is empty): for what grows with the working tree,
 * as the status and the staged diff of an iteration that created 100,000 files.
 */
export async function streamGit(cwd: string, args: readonly string[], onText: (text: string) => void): Promise<GitResult> {
  const { code, stderr } = await callGit({ op: 'stream', cwd, env: gitEnv(undefined), config: HARDENED_GIT_CONFIG, args }, onText);
  return { code, stdout: '', stderr };
}

/** Runs git and throws a `GitCommandError` on a non-zero exit; returns stdout. */
export async function git(
  cwd: string,
  args: readonly string[],
  options: { input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const result = await runGit(cwd, args, options);
  if (result.code !== 0) throw new GitCommandError(args, result);
  return result.stdout;
}

/** A call simple-git parses; throws a `GitCommandError` on a non-zero exit. */
async function parsed(op: Exclude<GitCall['op'], 'raw' | 'stream'>, cwd: string, args: readonly string[]): Promise<GitReply> {
  const reply = await callGit({ op, cwd, env: gitEnv(undefined), config: HARDENED_GIT_CONFIG, args });
  if (reply.code !== 0) throw new GitCommandError([op, ...args], reply);
  return reply;
}

/**
 * `git status` as simple-git parses it (porcelain, NUL-separated: any file name; a rename with its
 * source in `from`), and the paths in conflict.
 */
export async function gitStatus(cwd: string, args: readonly string[] = []): Promise<{ files: GitStatusFile[]; conflicted: string[] }> {
  const reply = await parsed('status', cwd, args);
  return { files: reply.status ?? [], conflicted: reply.conflicted ?? [] };
}

/** `git log` with `args` (counts, ranges, paths): hash, parents, subject and body of each commit, newest first. */
export async function gitLog(cwd: string, args: readonly string[]): Promise<GitLogEntry[]> {
  return (await parsed('log', cwd, args)).log ?? [];
}
