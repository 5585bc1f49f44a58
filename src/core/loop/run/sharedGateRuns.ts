import { createHash, randomBytes } from 'node:crypto';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { GateRunRequest, GateRunResult } from '../../gates/types';
import { runGit } from '../../git/gitExec';
import { everyString, localizedOutput, portableOutput, type SharedGateRuns } from './gateRunCache';

/** The folder of gate runs shared between runs (opt-in; unset: every run keeps its gate runs to itself). */
export const GATE_RUNS_DIR_ENV = 'RALPH_GATE_RUNS_DIR';

/** The layout of an entry; another is not read. */
const FORMAT = 1;

/** Stands for the workspace's root in an entry (its place in `rootsOf`): the same tree in another workspace reads it as its own. */
const workspaceMark = (i: number) => `\u0000workspace${i}\u0000`;

/**
 * Installed-dependency folders whose content nothing small describes: a tree that has one
 * (ignored by git) never shares its runs across runs.
 */
const UNDESCRIBED = new Set(['.venv', 'venv', 'vendor', 'bower_components', 'jspm_packages', '.bundle', '__pypackages__', 'Pods', 'deps']);

/** What each package manager writes into `node_modules` on every install: what is installed there. */
const NODE_MODULES_STATE = ['.package-lock.json', '.modules.yaml', '.yarn-state.yml', '.yarn-integrity'];

/** Beside the tree's root: yarn's Plug'n'Play state (no node_modules). */
const ROOT_STATE = ['.yarn/install-state.gz', '.pnp.cjs', '.pnp.loader.mjs'];

/**
 * The gate runs of many runs (issue 45): a folder of results, one small JSON file per key, for
 * CI matrices and test farms that run the same trees many times (`RALPH_GATE_RUNS_DIR`). It
 * stands behind the run's own cache (`gateRunCache.ts`), which decides who takes what; this
 * only keeps and finds, under a key stricter than the run's:
 *
 * - the run's key (the tree, the gate's command and kind, the runner's environment), with the
 *   workspace's root made portable too (a task's worktree sees it in its sandbox);
 * - the installed dependencies: every git-ignored `node_modules` of the tree by what its package
 *   manager wrote there (npm's hidden lockfile, pnpm's `.modules.yaml`, yarn's state file), and
 *   yarn's Plug'n'Play state. A tree with an ignored `node_modules` that has none of them, or
 *   another ignored dependency folder (`UNDESCRIBED`), is not shared across runs;
 * - Ralph's own code (a digest of the module that runs) and Node's version and platform.
 *
 * Entries are written whole (a temporary file renamed over the key's), so runs that write the
 * same key at once leave one whole entry; an entry that cannot be read or is not one is ignored
 * (the gate runs), and a write that fails is forgotten. Entries name no folder.
 */
export class GateRunsDir implements SharedGateRuns {
  constructor(
    private readonly dir: string,
    /** The workspace whose runs these are (its root, made portable in keys and results). */
    private readonly workspace: string,
  ) {}

  async keyFor(material: string, request: GateRunRequest): Promise<string | undefined> {
    if (request.gate.report) return undefined;
    const code = ralphCode();
    const dependencies = await dependenciesOf(request.cwd).catch(() => undefined);
    if (code === undefined || dependencies === undefined) return undefined;
    const what = [
      FORMAT,
      code,
      process.version,
      process.platform,
      process.arch,
      portableOutput(material, this.workspace, workspaceMark),
      dependencies,
    ];
    return createHash('sha256').update(JSON.stringify(what)).digest('hex');
  }

  async read(key: string): Promise<GateRunResult | undefined> {
    try {
      const entry = JSON.parse(await fs.readFile(this.file(key), 'utf8')) as { format?: unknown; key?: unknown; result?: unknown };
      if (entry.format !== FORMAT || entry.key !== key || !isEnded(entry.result)) return undefined;
      return everyString(entry.result, (text) => localizedOutput(text, this.workspace, workspaceMark));
    } catch {
      return undefined;
    }
  }

  async write(key: string, result: GateRunResult): Promise<void> {
    const entry = { format: FORMAT, key, result: everyString(result, (text) => portableOutput(text, this.workspace, workspaceMark)) };
    const temp = path.join(this.dir, `.${key}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await fs.mkdir(this.dir, { recursive: true });
      await fs.writeFile(temp, JSON.stringify(entry));
      await fs.rename(temp, this.file(key));
    } catch {
      await fs.rm(temp, { force: true }).catch(() => undefined);
    }
  }

  private file(key: string): string {
    return path.join(this.dir, `${key}.json`);
  }
}

/** The store `RALPH_GATE_RUNS_DIR` names for a run in `workspace`; undefined when it is unset or empty. */
export function gateRunsDirFrom(env: NodeJS.ProcessEnv, workspace: string): GateRunsDir | undefined {
  const dir = env[GATE_RUNS_DIR_ENV]?.trim();
  return dir ? new GateRunsDir(path.resolve(dir), workspace) : undefined;
}

/** A run that ended as the run's cache keeps one: an exit code, neither stopped nor timed out. */
function isEnded(value: unknown): value is GateRunResult {
  if (!value || typeof value !== 'object') return false;
  const r = value as Record<string, unknown>;
  return (
    typeof r.exitCode === 'number' &&
    r.timedOut === false &&
    r.aborted === false &&
    typeof r.output === 'string' &&
    typeof r.durationMs === 'number' &&
    Number.isFinite(r.durationMs) &&
    (r.testLocations === undefined || Array.isArray(r.testLocations))
  );
}

let codeDigest: string | null | undefined;

/** A digest of Ralph's running code (the bundle this module is in), read once: another build never reads this one's entries. */
function ralphCode(): string | undefined {
  if (codeDigest === undefined) {
    try {
      codeDigest = createHash('sha256').update(readFileSync(__filename)).digest('hex');
    } catch {
      codeDigest = null;
    }
  }
  return codeDigest ?? undefined;
}

/**
 * What is installed in the tree at `cwd`: each ignored `node_modules` (the tree's `git ls-files`
 * of ignored paths, folders collapsed, `.ralph/` left out) by its package manager's state file,
 * and the root's Plug'n'Play state. Undefined when an installed folder cannot be described.
 */
async function dependenciesOf(cwd: string): Promise<string | undefined> {
  const top = await runGit(cwd, ['rev-parse', '--show-toplevel']);
  if (top.code !== 0) return undefined;
  const root = top.stdout.trim();
  const ignored = await runGit(root, ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory']);
  if (ignored.code !== 0) return undefined;
  const parts: string[][] = [];
  for (const entry of ignored.stdout.split('\0')) {
    const rel = entry.replace(/\/$/, '');
    if (!rel || rel === '.ralph' || rel.startsWith('.ralph/')) continue;
    const name = path.posix.basename(rel);
    if (UNDESCRIBED.has(name)) return undefined;
    if (name !== 'node_modules') continue;
    const state = await stateOf(path.join(root, rel), NODE_MODULES_STATE);
    if (state.length === 0) return undefined;
    parts.push([rel, ...state]);
  }
  parts.push(['', ...(await stateOf(root, ROOT_STATE))]);
  return JSON.stringify(parts.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
}

/** The digests of those of `files` that are in `dir` (through a link to an installed folder too), by name. */
async function stateOf(dir: string, files: readonly string[]): Promise<string[]> {
  const found: string[] = [];
  for (const file of files) {
    const content = await fs.readFile(path.join(dir, file)).catch(() => undefined);
    if (content) found.push(`${file}:${createHash('sha256').update(content).digest('hex')}`);
  }
  return found;
}
