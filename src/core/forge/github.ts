import { errorMessage, RalphError } from '../errors';
import { githubClient, type Octokit } from './githubClient';
import type {
  CheckFailure,
  DispatchRequest,
  Forge,
  JobInfo,
  PullRequestDraft,
  PullRequestInfo,
  QueueInfo,
  RepoRef,
  RunInfo,
} from './types';

/** A call to the forge that failed: the message names the call and GitHub's answer, never the token. */
export class ForgeError extends RalphError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message, 'forge');
  }
}

export interface GitHubForgeOptions {
  repo: RepoRef;
  token: string;
  /** REST root: https://api.github.com, https://HOST/api/v3, or a test server. */
  apiUrl: string;
  /** Web root for links; default https://github.com. */
  serverUrl?: string;
}

type Pull = {
  number: number;
  html_url: string;
  node_id: string;
  state: string;
  merged_at?: string | null;
  merged?: boolean;
  draft?: boolean;
  head: { ref: string };
  base: { ref: string };
  merge_commit_sha?: string | null;
};

/**
 * GitHub through @octokit/core: REST for runs, jobs, pull requests and check runs, GraphQL for
 * what REST lacks (auto-merge, draft state, merge-queue entries and removals). The token lives in
 * the client only; errors are rethrown with GitHub's message and status, not the request.
 */
export class GitHubForge implements Forge {
  readonly kind = 'github';
  readonly repo: RepoRef;
  readonly webUrl: string;
  private client: Promise<Octokit> | undefined;

  constructor(private readonly options: GitHubForgeOptions) {
    this.repo = options.repo;
    this.webUrl = `${(options.serverUrl ?? 'https://github.com').replace(/\/+$/, '')}/${options.repo.owner}/${options.repo.name}`;
  }

  private octokit(): Promise<Octokit> {
    this.client ??= githubClient({ token: this.options.token, baseUrl: this.options.apiUrl });
    return this.client;
  }

  private get where() {
    return { owner: this.repo.owner, repo: this.repo.name };
  }

  async dispatch(request: DispatchRequest): Promise<RunInfo | undefined> {
    const o = await this.octokit();
    const route = 'POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches' as const;
    const params = { ...this.where, workflow_id: request.workflow, ref: request.ref, inputs: request.inputs };
    try {
      const response = await o.request(route, { ...params, return_run_details: true });
      const data = response.data as { workflow_run_id?: number; html_url?: string } | undefined;
      if (response.status === 200 && data?.workflow_run_id)
        return { id: data.workflow_run_id, url: data.html_url ?? `${this.webUrl}/actions/runs/${data.workflow_run_id}`, status: 'queued' };
      return undefined;
    } catch (error) {
      // servers older than the run details (GitHub Enterprise Server) refuse the parameter: dispatch without it
      if (statusOf(error) === 400 || statusOf(error) === 422) {
        if (/return_run_details/.test(errorMessage(error))) {
          await this.call(`dispatch ${request.workflow}`, () => o.request(route, params));
          return undefined;
        }
      }
      throw this.wrap(`dispatch ${request.workflow} on ${request.ref}`, error);
    }
  }

  async findRun(workflow: string, marker: string, since: string): Promise<RunInfo | undefined> {
    const o = await this.octokit();
    const { data } = await this.call('list workflow runs', () =>
      o.request('GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs', {
        ...this.where,
        workflow_id: workflow,
        event: 'workflow_dispatch',
        created: `>=${since}`,
        per_page: 50,
      }),
    );
    const run = data.workflow_runs.find((r) => (r.display_title ?? r.name ?? '').includes(marker));
    return run ? runInfo(run) : undefined;
  }

