import * as vscode from 'vscode';

/** What the GitHub session is asked for: private repositories' issues. */
const SCOPES = ['repo'];
/** A silent session lookup that takes longer than this has no answer (no GitHub sign-in in this editor). */
const SILENT_MS = 10_000;

/**
 * A GitHub token for the issue import, never written anywhere: `GITHUB_TOKEN` when set, else
 * VS Code's GitHub session (signed in already, else the person is asked to sign in); undefined
 * when neither is there (public repositories still import, at GitHub's low anonymous limit).
 */
export async function githubToken(): Promise<string | undefined> {
  if (process.env.GITHUB_TOKEN) return process.env.GITHUB_TOKEN;
  const silent = await bounded(vscode.authentication.getSession('github', SCOPES, { silent: true }), SILENT_MS);
  if (silent) return silent.accessToken;
  try {
    return (await vscode.authentication.getSession('github', SCOPES, { createIfNone: true })).accessToken;
  } catch {
    // declined, or no GitHub sign-in in this editor
    return undefined;
  }
}

async function bounded<T>(work: Thenable<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      Promise.resolve(work).catch(() => undefined),
      new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
