import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RalphError } from '../errors';
import { git, runGit } from '../git/gitExec';
import { mergeTargetInto } from '../git/integrate';
import type { Checkpoint } from '../record/checkpoint';
import type { RalphPaths } from '../paths';
import { TaskActions } from '../record/actions';
import { type Task, TaskSchema, type TaskStatus } from '../tasks/schema';
import type { TaskStore } from '../tasks/store';
import { writeFileAtomic } from '../util/atomicWrite';
import { fetchRef, type GitAuth, type StateFiles } from './taskState';
import type { TaskRecords } from '../record/records';

export const TASK_BRANCH_PREFIX = 'ralph/';

/** How the job found the task: a fresh start, its branch and state from an earlier job, or finished work that only needs its pull request. */
export type JobStart = { kind: 'fresh' } | { kind: 'resume'; from: TaskStatus } | { kind: 'complete' } | { kind: 'nothing'; why: string };

/**
 * The job's checkout on `ralph/<id>`: the task's branch as an earlier job pushed it, else a new
 * branch from the target's tip. Refuses a working tree with changes to tracked files (a local
 * `--ci` run must not clobber anyone's work).
 */
export async function checkOutTaskBranch(
  workspace: string,
  remote: string,
  taskId: string,
  target: string,
  auth: GitAuth,
): Promise<{ branch: string; existed: boolean }> {
  const dirty = (await git(workspace, ['status', '--porcelain', '--untracked-files=no'])).trim();
  if (dirty)
    throw new RalphError(
      `the checkout has uncommitted changes (${dirty.split('\n').slice(0, 3).join('; ')}): a CI run of a task starts from a clean checkout`,
      'dirty-checkout',
    );
  const branch = `${TASK_BRANCH_PREFIX}${taskId}`;
  const targetRef = `refs/remotes/${remote}/${target}`;
  if (!(await fetchRef(workspace, remote, target, targetRef, auth)))
    throw new RalphError(`the target branch ${target} is not on ${remote}`, 'no-target-branch');
  const existed = await fetchRef(workspace, remote, branch, `refs/remotes/${remote}/${branch}`, auth);
  await git(workspace, ['checkout', '-q', '-B', branch, existed ? `refs/remotes/${remote}/${branch}` : targetRef]);
  return { branch, existed };
}

/** Only these paths of a state branch are restored (nothing outside `.ralph/state` and the task's reports). */
function restorable(file: string, taskId: string): boolean {
  if (file.includes('..') || path.isAbsolute(file)) return false;
  return file === `state/${taskId}.json` || file.startsWith(`reports/${taskId}/`);
}

/**
 * Puts a task's pushed state back into `.ralph/` (its checkpoint and reports) and its record into
 * the task store, then decides how this job goes on: a task an earlier job left `in_progress`
 * (killed) or `halted` resumes; `blocked` / `needs_help` are unblocked (the answer is in the prompt
 * or the notes); `failed` / `timeout` are retried on their branch with a fresh counter, as Retry
 * does locally; finished-but-unmerged work goes straight to its pull request.
 */
export async function restoreTaskState(records: TaskRecords, taskId: string, files: StateFiles | undefined): Promise<JobStart> {
  const current = await records.store.get(taskId);
  if (!files || !files['task.json']) {
    if (current.status === 'done' || current.status === 'cancelled')
      return { kind: 'nothing', why: `task ${taskId} is ${current.status} in .ralph/tasks.json` };
    return { kind: 'fresh' };
  }
  for (const [file, content] of Object.entries(files)) {
    if (restorable(file, taskId)) await writeFileAtomic(path.join(records.paths.dir, ...file.split('/')), content);
  }
  const recorded = TaskSchema.safeParse(JSON.parse(files['task.json']));
  if (!recorded.success)
    throw new RalphError(
      `the state of ${taskId} on its state branch is not a task record; delete the branch ralph-state/${taskId} to start the task over`,
      'bad-state',
    );
  const r = recorded.data;
  await records.store.update(taskId, {
    status: r.status,
    iterations: r.iterations,
    progress: r.progress,
    lastSignal: r.lastSignal,
    blockedReason: r.blockedReason,
  });
  const cp = await records.checkpoints.load(taskId, { onCorrupt: 'throw' });
  const actions = new TaskActions(records.store, records.checkpoints, records.git, []);
  switch (r.status) {
    case 'done':
      return { kind: 'nothing', why: `task ${taskId} is already done` };
    case 'cancelled':
      return { kind: 'nothing', why: `task ${taskId} was cancelled` };
    case 'blocked':
    case 'needs_help':
      await actions.unblock(taskId);
      return { kind: 'resume', from: r.status };
    case 'failed':
    case 'timeout':
      await actions.retry(taskId);
      return { kind: 'resume', from: r.status };
    case 'in_progress':
      return completeAwaitingMerge(cp) ? { kind: 'complete' } : { kind: 'resume', from: r.status };
    default:
      return cp ? { kind: 'resume', from: r.status } : { kind: 'fresh' };
  }
}

