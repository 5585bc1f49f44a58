import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

export interface TempWorkspaceOptions {
  /** `git init` with a local user, no signing, branch `main`. */
  git?: boolean;
  /** Files to create, workspace-relative path → content. */
  files?: Record<string, string>;
  /** Commit `files` as the first commit (implies git). */
  commit?: boolean;
  prefix?: string;
}

/** A real directory on disk for a test; call `cleanup()` in `afterEach`. */
export interface TempWorkspace {
  /** Real path (symlinks resolved, so /tmp vs /private/tmp never matters). */
  readonly dir: string;
  /** Absolute path of a workspace-relative path. */
  path(...segments: string[]): string;
  write(rel: string, content: string | Uint8Array): Promise<string>;
  read(rel: string): Promise<string>;
  exists(rel: string): boolean;
  /** Runs git in the workspace and returns trimmed stdout; throws on a non-zero exit. */
  git(...args: string[]): string;
  /** A sibling temp directory outside the workspace, removed by `cleanup()` too. */
  outsideDir(): Promise<string>;
  cleanup(): Promise<void>;
}

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

export async function makeTempWorkspace(options: TempWorkspaceOptions = {}): Promise<TempWorkspace> {
  const dir = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), options.prefix ?? 'ralph-test-')));
  const extraDirs: string[] = [];

  const git = (...args: string[]): string =>
    execFileSync('git', args, { cwd: dir, env: TEST_GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

  const workspace: TempWorkspace = {
    dir,
    path: (...segments) => path.join(dir, ...segments),
    async write(rel, content) {
      const file = path.join(dir, rel);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
      return file;
    },
    read: (rel) => fs.readFile(path.join(dir, rel), 'utf8'),
    exists: (rel) => existsSync(path.join(dir, rel)),
    git,
    async outsideDir() {
      const outside = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-outside-')));
      extraDirs.push(outside);
      return outside;
    },
    async cleanup() {
      for (const target of [dir, ...extraDirs]) await fs.rm(target, { recursive: true, force: true });
    },
  };

  if (options.git || options.commit) {
    git('init', '-q');
    git('symbolic-ref', 'HEAD', 'refs/heads/main');
    git('config', 'user.name', 'Ralph Test');
    git('config', 'user.email', 'ralph-test@example.invalid');
    git('config', 'commit.gpgsign', 'false');
  }
  for (const [rel, content] of Object.entries(options.files ?? {})) await workspace.write(rel, content);
  if (options.commit) {
    git('add', '-A');
    git('commit', '-q', '--allow-empty', '-m', 'initial');
  }
  return workspace;
}
