import { realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** Where a command line runs: the workspace root and the current directory (unknown after `cd $X`). */
export interface PathContext {
  root: string;
  cwd: string | undefined;
}

/** `confinable`: asked only because the path is known at run time; the sandbox keeps such a write inside the workspace. */
export type PathVerdict = { action: 'deny' | 'ask'; reason: string; confinable?: true } | undefined;

/** Build folders a recursive delete may target without asking (anywhere in the workspace). */
export const BUILD_FOLDERS = new Set([
  'node_modules',
  'dist',
  'build',
  'out',
  'target',
  'coverage',
  '.next',
  '.nuxt',
  '.cache',
  '.pytest_cache',
  '__pycache__',
  'tmp',
  '.turbo',
  '.parcel-cache',
]);

/** Under `.ralph/` everything is the orchestrator's but the agents' notes (progress/). */
const AGENT_NOTES = 'progress';

const DEVICES_OK = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$/;

/**
 * The absolute path a word names, the way the shell and the kernel would resolve it: `~` is the
 * home directory, relative paths start at the current directory, and symbolic links on the
 * existing part of the path are followed. Undefined when the current directory is unknown.
 */
export function resolvePath(value: string, where: PathContext): string | undefined {
  let p = value;
  if (p === '~' || p.startsWith('~/')) p = path.join(os.homedir(), p.slice(1));
  if (!path.isAbsolute(p)) {
    if (where.cwd === undefined) return undefined;
    p = path.join(where.cwd, p);
  }
  return followLinks(path.normalize(p));
}

/** The workspace-relative segments of a path inside the root; undefined outside it. */
export function insideRoot(abs: string, root: string): string[] | undefined {
  for (const base of rootForms(root)) {
    const rel = path.relative(base, abs);
    if (rel === '') return [];
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) return rel.split(path.sep);
  }
  return undefined;
}

/** A file a command would create, replace or remove. */
export function judgeWrite(value: string | undefined, shown: string, where: PathContext, what: string): PathVerdict {
  if (value === undefined) return { action: 'ask', reason: `${what} to a path known only when it runs (${shown})`, confinable: true };
  if (DEVICES_OK.test(value)) return undefined;
  const abs = resolvePath(value, where);
  if (abs === undefined)
    return { action: 'ask', reason: `${what} to ${shown} after changing to a directory known only when it runs`, confinable: true };
  if (DEVICES_OK.test(abs)) return undefined;
  const rel = insideRoot(abs, where.root);
  const records = orchestratorRecord(abs);
  if (records && rel?.[0] !== '.ralph') return { action: 'deny', reason: `${what} to ${shown}: ${records}` };
  if (rel === undefined) {
    if (isTemp(abs)) return undefined;
    return { action: 'ask', reason: `${what} outside the workspace (${abs})` };
  }
  return judgeInside(rel, shown, what);
}

/** `.git/` and the orchestrator's records are never the agent's to write, by whatever path. */
export function judgeInside(rel: string[], shown: string, what: string): PathVerdict {
  if (rel.includes('.git'))
    return {
      action: 'deny',
      reason: `${what} inside .git (${shown}): git's hooks and configuration run on the orchestrator's own commits`,
    };
  if (rel[0] === '.ralph' && rel.length >= 2 && rel[1] !== AGENT_NOTES) {
    return { action: 'deny', reason: `${what} to .ralph/${rel[1]}: the orchestrator's own records (tasks, config, checkpoints)` };
  }
  if (rel[0] === '.ralph' && rel.length === 1)
    return { action: 'deny', reason: `${what} to .ralph itself: the orchestrator's own records` };
  return undefined;
}

/**
 * A path inside a `.ralph/` folder from any folder an agent works in (`../../tasks.json` from
 * `.ralph/worktrees/T-001`): the orchestrator's, unless it is an agent's notes or inside a task's
 * worktree. Says why, or undefined.
 */
function orchestratorRecord(abs: string): string | undefined {
  const segments = abs.split(path.sep);
  const at = segments.lastIndexOf('.ralph');
  if (at < 0) return undefined;
  const next = segments[at + 1];
  if (next === AGENT_NOTES || (next === 'worktrees' && segments.length > at + 3)) return undefined;
  return "the orchestrator's own records under .ralph/ (the task store, config, checkpoints, reports), from whatever folder";
}

/** A recursive delete: only build folders inside the workspace. */
export function judgeRecursiveDelete(value: string | undefined, shown: string, where: PathContext): PathVerdict {
  const only = 'only build folders such as dist/ or node_modules/ inside the workspace may be removed';
  if (value === undefined) return { action: 'deny', reason: `recursive delete of ${shown}, a path known only when it runs (${only})` };
  const abs = resolvePath(value, where);
  if (abs === undefined)
    return { action: 'deny', reason: `recursive delete of ${shown} after changing to a directory known only when it runs (${only})` };
  const rel = insideRoot(abs, where.root);
  if (rel === undefined) return { action: 'deny', reason: `recursive delete of ${shown} (${abs}), outside the workspace` };
  const inside = judgeInside(rel, shown, 'deleting');
  if (inside) return { action: 'deny', reason: inside.reason };
  // the folder itself or something in it; `dist/*` counts, `*` and `src/*` do not
  if (!rel.some((segment) => BUILD_FOLDERS.has(segment))) {
    return { action: 'deny', reason: `recursive delete of ${shown} (${only})` };
  }
  return undefined;
}

function isTemp(abs: string): boolean {
  return [os.tmpdir(), '/tmp'].some((dir) => abs === dir || abs.startsWith(`${dir}${path.sep}`)) && !abs.split(path.sep).includes('..');
}

function rootForms(root: string): string[] {
  const given = path.resolve(root);
  const real = followLinks(given);
  return real === given ? [given] : [given, real];
}

/** Follows symbolic links on the longest existing prefix of `abs`; the rest is kept as written. */
function followLinks(abs: string): string {
  let existing = abs;
  const rest: string[] = [];
  for (;;) {
    try {
      const real = realpathSync(existing);
      return rest.length ? path.join(real, ...rest.reverse()) : real;
    } catch {
      const parent = path.dirname(existing);
      if (parent === existing) return abs;
      rest.push(path.basename(existing));
      existing = parent;
    }
  }
}
