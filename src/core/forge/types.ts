/**
 * The forge as the rest of the core sees it: dispatch jobs, follow them, open pull requests and
 * hand them to the forge's merge queue. GitHub (Actions + merge queue) implements it today; GitLab
 * (CI pipelines + merge trains) would implement the same interface.
 */

/** `owner/name` of a repository on the forge. */
export interface RepoRef {
  owner: string;
  name: string;
}

export function repoSlug(repo: RepoRef): string {
  return `${repo.owner}/${repo.name}`;
}

/** A dispatched workflow run (GitHub) or pipeline (GitLab). */
export interface RunInfo {
  id: number;
  url: string;
  status: 'queued' | 'in_progress' | 'completed';
  /** Set once completed: success, failure, cancelled, timed_out… */
  conclusion?: string;
}

/** One job of a run: one task. */
export interface JobInfo {
  id: number;
  name: string;
  url: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion?: string;
}

export interface PullRequestInfo {
  number: number;
  url: string;
  /** The forge's node id (GraphQL), for auto-merge and the queue. */
  nodeId: string;
  state: 'open' | 'closed';
  merged: boolean;
  draft: boolean;
  head: string;
  base: string;
  /** The merge commit once merged. */
  mergeCommit?: string;
}

/** Where a pull request stands with the merge queue. */
export interface QueueInfo {
  /** In the queue now. */
  inQueue: boolean;
  /** Its position (1 = next), when in the queue. */
  position?: number;
  /** The forge's state of the entry: QUEUED, AWAITING_CHECKS, MERGEABLE, UNMERGEABLE, LOCKED. */
  entryState?: string;
  autoMerge: boolean;
  /** The latest removal from the queue, if any: when and the forge's reason. */
  lastRemoval?: { at: string; reason: string };
}

export interface DispatchRequest {
  /** The workflow file (`ralph.yml`). */
  workflow: string;
  /** The branch the workflow definition is taken from (and the jobs check out). */
  ref: string;
  inputs: Record<string, string>;
}

export interface PullRequestDraft {
  head: string;
  base: string;
  title: string;
  body: string;
  draft: boolean;
}

/** A failing check of a pull request's head or of its merge-queue entry: what goes back to the agent. */
export interface CheckFailure {
  name: string;
  conclusion: string;
  summary: string;
}

export interface Forge {
  readonly kind: 'github';
  readonly repo: RepoRef;
  /** Web address of the repository (for links). */
  readonly webUrl: string;
  /** Starts the dispatch workflow; the run when the forge says which one it started. */
  dispatch(request: DispatchRequest): Promise<RunInfo | undefined>;
  /** The latest run of `workflow` whose title names `marker` (a forge that does not return the run on dispatch). */
  findRun(workflow: string, marker: string, since: string): Promise<RunInfo | undefined>;
  run(runId: number): Promise<RunInfo>;
  jobs(runId: number): Promise<JobInfo[]>;
  /** The pull request from `head` (open first, else the latest closed one). */
  pullRequestFor(head: string): Promise<PullRequestInfo | undefined>;
  openPullRequest(draft: PullRequestDraft): Promise<PullRequestInfo>;
  updatePullRequest(number: number, change: { title?: string; body?: string }): Promise<PullRequestInfo>;
  /** Draft → ready for review (and the other way), so that a failed task's PR is not merged. */
  setDraft(pr: PullRequestInfo, draft: boolean): Promise<void>;
  /** Merge when ready: with a merge queue required on the base, the forge queues it once its checks pass. */
  enableAutoMerge(pr: PullRequestInfo, method: 'squash' | 'merge'): Promise<void>;
  queue(pr: PullRequestInfo): Promise<QueueInfo>;
  /** The failing checks of the pull request's latest merge-queue entry (its merge group's commit) made after `since` (ISO). */
  mergeGroupFailures(pr: PullRequestInfo, since?: string): Promise<CheckFailure[]>;
}
