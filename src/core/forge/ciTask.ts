import { readFile } from 'node:fs/promises';
import * as path from 'node:path';
import type { RalphConfig } from '../config/schema';
import { errorMessage, RalphError } from '../errors';
import { runGit } from '../git/gitExec';
import type { Task, TaskStatus } from '../tasks/schema';
import type { TaskRecords } from '../record/records';
import type { TaskStore } from '../tasks/store';
import { type ActionsEnv, eventInput, readActionsEnv, writeOutputs, writeSummary } from './actionsEnv';
import {
  checkOutTaskBranch,
  collectTaskState,
  completeAwaitingMerge,
  hasWork,
  headSha,
  type JobStart,
  restoreTaskState,
  returnToAgent,
} from './ciCheckout';
import type { ForgeConnection } from './connect';
import { pullRequestText } from './prBody';
import { type GitAuth, loadTaskState, pushBranch, saveTaskState, tokenAuth } from './taskState';
import type { Forge, PullRequestInfo } from './types';

export interface CiTaskOptions {
  workspace: string;
  /** The workspace's records and git, from its façade (core/ralph.ts). */
  records: TaskRecords;
  config: RalphConfig;
  taskId: string;
  env?: NodeJS.ProcessEnv;
  connect(): Promise<ForgeConnection>;
  /**
   * Runs the task in the checkout (one task, no worktree; COMPLETE leaves it `in_progress` until
   * its pull request merges) and calls `onIteration` at the end of every iteration.
   */
  runTask(config: RalphConfig, onIteration: () => void): Promise<{ status: TaskStatus; reason: string }>;
  log(line: string): void;
}

export interface CiTaskResult {
  status: TaskStatus;
  reason: string;
  branch: string;
  pr?: PullRequestInfo;
  /** Said in the job's summary as well: auto-merge refused, state not pushed… */
  warnings: string[];
}

/**
 * `ralph run --ci --task ID`: one task as one CI job. Works in the job's checkout on `ralph/<id>`
 * (from the target's tip, or the branch an earlier job pushed), restores the task's state from
 * `ralph-state/<id>`, runs the loop, and after every iteration pushes the branch and the state —
 * so a killed job's task resumes in the next. At the end it opens or updates the task's pull
 * request (body: report, receipt, gate verdicts, proof): ready with auto-merge on when the task
 * is done, a draft otherwise; and writes the job's outputs and summary.
 */
export async function runCiTask(o: CiTaskOptions): Promise<CiTaskResult> {
  const env = o.env ?? process.env;
  const job = await openJob(o, env);
  const { workspace, remote, target, branch, auth, actions } = job;
  const { taskId } = o;
  const { paths, store, checkpoints } = o.records;
  let start: JobStart = await restoreTaskState(o.records, taskId, await loadTaskState(workspace, remote, taskId, auth));
  const feedback = feedbackFor(env, actions, taskId);
  if (feedback && (start.kind === 'complete' || start.kind === 'resume')) {
    const conflicted = await returnToAgent({ checkpoints, store }, workspace, remote, target, taskId, feedback);
    o.log(`ci: back from the merge queue (${feedback})${conflicted.length ? `; conflicts in ${conflicted.join(', ')}` : ''}`);
    start = { kind: 'resume', from: 'in_progress' };
  }
  if (start.kind === 'nothing') {
    o.log(`ci: nothing to do: ${start.why}`);
    const task = await store.get(taskId);
    return { status: task.status, reason: start.why, branch, warnings: [] };
  }
  if (start.kind === 'resume') o.log(`ci: resuming ${taskId} (it was ${start.from})`);
  await settleDependencies(job.forge, store, taskId);

  const warnings: string[] = [];
  const { status, reason, task } = await runPushingProgress(o, job, start, warnings);
  const finalReport = await readFile(path.join(paths.reportsDir(taskId), 'final.md'), 'utf8').catch(() => undefined);
  const { pr, done, autoMerge } = await publishPullRequest(o, job, { task, status, reason, finalReport }, warnings);
  await writeOutputs(actions, {
    task: taskId,
    status,
    branch,
    'head-sha': await headSha(workspace),
    'pr-number': pr ? String(pr.number) : '',
    'pr-url': pr?.url ?? '',
  });
  await writeSummary(actions, jobSummary(taskId, task.title, status, reason, pr, warnings, finalReport));
  for (const w of warnings) o.log(`ci: warning: ${w}`);
  const prState = done ? (autoMerge ? 'ready, auto-merge on' : 'ready, auto-merge NOT on') : 'left as a draft';
  if (pr) o.log(`ci: pull request #${pr.number} ${prState}: ${pr.url}`);
  return { status, reason, branch, ...(pr ? { pr } : {}), warnings };
}