/** The agent signalled COMPLETE, the gates passed, and the task waits for its merge. */
export function completeAwaitingMerge(cp: Checkpoint | undefined): boolean {
  return cp?.phase === 'between' && cp.history.at(-1)?.outcome === 'complete';
}

/**
 * The merge queue sent the task back: the target's tip is merged into its branch (conflict
 * markers left for the agent to resolve) and the queue's failure becomes the next iteration's
 * feedback, as the local queue does.
 */
export async function returnToAgent(
  records: Pick<TaskRecords, 'checkpoints' | 'store'>,
  workspace: string,
  remote: string,
  target: string,
  taskId: string,
  why: string,
): Promise<string[]> {
  const conflicted = await mergeTargetKeepingStore(records.store, workspace, `refs/remotes/${remote}/${target}`, taskId);
  const lines = [
    `Merge queue: your pull request was removed from the forge's merge queue: ${why}. ${target} is now merged into your branch${conflicted.length > 0 ? `; resolve the conflict markers in ${conflicted.join(', ')} (keep both intents), commit,` : ';'} make the required checks pass on the merged result and signal COMPLETE again.`,
  ];
  const cp = await records.checkpoints.load(taskId);
  if (cp && cp.history.length > 0) {
    const last = cp.history[cp.history.length - 1];
    await records.checkpoints.save({
      ...cp,
      history: [...cp.history.slice(0, -1), { ...last, outcome: 'continue', feedback: [...lines, ...last.feedback] }],
    });
  }
  const task: Task = await records.store.get(taskId);
  if (task.status !== 'in_progress' && task.status !== 'halted')
    await records.store.update(taskId, { status: 'halted', blockedReason: undefined });
  return conflicted;
}

/**
 * Merges the target into the task's branch in the job's checkout. The checkout's task store is
 * this job's copy (never committed): it is put back to its committed version for the merge (the
 * target may have changed it: tasks added) and the task's record is written again after it.
 */
async function mergeTargetKeepingStore(store: TaskStore, workspace: string, target: string, taskId: string): Promise<string[]> {
  const record = await store.get(taskId);
  const tracked = (await runGit(workspace, ['ls-files', '--error-unmatch', '.ralph/tasks.json'])).code === 0;
  if (tracked) await git(workspace, ['checkout', '-q', '--', '.ralph/tasks.json']);
  const conflicted = await mergeTargetInto(workspace, target, taskId);
  const { status, iterations, progress, lastSignal, blockedReason } = record;
  await store.update(taskId, { status, iterations, progress, lastSignal, blockedReason });
  return conflicted;
}

/** The files of a task's state as the next job needs them: its record, checkpoint and reports (bounded). */
export async function collectTaskState(paths: RalphPaths, task: Task, job: Record<string, unknown>): Promise<StateFiles> {
  const files: StateFiles = { 'task.json': `${JSON.stringify(task, null, 2)}\n`, 'job.json': `${JSON.stringify(job, null, 2)}\n` };
  const checkpoint = await fs.readFile(paths.state(task.id), 'utf8').catch(() => undefined);
  if (checkpoint !== undefined) files[`state/${task.id}.json`] = checkpoint;
  const dir = paths.reportsDir(task.id);
  const names = (await fs.readdir(dir).catch(() => [] as string[])).filter((n) => /^(final|iteration-\d+)\.md$/.test(n));
  // the final report and the latest iteration reports, up to 2 MB
  names.sort((a, b) => (a === 'final.md' ? -1 : b === 'final.md' ? 1 : Number(b.match(/\d+/)?.[0]) - Number(a.match(/\d+/)?.[0])));
  let budget = 2_000_000;
  for (const name of names) {
    const text = await fs.readFile(path.join(dir, name), 'utf8').catch(() => '');
    if (text.length > budget) break;
    budget -= text.length;
    files[`reports/${task.id}/${name}`] = text;
  }
  return files;
}

/** The commit at the tip of the task branch (for the job's outputs). */
export async function headSha(workspace: string): Promise<string> {
  return (await git(workspace, ['rev-parse', 'HEAD'])).trim();
}

/** Whether `branch` has commits the target's tip lacks (no pull request for an empty branch). */
export async function hasWork(workspace: string, remote: string, target: string): Promise<boolean> {
  const count = await runGit(workspace, ['rev-list', '--count', `refs/remotes/${remote}/${target}..HEAD`]);
  return count.code === 0 && Number(count.stdout.trim()) > 0;
}
