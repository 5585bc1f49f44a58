/**
 * One scenario's workspace, laid out as a person would have it: the case's base tree committed,
 * the upstream test change committed on top (the task's test already red), anything the scenario
 * adds to the base committed too, the dependencies installed (a hard-linked copy of the case's
 * cached node_modules, git-ignored), then `ralph init`, the config edited, one task added.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeTree } from '../../src/core/util/removeTree';
import { commitAll, gitIn, initTestRepo } from '../helpers/gitWorkspace';
import { dataOf } from './caseData';
import { cleanEnv, extractBase, REPO_ROOT, type RealCase, run } from './cases';
import { killGroup, spawnWithTimeout } from './install';

/**
 * The real CLI a person runs (`npm run build` makes it); `RALPH_REALREPOS_CLI` names a copy (npm
 * test runs this tier beside the end-to-end tier, whose packaging rebuilds dist/ meanwhile).
 */
export const CLI = process.env.RALPH_REALREPOS_CLI ?? path.join(REPO_ROOT, 'dist', 'cli.js');
export const KEY_ENV = 'RALPH_REALREPOS_KEY';
const KEY = 'sk-realrepos-scripted';

/**
 * The gate runs every scenario's `ralph run` shares (`RALPH_GATE_RUNS_DIR`, issue 45): a fresh
 * folder made once per tier run (so every tree still runs for real once each time), removed at
 * its end. Each distinct tree, command, environment and set of dependencies runs once per tier
 * run: a case's base, the upstream fix's tree. `RALPH_REALREPOS_SHARED_GATE_RUNS=0`: each run its own.
 */
export const GATE_RUNS_DIR =
  process.env.RALPH_REALREPOS_SHARED_GATE_RUNS === '0' ? undefined : mkdtempSync(path.join(os.tmpdir(), 'ralph-rr-gateruns-'));

/** Removes the tier's shared gate runs (the `after` of the tier). */
export async function removeGateRuns(): Promise<void> {
  if (GATE_RUNS_DIR && process.env.RALPH_REALREPOS_KEEP !== '1') await fs.rm(GATE_RUNS_DIR, { recursive: true, force: true });
}

/** The task: its words name neither the failing test nor its file, its promise not "the whole suite passes". */
export const TASK = {
  title: "Fix the library's bug",
  prompt: "The library has a bug that its test suite shows. Fix the library's code so the behaviour is correct.",
  promise: "The library's code behaves correctly where it was wrong, and what worked before still works.",
};

export interface LaidOut {
  dir: string;
  git: (...args: string[]) => string;
  /** The commit the task starts from (the target branch's tip before the run). */
  base: string;
  taskId: string;
  cleanup(): Promise<void>;
}

export interface LayoutOptions {
  c: RealCase;
  nodeModules: string;
  label: string;
  /** Files committed at the base after the upstream test change (a legacy red test and its runner setup). */
  atBase?: Record<string, string>;
  serverUrl: string;
  /** The config's `agent` key (issue 46: a CLI agent works on the task); none: the built-in agent. */
  agent?: Record<string, unknown>;
  maxParallel: number;
  maxIterations: number;
}

export async function layOut(o: LayoutOptions): Promise<LaidOut> {
  const dir = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), `ralph-rr-${o.label}-`)));
  try {
    return await layOutIn(dir, o);
  } catch (error) {
    await removeTree(dir);
    throw error;
  }
}

async function layOutIn(dir: string, o: LayoutOptions): Promise<LaidOut> {
  const git = gitIn(dir);
  await extractBase(o.c, dir);
  initTestRepo(dir);
  commitAll(dir, `base: ${o.c.repo} before ${o.c.id.split('-').at(-1)}`);
  git('apply', '--index', path.join(o.c.dir, 'test.diff'));
  git('commit', '-q', '--no-verify', '-m', 'test: the upstream test change (fails until the library is fixed)');
  if (o.atBase && Object.keys(o.atBase).length) {
    for (const [file, content] of Object.entries(o.atBase)) {
      await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
      await fs.writeFile(path.join(dir, file), content);
    }
    commitAll(dir, 'test: a legacy test, red for a long time');
  }
  await copyTree(o.nodeModules, path.join(dir, 'node_modules'));
  if (git('status', '--porcelain', '--', 'node_modules') !== '') throw new Error(`${o.c.id}: node_modules is not git-ignored in its base`);
  await initRalph(dir, o);
  const taskId = await addTask(dir, o.maxIterations);
  return { dir, git, base: git('rev-parse', 'HEAD'), taskId, cleanup: () => removeTree(dir) };
}

/**
 * A hard-linked copy (a real folder, as `npm install` leaves it; writes into it make new files of
 * its own), made by `cp` without holding up the other scenarios' runs (this process serves their
 * agents meanwhile).
 */
async function copyTree(from: string, to: string): Promise<void> {
  const cp = (flags: string) =>
    new Promise<void>((resolve, reject) => execFile('cp', [flags, from, to], (error) => (error ? reject(error) : resolve())));
  // another file system: a plain copy
  await cp('-al').catch(async () => {
    await removeTree(to);
    await cp('-a');
  });
}

/** `ralph init`, then the config edited as a person would: one required tests gate, the scripted model (or agent CLI), the loop's limits. */
async function initRalph(dir: string, o: LayoutOptions): Promise<void> {
  const init = await ralph(['init'], dir, 60_000);
  if (init.code !== 0) throw new Error(`ralph init failed in ${dir}: ${init.stderr || init.stdout}`);
  const file = path.join(dir, '.ralph', 'config.json');
  const config = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, Record<string, unknown> | unknown[]>;
  config.llm = { ...(config.llm as object), baseUrl: o.serverUrl, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 };
  config.loop = { ...(config.loop as object), maxIterations: o.maxIterations, maxParallel: o.maxParallel };
  config.gates = [{ name: 'tests', command: dataOf(o.c).gate?.command ?? o.c.test, kind: 'tests', required: true }];
  if (o.agent) config.agent = o.agent;
  await fs.writeFile(file, `${JSON.stringify(config, null, 2)}\n`);
}

async function addTask(dir: string, maxIterations: number): Promise<string> {
  const args = ['task', 'add', TASK.title, '--prompt', TASK.prompt, '--promise', TASK.promise, '--max-iterations', String(maxIterations)];
  const added = await ralph(args, dir, 60_000);
  if (added.code !== 0) throw new Error(`ralph task add failed: ${added.stderr || added.stdout}`);
  return added.stdout.trim();
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  seconds: number;
}

/**
 * `node dist/cli.js <args>` in `dir`, with the scripted model's key and `extraEnv` (an agent CLI's
 * home, endpoint and key), killed (its group) past `timeoutMs`.
 */
export async function ralph(args: string[], dir: string, timeoutMs: number, extraEnv: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  const started = Date.now();
  const shared = GATE_RUNS_DIR ? { RALPH_GATE_RUNS_DIR: GATE_RUNS_DIR } : {};
  const env = cleanEnv({ [KEY_ENV]: KEY, GIT_CONFIG_NOSYSTEM: '1', GIT_TERMINAL_PROMPT: '0', ...shared, ...extraEnv });
  const out = await spawnWithTimeout(process.execPath, [CLI, ...args], dir, timeoutMs, env);
  return { code: out.code, stdout: out.stdout, stderr: out.stderr, timedOut: out.timedOut, seconds: (Date.now() - started) / 1000 };
}

export { killGroup, run };
