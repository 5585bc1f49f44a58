import { existsSync, promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commitAll, gitIn, initTestRepo, TEST_GIT_ENV } from '../../helpers/gitWorkspace';

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

export { TEST_GIT_ENV };

export async function makeTempWorkspace(options: TempWorkspaceOptions = {}): Promise<TempWorkspace> {
  const dir = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), options.prefix ?? 'ralph-test-')));
  const extraDirs: string[] = [];

  const git = gitIn(dir);

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

  if (options.git || options.commit) initTestRepo(dir);
  for (const [rel, content] of Object.entries(options.files ?? {})) await workspace.write(rel, content);
  if (options.commit) commitAll(dir, 'initial');
  return workspace;
}
