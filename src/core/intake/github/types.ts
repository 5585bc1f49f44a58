import type { RepoRef } from '../../git/issueRefs';

/** An issue as the import reads it (from GitHub's REST shape: `html_url`, `labels[].name`, `milestone.title`…). */
export interface GitHubIssue {
  number: number;
  title: string;
  body: string;
  /** The issue's page: the task's `source`, and how a re-import finds the task again. */
  url: string;
  state: 'open' | 'closed';
  labels: string[];
  milestone?: string;
  updatedAt: string;
}

export interface IssueQuery {
  /** Only issues that carry every one of these labels. */
  labels?: string[];
  /** A milestone's title or number, `*` (any) or `none`. */
  milestone?: string;
}

/** Where issues come from: GitHub's REST API in the product (octokit), a scripted server in the tests. */
export interface IssueSource {
  /** The open issues of `repo` matching `query`, every page; pull requests are left out. */
  listOpenIssues(repo: RepoRef, query: IssueQuery): Promise<GitHubIssue[]>;
  /** One issue (open or closed); undefined when it does not exist or is a pull request. */
  getIssue(repo: RepoRef, number: number): Promise<GitHubIssue | undefined>;
}
