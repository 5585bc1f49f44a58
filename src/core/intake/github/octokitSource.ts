import { RalphError } from '../../errors';
import type { RepoRef } from '../../git/issueRefs';
import type { GitHubIssue, IssueQuery, IssueSource } from './types';

import { allPages, DEFAULT_GITHUB_API, githubClient, type Octokit } from '../../forge/githubClient';

export interface OctokitSourceOptions {
  /** A token (GITHUB_TOKEN, VS Code's GitHub session); without one only public repositories, at a low rate limit. */
  token?: string;
  baseUrl?: string;
  /** Custom fetch (tests, proxies). */
  fetch?: typeof globalThis.fetch;
}

/** A GitHub request that failed, said without the token. */
export class GitHubError extends RalphError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message, 'github');
  }
}

interface RestIssue {
  number: number;
  title: string;
  body?: string | null;
  html_url: string;
  state: string;
  labels: (string | { name?: string | null })[];
  milestone?: { title: string } | null;
  updated_at: string;
  pull_request?: unknown;
}

/**
 * Issues through the core's GitHub client (forge/githubClient.ts): the repository's issues with
 * every page (the Link headers followed), a milestone named by its title looked up in its
 * milestones. The token goes into the Authorization header only.
 */
export class OctokitIssueSource implements IssueSource {
  private client: Promise<Octokit> | undefined;

  constructor(private readonly options: OctokitSourceOptions = {}) {}

  async listOpenIssues(repo: RepoRef, query: IssueQuery): Promise<GitHubIssue[]> {
    const octokit = await this.octokit();
    const milestone = query.milestone === undefined ? undefined : await this.milestoneParam(octokit, repo, query.milestone);
    const items = await this.call(repo, () =>
      allPages<RestIssue>(octokit, 'GET /repos/{owner}/{repo}/issues', {
        owner: repo.owner,
        repo: repo.repo,
        state: 'open',
        per_page: 100,
        ...(query.labels?.length ? { labels: query.labels.join(',') } : {}),
        ...(milestone !== undefined ? { milestone } : {}),
      }),
    );
    return items.filter((i) => !i.pull_request).map(toIssue);
  }

  async getIssue(repo: RepoRef, number: number): Promise<GitHubIssue | undefined> {
    const octokit = await this.octokit();
    try {
      const { data } = await octokit.request('GET /repos/{owner}/{repo}/issues/{issue_number}', {
        owner: repo.owner,
        repo: repo.repo,
        issue_number: number,
      });
      const issue = data as unknown as RestIssue;
      return issue.pull_request ? undefined : toIssue(issue);
    } catch (error) {
      if (statusOf(error) === 404 || statusOf(error) === 410) return undefined;
      throw this.explain(error, repo);
    }
  }

  /** `milestone` as the API takes it: a number, `*` or `none`; a title is looked up. */
  private async milestoneParam(octokit: Octokit, repo: RepoRef, milestone: string): Promise<string> {
    const wanted = milestone.trim();
    if (/^\d+$/.test(wanted) || wanted === '*' || wanted === 'none') return wanted;
    const all = await this.call(repo, () =>
      allPages<{ number: number; title: string }>(octokit, 'GET /repos/{owner}/{repo}/milestones', {
        owner: repo.owner,
        repo: repo.repo,
        state: 'all',
        per_page: 100,
      }),
    );
    const found = all.find((m) => m.title.toLowerCase() === wanted.toLowerCase());
    if (!found)
      throw new GitHubError(
        `${repo.owner}/${repo.repo} has no milestone "${milestone}"${all.length ? `; its milestones: ${all.map((m) => m.title).join(', ')}` : ''}`,
        404,
      );
    return String(found.number);
  }

  private octokit(): Promise<Octokit> {
    this.client ??= githubClient({ ...this.options, quiet: true });
    return this.client;
  }

  private async call<T>(repo: RepoRef, request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw this.explain(error, repo);
    }
  }

  /** What went wrong, for a person: never the token, never octokit's request dump. */
  private explain(error: unknown, repo: RepoRef): Error {
    if (error instanceof GitHubError) return error;
    const status = statusOf(error);
    const name = `${repo.owner}/${repo.repo}`;
    const headers = (error as { response?: { headers?: Record<string, string | undefined> } }).response?.headers ?? {};
    const said = githubMessage(error);
    if (status === 401)
      return new GitHubError(
        `GitHub refused the token (401${said ? `: ${said}` : ''}): ${this.options.token ? 'it is wrong or expired' : 'none was given'}; set GITHUB_TOKEN (or sign in to GitHub in VS Code)`,
        status,
      );
    if ((status === 403 || status === 429) && (headers['x-ratelimit-remaining'] === '0' || status === 429)) {
      const reset = Number(headers['x-ratelimit-reset']);
      const until = Number.isFinite(reset) && reset > 0 ? ` until ${new Date(reset * 1000).toISOString()}` : '';
      return new GitHubError(`GitHub's rate limit is used up${until}${this.options.token ? '' : ' (a GITHUB_TOKEN raises it)'}`, status);
    }
    if (status === 404)
      return new GitHubError(
        `${name} was not found on GitHub${this.options.token ? ' (or the token cannot see it)' : ' (a private repository needs GITHUB_TOKEN)'}`,
        status,
      );
    if (status !== undefined) return new GitHubError(`GitHub answered ${status} for ${name}${said ? `: ${said}` : ''}`, status);
    return new GitHubError(
      `could not reach GitHub (${(this.options.baseUrl ?? DEFAULT_GITHUB_API).replace(/\/+$/, '')}): ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function toIssue(issue: RestIssue): GitHubIssue {
  return {
    number: issue.number,
    title: issue.title,
    body: issue.body ?? '',
    url: issue.html_url,
    state: issue.state === 'closed' ? 'closed' : 'open',
    labels: issue.labels.map((l) => (typeof l === 'string' ? l : (l.name ?? ''))).filter(Boolean),
    ...(issue.milestone?.title ? { milestone: issue.milestone.title } : {}),
    updatedAt: issue.updated_at,
  };
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown }).status;
  return typeof status === 'number' ? status : undefined;
}

/** GitHub's own `message` from an error body (`Bad credentials`, `Not Found`). */
function githubMessage(error: unknown): string | undefined {
  const data = (error as { response?: { data?: unknown } }).response?.data;
  const message = data && typeof data === 'object' ? (data as { message?: unknown }).message : undefined;
  return typeof message === 'string' ? message.slice(0, 200) : undefined;
}
