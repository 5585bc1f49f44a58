import { promises as fs } from 'node:fs';
import { ConfigError } from './errors';
import type { RalphPaths } from './paths';
import { readTextIfExists, writeFileAtomic } from './util/atomicWrite';

/**
 * Machine-local files under `.ralph/` that must never be committed. `observations.md` is the run's own
 * log of low findings, written in the workspace while parallel tasks run in worktrees: committed, it
 * would ride along with whichever task committed next and leave the user's tree dirty in parallel runs.
 */
export const RALPH_GITIGNORE = ['state/', 'runs/', 'reports/', 'worktrees/', 'observations.md', 'run.lock', '*.lock', '*.tmp', ''].join(
  '\n',
);

/** Creates `.ralph/` and its `.gitignore` when missing; leaves existing files alone. */
export async function ensureRalphDir(paths: RalphPaths): Promise<void> {
  const stat = await fs.stat(paths.dir).catch(() => undefined);
  if (stat && !stat.isDirectory())
    throw new ConfigError(`${paths.dir} is a file, but Ralph keeps its directory there; move it away and run again`, paths.dir);
  await fs.mkdir(paths.dir, { recursive: true });
  const ignore = `${paths.dir}/.gitignore`;
  if ((await readTextIfExists(ignore)) === undefined) await writeFileAtomic(ignore, RALPH_GITIGNORE);
}

/** The progress notes file the agent keeps across fresh-context iterations. */
export async function ensureProgressFile(paths: RalphPaths, task: { id: string; title: string }): Promise<string> {
  const file = paths.progress(task.id);
  const existing = await readTextIfExists(file);
  if (existing !== undefined) return existing;
  const template = `# Progress notes — ${task.id}: ${task.title}\n\nKept by the agent across iterations: what is done, what is next, what failed.\n`;
  await writeFileAtomic(file, template);
  return template;
}