  async run(runId: number): Promise<RunInfo> {
    const o = await this.octokit();
    const { data } = await this.call(`get run ${runId}`, () =>
      o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}', { ...this.where, run_id: runId }),
    );
    return runInfo(data);
  }

  async jobs(runId: number): Promise<JobInfo[]> {
    const o = await this.octokit();
    const { data } = await this.call(`list the jobs of run ${runId}`, () =>
      o.request('GET /repos/{owner}/{repo}/actions/runs/{run_id}/jobs', { ...this.where, run_id: runId, filter: 'latest', per_page: 100 }),
    );
    return data.jobs.map((j) => ({
      id: Number(j.id),
      name: j.name,
      url: j.html_url ?? `${this.webUrl}/actions/runs/${runId}/job/${j.id}`,
      status: jobStatus(j.status),
      ...(j.conclusion ? { conclusion: j.conclusion } : {}),
    }));
  }

  async pullRequestFor(head: string): Promise<PullRequestInfo | undefined> {
    const o = await this.octokit();
    const { data } = await this.call(`find the pull request of ${head}`, () =>
      o.request('GET /repos/{owner}/{repo}/pulls', { ...this.where, head: `${this.repo.owner}:${head}`, state: 'all', per_page: 20 }),
    );
    const pulls = (data as Pull[]).filter((p) => p.head.ref === head);
    const chosen = pulls.find((p) => p.state === 'open') ?? pulls.sort((a, b) => b.number - a.number)[0];
    if (!chosen) return undefined;
    // the list leaves `merged` out: the single pull request has it
    if (chosen.state === 'closed') return this.pull(chosen.number);
    return pullInfo(chosen);
  }

  private async pull(number: number): Promise<PullRequestInfo> {
    const o = await this.octokit();
    const { data } = await this.call(`get pull request #${number}`, () =>
      o.request('GET /repos/{owner}/{repo}/pulls/{pull_number}', { ...this.where, pull_number: number }),
    );
    return pullInfo(data as Pull);
  }

  async openPullRequest(draft: PullRequestDraft): Promise<PullRequestInfo> {
    const o = await this.octokit();
    const { data } = await this.call(`open a pull request from ${draft.head}`, () =>
      o.request('POST /repos/{owner}/{repo}/pulls', {
        ...this.where,
        head: draft.head,
        base: draft.base,
        title: draft.title,
        body: draft.body,
        draft: draft.draft,
        maintainer_can_modify: false,
      }),
    );
    return pullInfo(data as Pull);
  }

  async updatePullRequest(number: number, change: { title?: string; body?: string }): Promise<PullRequestInfo> {
    const o = await this.octokit();
    const { data } = await this.call(`update pull request #${number}`, () =>
      o.request('PATCH /repos/{owner}/{repo}/pulls/{pull_number}', { ...this.where, pull_number: number, ...change }),
    );
    return pullInfo(data as Pull);
  }

  async setDraft(pr: PullRequestInfo, draft: boolean): Promise<void> {
    if (pr.draft === draft) return;
    const mutation = draft
      ? 'mutation RalphConvertToDraft($id: ID!) { convertPullRequestToDraft(input: { pullRequestId: $id }) { pullRequest { isDraft } } }'
      : 'mutation RalphReadyForReview($id: ID!) { markPullRequestReadyForReview(input: { pullRequestId: $id }) { pullRequest { isDraft } } }';
    await this.graphql(`mark pull request #${pr.number} ${draft ? 'draft' : 'ready for review'}`, mutation, { id: pr.nodeId });
  }

  async enableAutoMerge(pr: PullRequestInfo, method: 'squash' | 'merge'): Promise<void> {
    await this.graphql(
      `enable auto-merge on pull request #${pr.number}`,
      'mutation RalphEnableAutoMerge($id: ID!, $mergeMethod: PullRequestMergeMethod!) { enablePullRequestAutoMerge(input: { pullRequestId: $id, mergeMethod: $mergeMethod }) { pullRequest { autoMergeRequest { enabledAt } } } }',
      { id: pr.nodeId, mergeMethod: method === 'squash' ? 'SQUASH' : 'MERGE' },
    );
  }

  async queue(pr: PullRequestInfo): Promise<QueueInfo> {
    const data = await this.graphql<QueueQuery>(
      `read the merge queue state of #${pr.number}`,
      `query RalphMergeQueue($owner: String!, $name: String!, $number: Int!) {
        repository(owner: $owner, name: $name) {
          pullRequest(number: $number) {
            isInMergeQueue
            mergeQueueEntry { position state }
            autoMergeRequest { enabledAt }
            timelineItems(last: 1, itemTypes: [REMOVED_FROM_MERGE_QUEUE_EVENT]) { nodes { ... on RemovedFromMergeQueueEvent { createdAt reason } } }
          }
        }
      }`,
      { owner: this.repo.owner, name: this.repo.name, number: pr.number },
    );
    const p = data.repository?.pullRequest;
    if (!p) throw new ForgeError(`pull request #${pr.number} was not found in ${repoText(this.repo)}`);
    const removal = p.timelineItems?.nodes?.find((n) => n && n.createdAt);
    return {
      inQueue: p.isInMergeQueue === true,
      ...(p.mergeQueueEntry ? { position: p.mergeQueueEntry.position, entryState: p.mergeQueueEntry.state } : {}),
      autoMerge: p.autoMergeRequest !== null && p.autoMergeRequest !== undefined,
      ...(removal ? { lastRemoval: { at: removal.createdAt!, reason: removal.reason ?? 'removed from the merge queue' } } : {}),
    };
  }

  async mergeGroupFailures(pr: PullRequestInfo, since?: string): Promise<CheckFailure[]> {
    const o = await this.octokit();
    const { data } = await this.call("list the merge queue's runs", () =>
      o.request('GET /repos/{owner}/{repo}/actions/runs', { ...this.where, event: 'merge_group', per_page: 50 }),
    );
    // the queue tests each entry on a branch of its own: gh-readonly-queue/<base>/pr-<number>-<sha>
    const prefix = `gh-readonly-queue/${pr.base}/pr-${pr.number}-`;
    // an earlier entry's failures are not this removal's
    const run = data.workflow_runs
      .filter((r) => (r.head_branch ?? '').startsWith(prefix) && (!since || r.created_at > since))
      .sort((a, b) => Number(b.id) - Number(a.id))[0];
    return run ? this.failingChecks(run.head_sha) : [];
  }

  private async failingChecks(sha: string): Promise<CheckFailure[]> {
    const o = await this.octokit();
    const { data } = await this.call(`list the checks of ${sha.slice(0, 10)}`, () =>
      o.request('GET /repos/{owner}/{repo}/commits/{ref}/check-runs', { ...this.where, ref: sha, per_page: 100 }),
    );
    return data.check_runs
      .filter((c) => c.status === 'completed' && c.conclusion !== null && !['success', 'neutral', 'skipped'].includes(c.conclusion))
      .map((c) => ({
        name: c.name,
        conclusion: c.conclusion ?? 'failure',
        summary: [c.output?.title, c.output?.summary].filter(Boolean).join(': ').slice(0, 4000),
      }));
  }

  private async graphql<T = unknown>(what: string, query: string, variables: Record<string, unknown>): Promise<T> {
    const o = await this.octokit();
    // POST <apiUrl>/graphql; a GitHub Enterprise Server root (…/api/v3) is mapped to …/api/graphql by the client
    return this.call(what, () => o.graphql<T>(query, variables));
  }

  private async call<T>(what: string, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw this.wrap(what, error);
    }
  }

  private wrap(what: string, error: unknown): ForgeError {
    const status = statusOf(error);
    const hint =
      status === 401
        ? ' (the token is missing, expired or revoked)'
        : status === 403 || status === 404
          ? ` (does the token have access to ${repoText(this.repo)} with the permissions it needs: contents, pull requests, actions?)`
          : '';
    return new ForgeError(`GitHub: could not ${what}: ${errorMessage(error)}${hint}`, status);
  }
}

