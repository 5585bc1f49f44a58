import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { runGit } from '../../git/gitExec';

/** Paths listed one by one up to this many; beyond, folders with their file counts. */
const MAX_PATHS = 300;
const SKIPPED_DIRS = new Set([
  '.git',
  '.ralph',
  'node_modules',
  'dist',
  'out',
  'build',
  'target',
  'vendor',
  '__pycache__',
  '.venv',
  'venv',
]);

/**
 * The repository's layout as the planning model sees it: the files git knows (tracked, and
 * untracked ones not ignored), `.ralph/` left out; a large repository as its folders with
 * file counts. Not a git repository: a bounded walk that skips dependency and build folders.
 */
export async function repoLayout(workspace: string): Promise<string> {
  const files = await listFiles(workspace);
  if (files.length <= MAX_PATHS) return files.join('\n');
  const counts = new Map<string, number>();
  for (const file of files) {
    const parts = file.split('/');
    const folder = parts.length > 2 ? `${parts.slice(0, 2).join('/')}/` : parts.length === 2 ? `${parts[0]}/` : file;
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  const lines = [...counts.entries()].map(([folder, n]) => (folder.endsWith('/') ? `${folder} (${n} file${n === 1 ? '' : 's'})` : folder));
  return `${files.length} files; by folder:\n${lines.slice(0, MAX_PATHS).join('\n')}${lines.length > MAX_PATHS ? `\n… and ${lines.length - MAX_PATHS} more folders` : ''}`;
}

async function listFiles(workspace: string): Promise<string[]> {
  const listed = await runGit(workspace, ['ls-files', '--cached', '--others', '--exclude-standard', '-z']).catch(() => undefined);
  if (listed && listed.code === 0) {
    return [...new Set(listed.stdout.split('\0').filter((f) => f && !f.startsWith('.ralph/')))].sort();
  }
  const out: string[] = [];
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (depth > 6 || out.length > MAX_PATHS * 20) return;
    const entries = await fs.readdir(path.join(workspace, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const rel = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(rel, depth + 1);
      } else if (entry.isFile()) out.push(rel);
    }
  };
  await walk('', 0);
  return out;
}

/** The `scripts` of package.json by name, for check commands that use the project's own runner. */
export async function packageScripts(workspace: string): Promise<Record<string, string>> {
  try {
    const pkg = JSON.parse(await fs.readFile(path.join(workspace, 'package.json'), 'utf8')) as { scripts?: unknown };
    if (!pkg.scripts || typeof pkg.scripts !== 'object') return {};
    return Object.fromEntries(
      Object.entries(pkg.scripts as Record<string, unknown>).filter((e): e is [string, string] => typeof e[1] === 'string'),
    );
  } catch {
    return {};
  }
}
