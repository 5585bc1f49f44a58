/**
 * The issue a task came from, and the line that closes it when the task's work lands: the local
 * merge queue's commit message says it, and so can a forge's pull request body.
 */

export interface RepoRef {
  owner: string;
  repo: string;
}

export interface IssueRef extends RepoRef {
  host: string;
  number: number;
}

const ISSUE_URL = /^https?:\/\/([^/\s]+)\/([^/\s]+)\/([^/\s]+)\/issues\/(\d+)\/?$/;

/** The issue a task's `source` links to (`https://github.com/o/r/issues/12`, GitHub Enterprise hosts too). */
export function issueOf(source: string | undefined): IssueRef | undefined {
  const match = source ? ISSUE_URL.exec(source.trim()) : null;
  return match ? { host: match[1].toLowerCase(), owner: match[2], repo: match[3], number: Number(match[4]) } : undefined;
}

/** `owner/repo` of a git remote URL (`git@github.com:o/r.git`, `https://github.com/o/r`, `ssh://git@host/o/r.git`). */
export function repoOfRemote(url: string): (RepoRef & { host: string }) | undefined {
  const match = /^(?:[a-z+]+:\/\/)?(?:[^@/\s]+@)?([^/:\s]+)(?::\d+)?[:/]([^/\s]+)\/([^/\s]+?)(?:\.git)?\/?$/i.exec(url.trim());
  return match ? { host: match[1].toLowerCase(), owner: match[2], repo: match[3] } : undefined;
}

/** `owner/repo` typed by a person; undefined when it is not that shape. */
export function parseRepo(text: string): RepoRef | undefined {
  const match = /^([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))\/([A-Za-z0-9._-]{1,100})$/.exec(text.trim());
  return match && match[2] !== '.' && match[2] !== '..' ? { owner: match[1], repo: match[2] } : undefined;
}

/**
 * `Closes #12` for an issue of the repository the work lands in (its `origin`), `Closes o/r#12`
 * for an issue elsewhere; undefined for a task that came from no issue.
 */
export function closingLine(source: string | undefined, origin: RepoRef | undefined): string | undefined {
  const issue = issueOf(source);
  if (!issue) return undefined;
  const same = origin && origin.owner.toLowerCase() === issue.owner.toLowerCase() && origin.repo.toLowerCase() === issue.repo.toLowerCase();
  return same ? `Closes #${issue.number}` : `Closes ${issue.owner}/${issue.repo}#${issue.number}`;
}
