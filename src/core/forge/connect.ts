import type { RalphConfig } from '../config/schema';
import { ConfigError } from '../errors';
import { runGit } from '../git/gitExec';
import { GitHubForge } from './github';
import type { ForgeTokenSource } from './token';
import type { Forge, RepoRef } from './types';

export interface ForgeConnection {
  forge: Forge;
  /** The token's value: added to the run's redactor, never shown. */
  token: string;
  tokenSource: string;
}

/**
 * The repository on the forge: `forge.repository`, else `GITHUB_REPOSITORY` (set in every
 * Actions job), else the owner/name in the remote's URL (https, ssh or scp-like).
 */
export async function resolveRepository(workspace: string, config: RalphConfig, env: NodeJS.ProcessEnv = process.env): Promise<RepoRef> {
  const named = config.forge.repository ?? env.GITHUB_REPOSITORY;
  if (named) return splitSlug(named);
  const url = await runGit(workspace, ['remote', 'get-url', config.forge.remote]);
  const slug = url.code === 0 ? slugFromUrl(url.stdout.trim()) : undefined;
  if (slug) return splitSlug(slug);
  throw new ConfigError(
    url.code === 0
      ? `cannot tell the GitHub repository from the URL of the remote "${config.forge.remote}" (${url.stdout.trim()}): set "forge": { "repository": "owner/name" } in .ralph/config.json`
      : `the workspace has no git remote "${config.forge.remote}": add it (git remote add ${config.forge.remote} <url>), or set forge.remote / forge.repository in .ralph/config.json`,
  );
}

/** `owner/name` of a GitHub remote URL: https://github.com/o/n(.git), git@github.com:o/n.git, ssh://git@host/o/n. */
export function slugFromUrl(url: string): string | undefined {
  const match = /^(?:[a-z+]+:\/\/(?:[^@/]+@)?[^/]+\/|[^@/\s]+@[^:/\s]+:)([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(url);
  return match ? `${match[1]}/${match[2]}` : undefined;
}

function splitSlug(slug: string): RepoRef {
  const [owner, name, extra] = slug.split('/');
  if (!owner || !name || extra !== undefined) throw new ConfigError(`"${slug}" is not a repository: expected owner/name`);
  return { owner, name };
}

/** The forge of the configuration, with a token from `tokens`. */
export async function connectForge(
  workspace: string,
  config: RalphConfig,
  tokens: ForgeTokenSource,
  env: NodeJS.ProcessEnv = process.env,
): Promise<ForgeConnection> {
  const repo = await resolveRepository(workspace, config, env);
  const token = await tokens();
  const apiUrl = config.forge.apiUrl ?? env.GITHUB_API_URL ?? 'https://api.github.com';
  const forge = new GitHubForge({
    repo,
    token: token.value,
    apiUrl,
    ...(env.GITHUB_SERVER_URL ? { serverUrl: env.GITHUB_SERVER_URL } : {}),
  });
  return { forge, token: token.value, tokenSource: token.source };
}
