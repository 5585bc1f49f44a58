/**
 * How a task that runs as a CI job looks on the forge, for the task tree and the progress panel
 * alike: one icon, colour and set of words per remote state, and the link's label. Types and
 * constants only, no `vscode` import: the webview bundle imports this file.
 */
import type { RemoteView } from './panelState';

export type RemoteStateName = RemoteView['state'];

export interface RemoteLook {
  /** A codicon (`name~spin` spins). */
  icon: string;
  /** A theme colour id for the tree's icon. */
  color: string;
  /** The badge's words, e.g. `PR open`. */
  words: string;
}

export const REMOTE_LOOK: Readonly<Record<RemoteStateName, RemoteLook>> = {
  queued: { icon: 'cloud-upload', color: 'charts.blue', words: 'queued on GitHub Actions' },
  running: { icon: 'sync~spin', color: 'charts.blue', words: 'running on GitHub Actions' },
  'pr-open': { icon: 'git-pull-request', color: 'charts.purple', words: 'PR open' },
  'in-queue': { icon: 'git-pull-request-done', color: 'charts.purple', words: 'in merge queue' },
  merged: { icon: 'git-merge', color: 'testing.iconPassed', words: 'merged' },
  failed: { icon: 'error', color: 'testing.iconFailed', words: 'failed on GitHub Actions' },
};

/** The look of a remote state; a state this build does not know (a newer store) shows as itself. */
export function remoteLook(state: string): RemoteLook {
  return (REMOTE_LOOK as Record<string, RemoteLook | undefined>)[state] ?? { icon: 'cloud', color: 'charts.blue', words: state };
}

/** What the badge says: its words, and the queue position while the merge queue holds the task. */
export function remoteWords(remote: Pick<RemoteView, 'state' | 'detail'>): string {
  const { words } = remoteLook(remote.state);
  return remote.state === 'in-queue' && remote.detail ? `${words} · ${remote.detail}` : words;
}

/**
 * The link's label, after where it goes: the pull request (`Open pull request #12`) or the job (a
 * task sent back by the merge queue links to its new job, though it keeps its pull request).
 */
export function remoteLinkLabel(remote: { url: string; pr?: number }): string {
  if (!/\/pull\/\d+/.test(remote.url)) return 'Open the job on GitHub Actions';
  return remote.pr !== undefined ? `Open pull request #${remote.pr}` : 'Open the pull request';
}

/** Statuses a task may end in on the forge without merging (the job failed, timed out, needs a person…). */
const ENDED_UNMERGED: ReadonlySet<string> = new Set(['failed', 'timeout', 'halted', 'blocked', 'needs_help', 'cancelled']);

/**
 * The remote state worth showing with the task's status, or undefined when it is stale: the
 * forge holds the task, or it merged there and the task is done, or its job ended unmerged and
 * the task still says so. A task retried or finished here after a failed job shows no badge.
 */
export function currentRemote<R extends { state: string }>(status: string, remote: R | undefined): R | undefined {
  if (!remote) return undefined;
  if (remote.state === 'merged') return status === 'done' ? remote : undefined;
  if (remote.state === 'failed') return ENDED_UNMERGED.has(status) ? remote : undefined;
  return remote;
}
