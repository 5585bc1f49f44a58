import { starterConfig, writeConfig } from './config/load';
import { loadConfig } from './config/service';
import { detectGates } from './gates/detect';
import { GitService } from './git/gitService';
import { RalphPaths } from './paths';
import { TaskStore } from './tasks/store';
import { readTextIfExists } from './util/atomicWrite';
import { ensureRalphDir } from './workspace';

export interface InitResult {
  created: string[];
  gitInitialized: boolean;
}

/**
 * Prepares a workspace for Ralph: a git repository (the loop commits every iteration),
 * `.ralph/` with its `.gitignore`, a starter config and an empty task store. Existing files
 * are kept; an existing config is validated so a broken one is reported right away.
 */
export async function initWorkspace(workspace: string): Promise<InitResult> {
  const paths = new RalphPaths(workspace);
  const created: string[] = [];
  const git = new GitService(workspace);
  const gitInitialized = !(await git.isRepo());
  if (gitInitialized) await git.init();
  const hadIgnore = (await readTextIfExists(`${paths.dir}/.gitignore`)) !== undefined;
  await ensureRalphDir(paths);
  if (!hadIgnore) created.push('.ralph/.gitignore');
  if ((await readTextIfExists(paths.config)) === undefined) {
    await writeConfig(paths, { ...starterConfig(), gates: await detectGates(workspace) });
    created.push(paths.relative(paths.config));
  } else {
    await loadConfig(paths);
  }
  const store = new TaskStore(paths);
  if (!(await store.exists())) {
    await store.ensure();
    created.push(paths.relative(paths.tasks));
  }
  return { created, gitInitialized };
}
