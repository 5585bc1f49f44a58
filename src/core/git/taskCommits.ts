import { git, gitLog, gitStatus, runGit } from './gitExec';

/** The trailer the loop adds to commits an agent makes with git_commit, so a rollback finds them. */
export const TASK_TRAILER = 'Ralph-Task';
/** One line per reverted commit in the body of a rollback commit; those commits count as undone. */
export const REVERTS_TRAILER = 'Reverts';

/** A commit that belongs to a task: an iteration commit, an agent's commit, or a rollback. */
export interface TaskCommit {
  sha: string;
  subject: string;
}

/** Who made a commit that stands in a rollback's way: a task (by id) or a person. */
export interface CommitAuthor {
  sha: string;
  subject: string;
  /** The task whose commit this is; undefined for a commit made outside Ralph. */
  taskId?: string;
}

/** The agent's message with the task trailer appended (once). */
export function withTaskTrailer(message: string, taskId: string): string {
  const trailer = `${TASK_TRAILER}: ${taskId}`;
  if (message.split('\n').some((line) => line.trim() === trailer)) return message;
  return `${message.trimEnd()}\n\n${trailer}`;
}

/** The subject prefix of the loop's own commits for a task: `ralph(T-001): …`. */
export function taskSubjectPrefix(taskId: string): string {
  return `ralph(${taskId}): `;
}

/** The task a commit belongs to, from its subject or its trailer. */
export function taskOfCommit(subject: string, body: string): string | undefined {
  const fromSubject = /^ralph\(([A-Za-z0-9][A-Za-z0-9._-]*)\): /.exec(subject)?.[1];
  if (fromSubject) return fromSubject;
  return new RegExp(`^${TASK_TRAILER}: *([A-Za-z0-9][A-Za-z0-9._-]*) *$`, 'm').exec(body)?.[1];
}

interface LogEntry {
  sha: string;
  parents: string[];
  subject: string;
  body: string;
}

async function logEntries(root: string, args: readonly string[]): Promise<LogEntry[]> {
  return (await gitLog(root, args)).map((e) => ({ sha: e.hash, parents: e.parents, subject: e.subject, body: e.body }));
}

/**
 * The task's commits still in effect on HEAD, oldest first: its iteration commits
 * (`ralph(<id>): …`) and its agents' commits (trailer `Ralph-Task: <id>`), minus those an
 * earlier rollback reverted. Merge commits are left out: the commits they merge are listed
 * themselves, and reverting both would undo the change twice.
 */
export async function findTaskCommits(root: string, taskId: string): Promise<TaskCommit[]> {
  const head = await runGit(root, ['rev-parse', '--verify', '-q', 'HEAD']);
  if (head.code !== 0) return [];
  const entries = await logEntries(root, [
    '--fixed-strings',
    `--grep=${taskSubjectPrefix(taskId)}`,
    `--grep=${TASK_TRAILER}: ${taskId}`,
    'HEAD',
  ]);
  const reverted = new Set<string>();
  const mine: LogEntry[] = [];
  for (const entry of entries) {
    if (taskOfCommit(entry.subject, entry.body) !== taskId) continue;
    const reverts = [...entry.body.matchAll(new RegExp(`^${REVERTS_TRAILER}: *([0-9a-f]{40})`, 'gm'))].map((m) => m[1]);
    if (reverts.length > 0) {
      for (const sha of reverts) reverted.add(sha);
      continue;
    }
    if (entry.parents.length > 1) continue;
    mine.push(entry);
  }
  return mine
    .filter((entry) => !reverted.has(entry.sha))
    .reverse()
    .map(({ sha, subject }) => ({ sha, subject }));
}

/** Files each commit touched (renames as a delete and an add), bookkeeping included. */
export async function filesOfCommits(root: string, shas: readonly string[]): Promise<string[]> {
  const files = new Set<string>();
  for (const sha of shas) {
    const out = await git(root, ['diff-tree', '-r', '--root', '--no-commit-id', '--name-only', '--no-renames', '-z', sha]);
    for (const file of out.split('\0').filter(Boolean)) files.add(file);
  }
  return [...files].sort();
}

/** Commits since `since` (exclusive) that touched `file`, except those listed in `except`, newest first. */
export async function commitsTouching(root: string, since: string, file: string, except: ReadonlySet<string>): Promise<CommitAuthor[]> {
  const entries = await logEntries(root, [`${since}..HEAD`, '--', file]);
  return entries
    .filter((entry) => !except.has(entry.sha))
    .map((entry) => ({ sha: entry.sha, subject: entry.subject, taskId: taskOfCommit(entry.subject, entry.body) }));
}

/** Paths with uncommitted changes (staged, unstaged, untracked), from `git status -z`. */
export async function dirtyPaths(root: string): Promise<{ path: string; staged: boolean }[]> {
  const dirty: { path: string; staged: boolean }[] = [];
  for (const f of (await gitStatus(root, ['--untracked-files=all'])).files) {
    dirty.push({ path: f.path, staged: f.index !== ' ' && f.index !== '?' });
    if (f.from) dirty.push({ path: f.from, staged: true }); // a rename or copy's source
  }
  return dirty;
}
