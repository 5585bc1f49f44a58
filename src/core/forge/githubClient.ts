import type { Octokit } from '@octokit/core' with { 'resolution-mode': 'import' };

export type { Octokit };

/** GitHub's REST API root (GitHub Enterprise: `https://HOST/api/v3`); GitHub Actions sets GITHUB_API_URL. */
export const DEFAULT_GITHUB_API = 'https://api.github.com';

export interface GitHubClientOptions {
  /** Without one only public repositories, at a low rate limit. Sent in the Authorization header only. */
  token?: string;
  /** REST root; default api.github.com. */
  baseUrl?: string;
  /** Custom fetch (tests, proxies). */
  fetch?: typeof globalThis.fetch;
  /** Octokit's own console lines (deprecations, request logs) left unsaid. */
  quiet?: boolean;
}

/**
 * The one GitHub client of the core (the forge and the issue import): @octokit/core, an ES module
 * loaded on first use, so the extension's activation never pays for it.
 */
export async function githubClient(options: GitHubClientOptions): Promise<Octokit> {
  const { Octokit } = await import('@octokit/core');
  const { token, baseUrl, fetch, quiet } = options;
  return new Octokit({
    ...(token ? { auth: token } : {}),
    baseUrl: (baseUrl ?? DEFAULT_GITHUB_API).replace(/\/+$/, ''),
    userAgent: 'ralph-loop',
    ...(quiet ? { log: { debug() {}, info() {}, warn() {}, error() {} } } : {}),
    ...(fetch ? { request: { fetch } } : {}),
  });
}

/** Every page of a REST list: the first page, then each `rel="next"` of GitHub's Link header. */
export async function allPages<T>(octokit: Octokit, route: string, params: Record<string, unknown>): Promise<T[]> {
  const items: T[] = [];
  let response = await octokit.request(route, params);
  for (;;) {
    items.push(...(response.data as T[]));
    const next = nextPage(response.headers.link);
    if (!next) return items;
    response = await octokit.request({ method: 'GET', url: next });
  }
}

function nextPage(link: string | undefined): string | undefined {
  for (const part of (link ?? '').split(',')) {
    const match = /<([^>]+)>\s*;\s*rel="next"/.exec(part);
    if (match) return match[1];
  }
  return undefined;
}
