import { execFile } from 'node:child_process';
import { RalphError } from '../errors';

/** Where the forge token came from, for messages (never the token itself). */
export interface ForgeToken {
  value: string;
  source: string;
}

/** Resolves the forge token; the editor supplies its GitHub session, the CLI the environment or gh. */
export type ForgeTokenSource = () => Promise<ForgeToken>;

/** No token to talk to the forge with: a usage problem, said with what to do. */
export class ForgeTokenError extends RalphError {
  constructor(message: string) {
    super(message, 'forge-token');
  }
}

/**
 * The CLI's token: `GITHUB_TOKEN`, else `GH_TOKEN`, else what the GitHub CLI is logged in with
 * (`gh auth token`). Kept in memory only: never written to a file, a log or an event, and never
 * passed to a command the agent runs (both variables are scrubbed from its environment and their
 * values redacted, like every variable named like a secret).
 */
export function environmentToken(
  env: NodeJS.ProcessEnv = process.env,
  gh: () => Promise<string | undefined> = ghAuthToken,
): ForgeTokenSource {
  return async () => {
    for (const name of ['GITHUB_TOKEN', 'GH_TOKEN']) {
      const value = env[name]?.trim();
      if (value) return { value, source: `the environment variable ${name}` };
    }
    const fromGh = await gh();
    if (fromGh) return { value: fromGh, source: 'the GitHub CLI (gh auth token)' };
    throw new ForgeTokenError(
      'no GitHub token: set GITHUB_TOKEN (a token with the contents, pull requests and actions permissions of the repository) or log in with the GitHub CLI (gh auth login)',
    );
  };
}

/** `gh auth token`, or undefined when gh is missing, not logged in, or slow. */
export function ghAuthToken(): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile(
      'gh',
      ['auth', 'token'],
      { timeout: 10_000, env: { ...process.env, GH_PROMPT_DISABLED: '1', NO_COLOR: '1' } },
      (error, stdout) => {
        const token = stdout?.toString().trim();
        resolve(!error && token ? token : undefined);
      },
    );
  });
}
