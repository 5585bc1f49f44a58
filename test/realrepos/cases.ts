/**
 * The real bug-fix cases (`<case>/`: base.tar.gz, test.diff, fix.diff, case.json): those of
 * `../shared/realrepos/`, read where they are at test time, and this repository's own
 * (`test/realrepos/cases/`: issue 47's runners that are read only as TAP, or not at all).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The repository's root (this file runs from out/test/realrepos/). */
export const REPO_ROOT = path.resolve(__dirname, '../../..');

/** `brittle`: read only as TAP; `node`: a plain `node test.js` script of asserts, whose output is not read. */
export type Runner = 'mocha' | 'jest' | 'vitest' | 'tap' | 'tape' | 'ava' | 'uvu' | 'brittle' | 'node';

export interface RealCase {
  id: string;
  dir: string;
  repo: string;
  title: string;
  runner: Runner;
  language: 'js' | 'ts';
  /** Installs the dev dependencies from the registry. */
  install: string;
  /** Runs the suite offline: the tests gate's command. */
  test: string;
  /** The tests that fail with test.diff applied, as the runner prints them. */
  failingAtBase: string[];
  suiteSeconds: number;
}

/** Where the cases are: RALPH_REALREPOS_DIR, else `../shared/realrepos` beside this repository. */
export function casesDir(): string {
  const candidates = [process.env.RALPH_REALREPOS_DIR, path.resolve(REPO_ROOT, '../shared/realrepos'), '/work/shared/realrepos'];
  const found = candidates.find((dir): dir is string => !!dir && existsSync(dir));
  if (!found)
    throw new Error(
      `the real-repository cases were not found (looked in ${candidates.filter(Boolean).join(', ')}); ` +
        'set RALPH_REALREPOS_DIR to the folder that holds them (one <repo>-<sha>/ folder per case with case.json, base.tar.gz, test.diff, fix.diff)',
    );
  return found;
}

/** This repository's own cases (issue 47), beside the shared ones. */
export const OWN_CASES_DIR = path.join(REPO_ROOT, 'test', 'realrepos', 'cases');

/** The case folders (those holding a case.json) of `root`, by id. */
function caseFolders(root: string): Map<string, string> {
  if (!existsSync(root)) return new Map();
  return new Map(
    readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && existsSync(path.join(root, e.name, 'case.json')))
      .map((e) => [e.name, path.join(root, e.name)]),
  );
}

/**
 * Every case, the shared ones and this repository's own, or those RALPH_REALREPOS_CASES lists
 * (comma-separated ids), in name order; an id in both folders is an error.
 */
export function loadCases(): RealCase[] {
  const shared = casesDir();
  const only = process.env.RALPH_REALREPOS_CASES?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const folders = caseFolders(shared);
  for (const [id, dir] of caseFolders(OWN_CASES_DIR)) {
    if (folders.has(id)) throw new Error(`the case ${id} is both in ${shared} and in ${OWN_CASES_DIR}: case ids must be unique`);
    folders.set(id, dir);
  }
  const ids = [...folders.keys()].sort();
  const unknown = (only ?? []).filter((id) => !folders.has(id));
  if (unknown.length)
    throw new Error(`RALPH_REALREPOS_CASES names cases that neither ${shared} nor ${OWN_CASES_DIR} holds: ${unknown.join(', ')}`);
  return ids.filter((id) => !only || only.includes(id)).map((id) => readCase(folders.get(id)!));
}

function readCase(dir: string): RealCase {
  const json = JSON.parse(readFileSync(path.join(dir, 'case.json'), 'utf8')) as Omit<RealCase, 'id' | 'dir'>;
  for (const file of ['base.tar.gz', 'test.diff', 'fix.diff'])
    if (!existsSync(path.join(dir, file))) throw new Error(`${dir} has no ${file}`);
  for (const key of ['runner', 'install', 'test'] as const)
    if (typeof json[key] !== 'string') throw new Error(`${dir}/case.json has no "${key}"`);
  return { ...json, id: path.basename(dir), dir };
}

/** Runs `git` (or any tool) and returns stdout; throws with its stderr on a non-zero exit. */
export function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv()): string {
  return execFileSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
}

/**
 * The environment a person's shell gives: ours without what an enclosing `npm test` adds about
 * itself (its user agent, which names the outer npm's Node; its lifecycle and package variables;
 * its local prefix, this repository). The npm settings a person exported (a registry, a proxy) stay.
 */
export function cleanEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const outer =
    /^(npm_config_user_agent|npm_config_local_prefix|npm_config_argv|npm_lifecycle_.*|npm_package_.*|npm_execpath|npm_node_execpath|npm_command|INIT_CWD)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!outer.test(key)) env[key] = value;
  return { ...env, ...extra };
}

/** Extracts the case's base tree into `dir` (created). */
export async function extractBase(c: RealCase, dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true });
  run('tar', ['-xzf', path.join(c.dir, 'base.tar.gz'), '-C', dir], dir);
}

/** The paths a unified diff changes (its `+++ b/` side; a deletion's `--- a/` side). */
export function diffPaths(diff: string): string[] {
  const paths = new Set<string>();
  let from = '';
  for (const line of diff.split('\n')) {
    if (line.startsWith('--- ')) from = line.slice(4).replace(/^a\//, '');
    if (line.startsWith('+++ ')) paths.add(line === '+++ /dev/null' ? from : line.slice(4).replace(/^b\//, ''));
  }
  return [...paths];
}

/** What a case's trees hold, read once: the base's files, and the files after test.diff and fix.diff. */
export interface CaseTrees {
  testFiles: string[];
  fixFiles: string[];
  /** Test files as they are before test.diff (the base commit). */
  testBefore: Map<string, string>;
  /** Test files after test.diff (what the task starts from). */
  testAfter: Map<string, string>;
  /** Source files before fix.diff. */
  sourceBefore: Map<string, string>;
  /** Source files after fix.diff: the upstream fix, byte for byte. */
  sourceFixed: Map<string, Buffer>;
  /** The base's package.json ('' where there is none): what an edit of the runner's config starts from. */
  manifest: string;
}

const trees = new Map<string, Promise<CaseTrees>>();

export function caseTrees(c: RealCase): Promise<CaseTrees> {
  let found = trees.get(c.id);
  if (!found) trees.set(c.id, (found = readTrees(c)));
  return found;
}

async function readTrees(c: RealCase): Promise<CaseTrees> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `ralph-rr-tree-${c.id}-`));
  try {
    await extractBase(c, dir);
    const testFiles = diffPaths(readFileSync(path.join(c.dir, 'test.diff'), 'utf8'));
    const fixFiles = diffPaths(readFileSync(path.join(c.dir, 'fix.diff'), 'utf8'));
    const read = (files: string[]) => new Map(files.map((f) => [f, readIfThere(path.join(dir, f))]));
    const testBefore = read(testFiles);
    const sourceBefore = read(fixFiles);
    const manifest = readIfThere(path.join(dir, 'package.json'));
    // `git apply` outside a repository applies to the current folder, exactly as the README lays a case out
    run('git', ['apply', path.join(c.dir, 'test.diff')], dir);
    run('git', ['apply', path.join(c.dir, 'fix.diff')], dir);
    const testAfter = read(testFiles);
    const sourceFixed = new Map(fixFiles.map((f) => [f, readFileSync(path.join(dir, f))]));
    return { testFiles, fixFiles, testBefore, testAfter, sourceBefore, sourceFixed, manifest };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

function readIfThere(file: string): string {
  return existsSync(file) ? readFileSync(file, 'utf8') : '';
}
