/**
 * The one way tests make a git workspace: an isolated environment for git (no user or system
 * configuration leaks in, no prompts), `git init` on branch `main` with a local identity and no
 * signing, and a first commit of whatever the folder holds. The unit tests' temp workspaces and
 * the workspace the integration and e2e tiers open are both built with it.
 */
import { execFileSync } from 'node:child_process';
import { appendFileSync, existsSync } from 'node:fs';
import * as path from 'node:path';

/** Environment for test git calls: no user or system config leaks in, no prompts. */
export const TEST_GIT_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Ralph Test',
  GIT_AUTHOR_EMAIL: 'ralph-test@example.invalid',
  GIT_COMMITTER_NAME: 'Ralph Test',
  GIT_COMMITTER_EMAIL: 'ralph-test@example.invalid',
};

/** Runs git in `dir` and returns trimmed stdout; throws on a non-zero exit. */
export function gitIn(dir: string): (...args: string[]) => string {
  return (...args) =>
    execFileSync('git', args, { cwd: dir, env: TEST_GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/**
 * The repository's own settings: a local identity (features that commit work on a bare CI
 * machine), no signing, and no `git maintenance run --auto` after each commit (a process git
 * starts after every commit, merge and fetch, for repositories that live seconds).
 */
const LOCAL_CONFIG: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  user: { name: 'Ralph Test', email: 'ralph-test@example.invalid' },
  commit: { gpgsign: 'false' },
  maintenance: { auto: 'false' },
};

/**
 * `git init` on branch `main`, with `LOCAL_CONFIG`. A new repository takes one git process
 * (`--initial-branch`, git ≥ 2.28), its settings appended to its `.git/config` as `git config`
 * writes them; a folder that is a repository already (whose HEAD `git init` keeps), or an older
 * git, has its branch set by `symbolic-ref` and its settings by `git config`.
 */
export function initTestRepo(dir: string): void {
  const git = gitIn(dir);
  if (!existsSync(path.join(dir, '.git')) && succeeds(() => git('init', '-q', '--initial-branch=main'))) {
    const text = Object.entries(LOCAL_CONFIG).map(([section, keys]) => [
      `[${section}]`,
      ...Object.entries(keys).map(([k, v]) => `\t${k} = ${v}`),
    ]);
    appendFileSync(path.join(dir, '.git', 'config'), `${text.flat().join('\n')}\n`);
    return;
  }
  git('init', '-q');
  git('symbolic-ref', 'HEAD', 'refs/heads/main');
  for (const [section, keys] of Object.entries(LOCAL_CONFIG))
    for (const [k, v] of Object.entries(keys)) git('config', `${section}.${k}`, v);
}

function succeeds(run: () => unknown): boolean {
  try {
    run();
    return true;
  } catch {
    return false;
  }
}

/** Commits everything in `dir` (an empty commit when there is nothing), hooks skipped. */
export function commitAll(dir: string, message: string): void {
  const git = gitIn(dir);
  git('add', '-A');
  git('commit', '-q', '--no-verify', '--allow-empty', '-m', message);
}
