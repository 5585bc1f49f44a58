import { randomBytes } from 'node:crypto';
import * as path from 'node:path';
import type { RalphConfig } from '../config/schema';
import { errorMessage, RalphError } from '../errors';
import { runGit } from '../git/gitExec';
import type { RalphPaths } from '../paths';
import { dependenciesDone } from '../tasks/select';
import { type Task, TaskSchema, type TaskStatus } from '../tasks/schema';
import type { TaskStore } from '../tasks/store';
import { writeFileAtomic } from '../util/atomicWrite';
import { minutesInput } from './jobLimits';
import { REMOTE_ACTIVE, remoteActive, type RemoteState, type TaskRemote } from '../tasks/remote';
import { fetchRef, type GitAuth, loadTaskState } from './taskState';
import type { Forge, PullRequestInfo } from './types';

export interface FollowerDeps {
  workspace: string;
  paths: RalphPaths;
  config: RalphConfig;
  store: TaskStore;
  forge: Forge;
  /** Fetch credentials for the remote (the state branches). */
  auth: GitAuth;
  /** A line for the person: dispatched, merged, sent back… */
  say(line: string): void;
  now?: () => number;
}

/** What one look at the forge found for a task. */
export interface RemoteTaskView {
  id: string;
  title: string;
  status: TaskStatus;
  remote: TaskRemote;
}

/** Statuses a person may send to the forge again by naming the task (Retry). */
const RETRYABLE: ReadonlySet<TaskStatus> = new Set(['failed', 'timeout', 'halted', 'blocked', 'needs_help']);

/** The dispatch inputs are at most 65,535 characters in all: the queue's reasons are kept short. */
const FEEDBACK_CHARS = 6000;

/**
 * Runs tasks on the forge and follows them: dispatches ready tasks (a dependent once its
 * dependency merged, so never from a stale base), follows each run's job, pull request and
 * merge-queue entry, marks a task `done` only when its pull request merged, and sends a pull
 * request the merge queue removed back to its agent (a new job, the queue's failure in its
 * context) up to `merge.maxReturns` times, then `needs_help`.
 */
export class RemoteFollower {
  constructor(private readonly deps: FollowerDeps) {}