interface QueueQuery {
  repository?: {
    pullRequest?: {
      isInMergeQueue?: boolean;
      mergeQueueEntry?: { position: number; state: string } | null;
      autoMergeRequest?: { enabledAt: string } | null;
      timelineItems?: { nodes?: ({ createdAt?: string; reason?: string } | null)[] };
    } | null;
  } | null;
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown })?.status;
  return typeof status === 'number' ? status : undefined;
}

function repoText(repo: RepoRef): string {
  return `${repo.owner}/${repo.name}`;
}

function jobStatus(status: string): JobInfo['status'] {
  return status === 'completed'
    ? 'completed'
    : status === 'queued' || status === 'waiting' || status === 'pending' || status === 'requested'
      ? 'queued'
      : 'in_progress';
}

function runInfo(run: { id: number | bigint; html_url: string; status: string | null; conclusion: string | null }): RunInfo {
  return {
    id: Number(run.id),
    url: run.html_url,
    status: jobStatus(run.status ?? 'queued'),
    ...(run.conclusion ? { conclusion: run.conclusion } : {}),
  };
}

function pullInfo(p: Pull): PullRequestInfo {
  const merged = p.merged === true || Boolean(p.merged_at);
  return {
    number: p.number,
    url: p.html_url,
    nodeId: p.node_id,
    state: p.state === 'open' ? 'open' : 'closed',
    merged,
    draft: p.draft === true,
    head: p.head.ref,
    base: p.base.ref,
    ...(merged && p.merge_commit_sha ? { mergeCommit: p.merge_commit_sha } : {}),
  };
}
