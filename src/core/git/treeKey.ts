import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runGit } from './gitExec';

/** The orchestrator's own folder: its bookkeeping is no part of the tree a command sees (`workingTreeKey`). */
const OWN = '.ralph';

/**
 * What a command run in `cwd` sees of the repository, as one value: the tree git would record
 * for the working tree with every file that is not ignored added — tracked files with their
 * uncommitted changes, untracked files' content, each file's mode (executable, symlink), the
 * submodules' commits — less the root's `.ralph/`, and the folder within the tree the command
 * starts in. Two checkouts with the same content have the same key, committed or not, wherever
 * they are; any change to a file's content or mode, a file added or removed, is another key.
 *
 * Outside it: ignored files (installed dependencies, build output, caches), `.ralph/`, what
 * lies outside the working tree; content as git stores it (after the repository's own clean
 * filters, e.g. `core.autocrlf`; with `core.fileMode` false, modes are git's, not the disk's).
 * Undefined when git cannot say (not a repository, a merge in conflict, a submodule with
 * changes of its own).
 *
 * A clean tree is read from HEAD (three git calls side by side); a tree with changes is added to
 * a copy of its index (git's file stat cache, so only changed files are read) and written as a
 * tree: three more calls, writing the new files' content to the object store as `git add` does.
 */
export async function workingTreeKey(cwd: string): Promise<string | undefined> {
  const [status, where, head] = await Promise.all([
    runGit(cwd, ['status', '--porcelain=v2', '-z', '--untracked-files=all', '--ignore-submodules=none']),
    runGit(cwd, ['rev-parse', '--show-toplevel', '--git-path', 'index', '--show-prefix']),
    runGit(cwd, ['ls-tree', '-z', 'HEAD']),
  ]);
  if (status.code !== 0 || where.code !== 0) return undefined;
  const [top, index, prefix] = where.stdout.split('\n');
  if (!top || !index) return undefined;
  const changes = changedPaths(status.stdout);
  if (!changes) return undefined;
  let entries: string | undefined;
  if (changes.length === 0) entries = head.code === 0 ? head.stdout : '';
  else entries = await treeWithChanges(top, path.resolve(cwd, index));
  if (entries === undefined) return undefined;
  // the root's entries but `.ralph`: each names its subtree or blob by content, with its mode
  const root = entries.split('\0').filter((e) => e && e.slice(e.indexOf('\t') + 1) !== OWN);
  return JSON.stringify([root, prefix ?? '']);
}

/**
 * The paths `git status --porcelain=v2 -z` reports outside `.ralph/`; undefined when the tree
 * cannot be keyed: a path in conflict, a submodule whose own files changed.
 */
function changedPaths(porcelain: string): string[] | undefined {
  const fields = porcelain.split('\0');
  const changed: string[] = [];
  for (let i = 0; i < fields.length; i++) {
    const entry = fields[i];
    if (!entry) continue;
    const kind = entry[0];
    if (kind === 'u') return undefined;
    let file: string;
    if (kind === '?') file = entry.slice(2);
    else if (kind === '1' || kind === '2') {
      const parts = entry.split(' ');
      // `S<c><m><u>`: a submodule; m or u, changes inside it that no tree of this repository records
      if (/^S.(M|.U)/.test(parts[2] ?? '')) return undefined;
      file = parts.slice(kind === '1' ? 8 : 9).join(' ');
      if (kind === '2') i++; // a rename's source follows
    } else continue;
    if (file !== OWN && !file.startsWith(`${OWN}/`)) changed.push(file);
  }
  return changed;
}

/** The root tree's entries (`ls-tree -z`) of the working tree's content: a copy of the index with everything added. */
async function treeWithChanges(top: string, index: string): Promise<string | undefined> {
  const scratch = path.join(os.tmpdir(), `ralph-tree-${process.pid}-${randomBytes(6).toString('hex')}.index`);
  try {
    await fs.copyFile(index, scratch).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error; // no index yet: everything is added from nothing
    });
    const env = { GIT_INDEX_FILE: scratch };
    const added = await runGit(top, ['add', '-A', '--', ':/', `:(top,exclude)${OWN}`], { env });
    if (added.code !== 0) return undefined;
    const tree = await runGit(top, ['write-tree'], { env });
    if (tree.code !== 0) return undefined;
    const listed = await runGit(top, ['ls-tree', '-z', tree.stdout.trim()]);
    return listed.code === 0 ? listed.stdout : undefined;
  } finally {
    await fs.rm(scratch, { force: true });
    await fs.rm(`${scratch}.lock`, { force: true });
  }
}