/** The job once the task's branch is checked out: where it pushes, and with what. */
interface CiJob {
  workspace: string;
  actions: ActionsEnv;
  remote: string;
  target: string;
  branch: string;
  forge: Forge;
  auth: GitAuth;
}

/** Reads the job's environment, connects to the forge and checks the task's branch out. */
async function openJob(o: CiTaskOptions, env: NodeJS.ProcessEnv): Promise<CiJob> {
  const { workspace, config, taskId } = o;
  const actions = await readActionsEnv(env);
  const remote = config.forge.remote;
  const target = env.RALPH_TARGET || eventInput(actions, 'target') || actions.refName || (await currentBranch(workspace));
  const connection = await o.connect();
  const remoteUrl = (await runGit(workspace, ['remote', 'get-url', remote])).stdout.trim();
  const auth = tokenAuth(remoteUrl, connection.token);
  await o.records.store.get(taskId); // an unknown task fails here, before any git change

  const { branch } = await checkOutTaskBranch(workspace, remote, taskId, target, auth);
  o.log(`ci: ${taskId} on ${branch} (target ${target})`);
  return { workspace, actions, remote, target, branch, forge: connection.forge, auth };
}

/**
 * Runs the task (unless an earlier job finished it), pushing the branch and the state after every
 * iteration, then once more at the end whatever happened to those pushes.
 */
async function runPushingProgress(
  o: CiTaskOptions,
  job: CiJob,
  start: JobStart,
  warnings: string[],
): Promise<{ status: TaskStatus; reason: string; task: Task }> {
  const { workspace, remote, branch, auth, actions, target } = job;
  const { config, taskId } = o;
  const { paths, store } = o.records;
  const jobState = () => ({
    runId: actions.runId ?? null,
    runUrl: actions.runUrl ?? null,
    attempt: actions.runAttempt ?? null,
    target,
    updatedAt: new Date().toISOString(),
  });
  const sync = new StateSync(
    async (message) => {
      await pushBranch(workspace, remote, branch, auth);
      await saveTaskState(workspace, remote, taskId, await collectTaskState(paths, await store.get(taskId), jobState()), message, auth);
    },
    (error) => {
      const text = `could not push ${taskId}'s progress: ${errorMessage(error)}`;
      warnings.push(text);
      o.log(`ci: warning: ${text}`);
    },
  );

  let status: TaskStatus;
  let reason: string;
  if (start.kind === 'complete') {
    status = 'done';
    reason = 'finished in an earlier job; its pull request is brought up to date';
  } else {
    const runConfig: RalphConfig = { ...config, loop: { ...config.loop, maxParallel: 1 } };
    ({ status, reason } = await o.runTask(runConfig, () => sync.schedule(`ralph(${taskId}): state after an iteration`)));
  }
  await sync.idle();
  // the end of the job: everything pushed, whatever happened to the per-iteration pushes
  await pushBranch(workspace, remote, branch, auth);
  const task = await store.get(taskId);
  await saveTaskState(
    workspace,
    remote,
    taskId,
    await collectTaskState(paths, task, { ...jobState(), status }),
    `ralph(${taskId}): ${status}`,
    auth,
  );
  return { status, reason, task };
}

/**
 * Opens or updates the task's pull request when its branch has work: ready with auto-merge on
 * when the task is done and waits only for its merge, a draft otherwise.
 */
