/**
 * The one way tests make a git workspace: an isolated environment for git (no user or system
 * configuration leaks in, no prompts), `git init` on branch `main` with a local identity and no
 * signing, and a first commit of whatever the folder holds. The unit tests' temp workspaces and
 * the workspace the integration and e2e tiers open are both built with it.
 */
import { execFileSync } from 'node:child_process';

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

/** `git init` on branch `main`, with a local identity (features that commit work on a bare CI machine) and no signing. */
export function initTestRepo(dir: string): void {
  const git = gitIn(dir);
  git('init', '-q');
  git('symbolic-ref', 'HEAD', 'refs/heads/main');
  git('config', 'user.name', 'Ralph Test');
  git('config', 'user.email', 'ralph-test@example.invalid');
  git('config', 'commit.gpgsign', 'false');
}

/** Commits everything in `dir` (an empty commit when there is nothing), hooks skipped. */
export function commitAll(dir: string, message: string): void {
  const git = gitIn(dir);
  git('add', '-A');
  git('commit', '-q', '--no-verify', '--allow-empty', '-m', message);
}
