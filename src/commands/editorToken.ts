/**
 * The editor's GitHub token: VS Code's GitHub session, else what the CLI would use (GITHUB_TOKEN,
 * GH_TOKEN, gh), else — on the person's command — VS Code's GitHub sign-in after asking. Kept in
 * memory only.
 */
import * as vscode from 'vscode';
import { errorMessage } from '../core/errors';
import { environmentToken, type ForgeToken, ForgeTokenError, type ForgeTokenSource } from '../core/forge/token';
import type { Prompts } from '../ui/dialogs';

/** GitHub's scopes for dispatching workflows and opening pull requests. */
const SCOPES = ['repo', 'workflow'];
/** A silent look for VS Code's GitHub session never holds a command up longer than this. */
const SILENT_SESSION_MS = 10_000;
/** The person's sign-in (a browser round trip) may take a while, not forever. */
const SIGN_IN_MINUTES = 5;

/** What the person can do instead of signing in to GitHub in VS Code. */
const OTHER_WAYS =
  'set GH_TOKEN or GITHUB_TOKEN in the environment the editor starts from (a token with the contents, pull requests and actions permissions of the repository; code-server keeps GITHUB_TOKEN to itself, so there use GH_TOKEN), or log in with the GitHub CLI (gh auth login)';
/** What the person can do when there is no token: said in the error. */
export const TOKEN_HINT = `sign in to GitHub in VS Code (Ralph asks when you run Run Tasks on GitHub Actions), ${OTHER_WAYS}`;

/**
 * The editor's token: VS Code's GitHub session (asked silently first, bounded), else what the CLI
 * would use (GITHUB_TOKEN, GH_TOKEN, gh). Without either, on the person's command Ralph asks
 * whether to sign in to GitHub (VS Code's sign-in); else, or when the sign-in does not complete,
 * a ForgeTokenError says what to do. Kept in memory.
 */
export function editorToken(interactive: boolean, prompts: Prompts, env: NodeJS.ProcessEnv = process.env): ForgeTokenSource {
  return async (): Promise<ForgeToken> => {
    const silent = await silentSession();
    if (silent) return sessionToken(silent);
    try {
      return await environmentToken(env)();
    } catch (error) {
      if (!(error instanceof ForgeTokenError)) throw error;
    }
    const signInAction = 'Sign In to GitHub';
    if (
      !interactive ||
      !(await prompts.confirm(
        'Ralph needs a GitHub token to run tasks on GitHub Actions.',
        `There is no GitHub session in VS Code and no GITHUB_TOKEN, GH_TOKEN or gh login. Sign in to GitHub now, or ${OTHER_WAYS}, then run the command again.`,
        signInAction,
      ))
    ) {
      throw new ForgeTokenError(`no GitHub token: ${TOKEN_HINT}`);
    }
    try {
      return sessionToken(await signIn());
    } catch (error) {
      throw new ForgeTokenError(`the GitHub sign-in did not complete (${errorMessage(error)}): ${TOKEN_HINT}`);
    }
  };
}

/**
 * VS Code's GitHub sign-in, while a notification says Ralph waits for it (with Cancel), bounded:
 * where GitHub cannot be reached (code-server offline) the sign-in never answers after Allow.
 */
function signIn(): Thenable<vscode.AuthenticationSession> {
  const title = 'Ralph: waiting for the GitHub sign-in';
  return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (_progress, cancel) => {
    return new Promise<vscode.AuthenticationSession>((resolve, reject) => {
      const end = (settle: () => void) => {
        clearTimeout(timer);
        cancelled.dispose();
        settle();
      };
      const timer = setTimeout(() => end(() => reject(new Error(`no answer in ${SIGN_IN_MINUTES} minutes`))), SIGN_IN_MINUTES * 60_000);
      const cancelled = cancel.onCancellationRequested(() => end(() => reject(new Error('cancelled'))));
      vscode.authentication.getSession('github', SCOPES, { createIfNone: true }).then(
        (session) => end(() => resolve(session)),
        (error: unknown) => end(() => reject(error instanceof Error ? error : new Error(String(error)))),
      );
    });
  });
}

async function silentSession(): Promise<vscode.AuthenticationSession | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), SILENT_SESSION_MS)));
  // no GitHub provider (a web editor offline, say) rejects: the same as no session
  const session = Promise.resolve(vscode.authentication.getSession('github', SCOPES, { silent: true })).catch(() => undefined);
  try {
    return await Promise.race([session, bound]);
  } finally {
    clearTimeout(timer);
  }
}

function sessionToken(session: vscode.AuthenticationSession): ForgeToken {
  return { value: session.accessToken, source: `VS Code's GitHub session (${session.account.label})` };
}