async function publishPullRequest(
  o: CiTaskOptions,
  job: CiJob,
  outcome: { task: Task; status: TaskStatus; reason: string; finalReport: string | undefined },
  warnings: string[],
): Promise<{ pr?: PullRequestInfo; done: boolean; autoMerge: boolean }> {
  const { workspace, remote, target, branch, forge, actions } = job;
  const cp = await o.records.checkpoints.load(o.taskId).catch(() => undefined);
  const done = outcome.status === 'done' && completeAwaitingMerge(cp ?? undefined);
  if (!(await hasWork(workspace, remote, target))) {
    warnings.push(`${branch} has no commit beyond ${target}: no pull request`);
    return { done, autoMerge: false };
  }
  const text = pullRequestText({ ...outcome, checkpoint: cp ?? undefined, runUrl: actions.runUrl });
  const pr = await upsertPullRequest(forge, { head: branch, base: target, ...text, draft: !done });
  if (!done) return { pr, done, autoMerge: false };
  try {
    await forge.enableAutoMerge(pr, o.config.merge.strategy);
    return { pr, done, autoMerge: true };
  } catch (error) {
    warnings.push(
      `auto-merge could not be enabled on #${pr.number}: ${errorMessage(error)} (allow auto-merge in the repository's settings, or merge it by hand)`,
    );
    return { pr, done, autoMerge: false };
  }
}

/**
 * The job's store is the target's committed one, where a dependency still reads `todo`: a
 * dependency counts as done here once its pull request merged on the forge (what the dispatcher
 * waited for), and a job dispatched before that refuses rather than start from a stale base.
 */
async function settleDependencies(forge: Forge, store: TaskStore, taskId: string): Promise<void> {
  const task = await store.get(taskId);
  for (const dep of task.dependsOn) {
    const current = await store.get(dep);
    if (current.status === 'done') continue;
    const pr = await forge.pullRequestFor(`ralph/${dep}`);
    if (!pr?.merged)
      throw new RalphError(
        `${taskId} depends on ${dep}, whose pull request has not merged${pr ? ` (#${pr.number} is ${pr.state})` : ''}: it would start from a base without ${dep}'s work`,
        'dependencies-pending',
      );
    await store.update(dep, { status: 'done' });
  }
}

/** Opens the task's pull request, or brings the open one up to date (body, draft state). */
async function upsertPullRequest(
  forge: Forge,
  draft: { head: string; base: string; title: string; body: string; draft: boolean },
): Promise<PullRequestInfo> {
  const existing = await forge.pullRequestFor(draft.head);
  if (existing && existing.state === 'open') {
    const updated = await forge.updatePullRequest(existing.number, { title: draft.title, body: draft.body });
    await forge.setDraft(updated, draft.draft);
    return { ...updated, draft: draft.draft };
  }
  return forge.openPullRequest(draft);
}

/** The merge queue's reason this task came back, from the dispatch's `feedback` input (`{ "<id>": "…" }`). */
function feedbackFor(env: NodeJS.ProcessEnv, actions: ActionsEnv, taskId: string): string | undefined {
  const text = env.RALPH_FEEDBACK || eventInput(actions, 'feedback');
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const value = parsed && typeof parsed === 'object' ? parsed[taskId] : undefined;
    return typeof value === 'string' && value.trim() ? value.trim().slice(0, 8000) : undefined;
  } catch {
    return undefined;
  }
}

async function currentBranch(workspace: string): Promise<string> {
  const head = await runGit(workspace, ['symbolic-ref', '--quiet', '--short', 'HEAD']);
  return head.code === 0 ? head.stdout.trim() : 'main';
}

function jobSummary(
  taskId: string,
  title: string,
  status: TaskStatus,
  reason: string,
  pr: PullRequestInfo | undefined,
  warnings: string[],
  text: string | undefined,
): string {
  return [
    `## Ralph ${taskId}: ${title}`,
    '',
    `**${status === 'done' ? '✅ done' : `⚠️ ${status}`}** — ${reason}`,
    '',
    pr ? `Pull request: [#${pr.number}](${pr.url})${pr.draft ? ' (draft)' : ''}` : 'No pull request.',
    ...warnings.map((w) => `- ⚠️ ${w}`),
    ...(text ? ['', '<details><summary>Final report</summary>', '', text, '', '</details>'] : []),
    '',
  ].join('\n');
}

/** Pushes the task's progress one push at a time; a push asked for while one runs is folded into the next. */
class StateSync {
  private chain: Promise<void> = Promise.resolve();
  private pending = false;

  constructor(
    private readonly push: (message: string) => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  schedule(message: string): void {
    if (this.pending) return;
    this.pending = true;
    this.chain = this.chain.then(async () => {
      this.pending = false;
      try {
        await this.push(message);
      } catch (error) {
        this.onError(error);
      }
    });
  }

  idle(): Promise<void> {
    return this.chain;
  }
}
