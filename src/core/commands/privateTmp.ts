import { existsSync, lstatSync, readdirSync, realpathSync } from 'node:fs';
import path from 'node:path';

/**
 * The sandbox gives every command a private, empty `/tmp`. A workspace that lives under `/tmp`
 * (a clone there, a CI checkout, a test's temp folder) must still see what it reaches outside
 * its own tree: the main workspace of a task worktree (where its linked `node_modules` and
 * its gate logs are) and the targets of links at the top of the tree. Those are mounted
 * read-only into the private `/tmp`, as the rest of the file system is.
 */
export const PRIVATE_TMP = '/tmp';

export function isUnder(file: string, dir: string): boolean {
  const rel = path.relative(dir, file);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

/** The workspace a task or proof worktree (`<workspace>/.ralph/worktrees/<x>`) belongs to; the root itself otherwise. */
export function mainWorkspaceOf(root: string): string {
  const marker = `${path.sep}.ralph${path.sep}worktrees${path.sep}`;
  const at = root.lastIndexOf(marker);
  return at > 0 ? root.slice(0, at) : root;
}

/** What must be mounted read-only into the private /tmp for a command whose writable root is `root`. */
export function privateTmpBinds(root: string): string[] {
  const workspace = mainWorkspaceOf(root);
  const binds: string[] = [];
  const covered = (p: string) => isUnder(p, root) || binds.some((b) => isUnder(p, b));
  if (workspace !== root && isUnder(workspace, PRIVATE_TMP)) binds.push(workspace);
  for (const dir of new Set([root, workspace])) {
    for (const target of linkTargets(dir)) {
      if (isUnder(target, PRIVATE_TMP) && !covered(target)) binds.push(target);
    }
  }
  return binds;
}

/** Where the symbolic links at the top of `dir` lead (resolved to the end); dangling ones are left out. */
function linkTargets(dir: string): string[] {
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const full = path.join(dir, name);
    try {
      if (lstatSync(full).isSymbolicLink()) out.push(realpathSync(full));
    } catch {
      // a dangling link: nothing to show
    }
  }
  return out;
}

const TMP_PATH = /(?:^|[\s'"=:(,])(\/tmp\/[^\s'";|&)<>,`]+)/g;

/**
 * The first path under /tmp a command names that exists here but is hidden from it in the
 * sandbox (neither in its root nor mounted in); undefined when there is none.
 */
export function hiddenTmpPath(command: string, root: string, binds: readonly string[]): string | undefined {
  for (const m of command.matchAll(TMP_PATH)) {
    const file = m[1].replace(/[.:]+$/, '');
    if (isUnder(file, root) || binds.some((b) => isUnder(file, b)) || !existsSync(file)) continue;
    return file;
  }
  return undefined;
}

export function hiddenPathMessage(file: string, purpose: 'gate' | 'agent'): string {
  return `${purpose === 'gate' ? "the gate's command" : 'the command'} names ${file}, which the sandbox (bubblewrap, commands.sandbox) hides: commands get a private, empty /tmp, and only the workspace and what its top-level links lead to are visible there. Move it into the workspace (or link it from the workspace's top level), or set "commands.sandbox": "off" in .ralph/config.json.`;
}