  /** The branch tasks start from and merge into. */
  async target(): Promise<string> {
    if (this.deps.config.merge.targetBranch) return this.deps.config.merge.targetBranch;
    const head = await runGit(this.deps.workspace, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
    if (head.code !== 0)
      throw new RalphError(
        'no branch is checked out and merge.targetBranch is not set: the forge needs a branch to start the tasks from',
        'no-target-branch',
      );
    return head.stdout.trim();
  }

  /**
   * Dispatches the ready tasks (or `only` those, which may also be failed, timed-out, halted,
   * blocked or needing help: a Retry). Returns the ids dispatched.
   */
  async dispatch(only?: readonly string[]): Promise<string[]> {
    const tasks = await this.deps.store.list();
    const byId = new Map(tasks.map((t) => [t.id, t]));
    for (const id of only ?? []) if (!byId.has(id)) throw new RalphError(`no task "${id}" in .ralph/tasks.json`, 'task-not-found');
    const ready = tasks.filter(
      (t) =>
        (only ? only.includes(t.id) : true) && !remoteActive(t.remote) && startable(t, only !== undefined) && dependenciesDone(t, byId),
    );
    if (ready.length === 0) return [];
    const target = await this.target();
    await this.checkPublished(target, ready);
    return this.send(ready, target, {});
  }

  private async send(
    tasks: readonly Task[],
    target: string,
    feedback: Record<string, string>,
    returns: Record<string, number> = {},
    removedAt: Record<string, string> = {},
  ): Promise<string[]> {
    const { forge, config } = this.deps;
    const marker = randomBytes(4).toString('hex');
    const ids = tasks.map((t) => t.id);
    const dispatchedAt = new Date(this.now()).toISOString();
    const minutes = await minutesInput(this.deps.workspace, `refs/remotes/${config.forge.remote}/${target}`, config);
    const run = await forge.dispatch({
      workflow: config.forge.workflow,
      ref: target,
      inputs: { tasks: JSON.stringify(ids), target, dispatch: marker, feedback: JSON.stringify(feedback), ...minutes },
    });
    for (const task of tasks) {
      const remote: TaskRemote = {
        state: 'queued',
        url: run?.url ?? `${forge.webUrl}/actions/workflows/${config.forge.workflow}`,
        ...(run ? { runId: run.id } : {}),
        ...(task.remote?.pr ? { pr: task.remote.pr } : {}),
        dispatchedAt,
        dispatch: marker,
        ...(returns[task.id] !== undefined
          ? { returns: returns[task.id] }
          : task.remote?.returns !== undefined
            ? { returns: task.remote.returns }
            : {}),
        ...((removedAt[task.id] ?? task.remote?.removedAt) ? { removedAt: removedAt[task.id] ?? task.remote?.removedAt } : {}),
      };
      await this.deps.store.update(task.id, { status: 'in_progress', blockedReason: undefined, remote });
    }
    this.deps.say(`dispatched ${ids.join(', ')} to ${config.forge.workflow} on ${target}${run ? `: ${run.url}` : ''}`);
    return ids;
  }

  /** The job clones the target: the task must be in the pushed `.ralph/tasks.json`, and the workflow there. */
  private async checkPublished(target: string, tasks: readonly Task[]): Promise<void> {
    const { workspace, config, auth } = this.deps;
    const ref = `refs/remotes/${config.forge.remote}/${target}`;
    if (!(await fetchRef(workspace, config.forge.remote, target, ref, auth)))
      throw new RalphError(`the branch ${target} is not on ${config.forge.remote}: push it first`, 'not-published');
    const missing: string[] = [];
    const published = await runGit(workspace, ['show', `${ref}:.ralph/tasks.json`]);
    const ids = new Set<string>();
    try {
      for (const t of (JSON.parse(published.stdout) as { tasks?: { id?: string }[] }).tasks ?? []) if (t.id) ids.add(t.id);
    } catch {
      // no store there at all: every task is missing
    }
    for (const task of tasks) if (!ids.has(task.id)) missing.push(task.id);
    if (missing.length > 0)
      throw new RalphError(
        `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not in .ralph/tasks.json on ${config.forge.remote}/${target}: commit and push the task store first (the jobs clone ${target})`,
        'not-published',
      );
    const workflow = await runGit(workspace, ['cat-file', '-e', `${ref}:.github/workflows/${config.forge.workflow}`]);
    if (workflow.code !== 0)
      throw new RalphError(
        `.github/workflows/${config.forge.workflow} is not on ${config.forge.remote}/${target}: run ralph ci init, commit and push it`,
        'not-published',
      );
  }

  /** One look at every task the forge holds; returns them as they stand now. */
  async refresh(): Promise<RemoteTaskView[]> {
    const views: RemoteTaskView[] = [];
    for (const task of (await this.deps.store.list()).filter((t) => remoteActive(t.remote))) {
      try {
        views.push(await this.follow(task));
      } catch (error) {
        this.deps.say(`could not follow ${task.id}: ${errorMessage(error)}`);
        views.push({ id: task.id, title: task.title, status: task.status, remote: task.remote! });
      }
    }
    return views;
  }

  /** Refresh, then dispatch what became ready (dependents of merged tasks). */
  async step(): Promise<RemoteTaskView[]> {
    const views = await this.refresh();
    await this.dispatch();
    return views;
  }

  /** Whether the forge still holds a task of this workspace. */
  async pending(): Promise<boolean> {
    return (await this.deps.store.list()).some((t) => remoteActive(t.remote));
  }

  private async follow(task: Task): Promise<RemoteTaskView> {
    const { forge } = this.deps;
    let remote = task.remote!;
    if (remote.runId === undefined && remote.dispatch && remote.dispatchedAt) {
      const run = await forge.findRun(this.deps.config.forge.workflow, remote.dispatch, remote.dispatchedAt);
      if (run) remote = { ...remote, runId: run.id, url: run.url };
    }
    const job = remote.runId !== undefined ? (await forge.jobs(remote.runId)).find((j) => j.name === `ralph ${task.id}`) : undefined;
    const pr = await forge.pullRequestFor(`ralph/${task.id}`);
    const jobActive = job !== undefined && job.status !== 'completed';
    if (pr?.merged)
      return this.settle(
        task,
        {
          ...remote,
          state: 'merged',
          url: pr.url,
          pr: pr.number,
          detail: `merged${pr.mergeCommit ? ` as ${pr.mergeCommit.slice(0, 10)}` : ''}`,
        },
        'done',
        `pull request #${pr.number} merged`,
      );
    if (jobActive)
      return this.settle(
        task,
        { ...remote, state: job.status === 'queued' ? 'queued' : 'running', url: job.url, detail: undefined },
        'in_progress',
      );
    if (pr && pr.state === 'closed')
      return this.settle(
        task,
        { ...remote, state: 'failed', url: pr.url, pr: pr.number, detail: 'pull request closed without merging' },
        'failed',
        `pull request #${pr.number} was closed without merging`,
      );
    if (pr && !pr.draft) return this.followQueue(task, remote, pr);
    if (job === undefined && remote.runId === undefined) return this.settle(task, remote, 'in_progress'); // the run has not shown up yet
    if (job === undefined) return this.settle(task, remote, 'in_progress');
    // the job ended without a pull request ready to merge: its recorded end, and the draft (or the job) to look at
    const recorded = await this.importState(task.id);
    const status: TaskStatus =
      recorded && recorded.status !== 'in_progress' && recorded.status !== 'todo' && recorded.status !== 'done'
        ? recorded.status
        : 'failed';
    const reason =
      recorded?.blockedReason ?? `the job ended ${job.conclusion ?? 'without a result'}${pr ? `; draft pull request #${pr.number}` : ''}`;
    return this.settle(
      task,
      { ...remote, state: 'failed', url: pr?.url ?? job.url, ...(pr ? { pr: pr.number } : {}), detail: reason },
      status,
      reason,
    );
  }

  /** A ready pull request: waiting for its checks, in the merge queue, or just removed from it. */
  private async followQueue(task: Task, remote: TaskRemote, pr: PullRequestInfo): Promise<RemoteTaskView> {
    const queue = await this.deps.forge.queue(pr);
    const removal = queue.lastRemoval;
    if (!queue.inQueue && removal && (!remote.removedAt || removal.at > remote.removedAt)) return this.sendBack(task, remote, pr, removal);
    const base = { ...remote, url: pr.url, pr: pr.number };
    if (queue.inQueue)
      return this.settle(
        task,
        {
          ...base,
          state: 'in-queue',
          detail: queue.position
            ? `position ${queue.position}${queue.entryState ? `, ${queue.entryState.toLowerCase().replace(/_/g, ' ')}` : ''}`
            : undefined,
        },
        'in_progress',
      );
    return this.settle(
      task,
      {
        ...base,
        state: 'pr-open',
        detail: queue.autoMerge ? 'auto-merge on: waiting for the required checks' : 'waiting for a merge (auto-merge is off)',
      },
      'in_progress',
    );
  }

  /** The merge queue removed the pull request: back to its agent with the queue's failure, or needs_help after merge.maxReturns. */
  private async sendBack(
    task: Task,
    remote: TaskRemote,
    pr: PullRequestInfo,
    removal: { at: string; reason: string },
  ): Promise<RemoteTaskView> {
    const returns = (remote.returns ?? 0) + 1;
    const failures = await this.deps.forge.mergeGroupFailures(pr, remote.removedAt).catch(() => []);
    const why = [removal.reason, ...failures.map((f) => `${f.name} ${f.conclusion}${f.summary ? `: ${f.summary}` : ''}`)]
      .join('; ')
      .slice(0, FEEDBACK_CHARS);
    if (returns > this.deps.config.merge.maxReturns) {
      const reason = `not merged after ${returns} attempts: the merge queue removed #${pr.number} (${why})`;
      return this.settle(
        task,
        { ...remote, state: 'failed', url: pr.url, pr: pr.number, returns: returns - 1, removedAt: removal.at, detail: reason },
        'needs_help',
        reason,
      );
    }
    this.deps.say(
      `${task.id}: the merge queue removed #${pr.number} (${why}); back to its agent (return ${returns} of ${this.deps.config.merge.maxReturns})`,
    );
    await this.send(
      [await this.deps.store.get(task.id)],
      await this.target(),
      { [task.id]: why },
      { [task.id]: returns },
      { [task.id]: removal.at },
    );
    const now = await this.deps.store.get(task.id);
    return { id: now.id, title: now.title, status: now.status, remote: now.remote! };
  }

  /** Writes the task's remote state and status when either changed; imports the job's state once it ended. */
  private async settle(task: Task, remote: TaskRemote, status: TaskStatus, reason?: string): Promise<RemoteTaskView> {
    const clean = Object.fromEntries(Object.entries(remote).filter(([, v]) => v !== undefined)) as TaskRemote;
    const changed = JSON.stringify(clean) !== JSON.stringify(task.remote) || status !== task.status;
    if (changed) {
      if (!REMOTE_ACTIVE.has(clean.state) && clean.state !== task.remote?.state) await this.importState(task.id).catch(() => undefined);
      const blockedReason = status === 'needs_help' || status === 'blocked' || status === 'halted' ? reason : undefined;
      await this.deps.store.update(task.id, { status, remote: clean, blockedReason });
      if (clean.state !== task.remote?.state)
        this.deps.say(`${task.id}: ${stateWords(clean.state)}${clean.detail ? ` (${clean.detail})` : ''} — ${clean.url}`);
    }
    return { id: task.id, title: task.title, status, remote: clean };
  }

  /**
   * The job's state branch into this workspace: the checkpoint and reports (so the panel, Show
   * Report and a later local run see what the job did); returns the task record it holds.
   */
  private async importState(taskId: string): Promise<Task | undefined> {
    const { workspace, config, auth, paths } = this.deps;
    const files = await loadTaskState(workspace, config.forge.remote, taskId, auth);
    if (!files?.['task.json']) return undefined;
    for (const [file, content] of Object.entries(files)) {
      if (file.includes('..')) continue;
      if (file === `state/${taskId}.json` || file.startsWith(`reports/${taskId}/`))
        await writeFileAtomic(path.join(paths.dir, ...file.split('/')), content);
    }
    // the task's branch too, for a later local run in its worktree (never over a checked-out or diverged one)
    await runGit(
      workspace,
      ['fetch', '--no-tags', '--quiet', config.forge.remote, `refs/heads/ralph/${taskId}:refs/heads/ralph/${taskId}`],
      { env: auth.env },
    );
    const parsed = TaskSchema.safeParse(JSON.parse(files['task.json']));
    return parsed.success ? parsed.data : undefined;
  }

  private now(): number {
    return (this.deps.now ?? Date.now)();
  }
}

function startable(task: Task, named: boolean): boolean {
  return task.status === 'todo' || (named && RETRYABLE.has(task.status));
}

export function stateWords(state: RemoteState): string {
  return {
    queued: 'queued on GitHub Actions',
    running: 'running on GitHub Actions',
    'pr-open': 'pull request open',
    'in-queue': 'in the merge queue',
    merged: 'merged',
    failed: 'failed on GitHub Actions',
  }[state];
}
