import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
import { parseCli } from '../../../src/cli/args';
import type { CliIo } from '../../../src/cli/io';
import { nobodyToAsk } from '../../../src/cli/terminal';
import type { RecordedRequest } from '../../fixtures/scriptedServer';
import { TEST_KEY, TEST_KEY_ENV } from './loopHarness';
import { TEST_GIT_ENV } from './tempWorkspace';

/** The repository (this file compiles to out/test/unit/helpers/). */
export const REPO_ROOT = path.resolve(__dirname, '../../../..');

/**
 * The `ralph` CLI as people run it: the bundle `npm run build` makes (dist/cli.js), run as a real
 * child process. A bundle loads in a third of the CPU the compiled modules take (0.17 against
 * 0.45 CPU-s a start; the unit tier starts it hundreds of times). One older than a source file is
 * refused: the tests would judge yesterday's CLI.
 */
export const CLI = path.join(REPO_ROOT, 'dist', 'cli.js');

/** The newest modification time of a `.ts` file under `dir`. */
function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

let bundleChecked = false;
/** Throws when dist/cli.js is missing or older than a source file (once per process). */
function checkBundle(): void {
  if (bundleChecked) return;
  const built = existsSync(CLI) ? statSync(CLI).mtimeMs : 0;
  if (built < newestSource(path.join(REPO_ROOT, 'src')))
    throw new Error(`${CLI} is ${built ? 'older than the sources' : 'missing'}: run \`npm run build\` (npm test and npm run test:unit do)`);
  bundleChecked = true;
}

/** The test git environment plus the scripted server's API key. */
export const CLI_ENV: NodeJS.ProcessEnv = { ...TEST_GIT_ENV, [TEST_KEY_ENV]: TEST_KEY };

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Everything a child wrote, and its exit code once it closed. */
export function collect(child: ChildProcess): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => (stdout += d));
  child.stderr?.on('data', (d) => (stderr += d));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
}

/** The CLI in a child process, stdin not a terminal; the child is returned to signal or kill it. */
export function startCli(args: string[], cwd: string, env: NodeJS.ProcessEnv = CLI_ENV): { child: ChildProcess; done: Promise<CliResult> } {
  checkBundle();
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, done: collect(child) };
}

export const runCli = (args: string[], cwd: string, env: NodeJS.ProcessEnv = CLI_ENV): Promise<CliResult> => startCli(args, cwd, env).done;

/** What the bundle exports (src/cli/main.ts): `main` is the whole CLI but for its process's own stdio, signals and exit code. */
interface CliBundle {
  main(argv: readonly string[], io: CliIo): Promise<number>;
  /** What the bundle's entry point calls before `main`: no git helper process unless a run asks for one. */
  gitHostWhenAsked(): void;
}

let bundle: CliBundle | undefined;
/** The bundle, loaded once per process and set up as its entry point sets up a child: git from this process, no helper left behind. */
function loadBundle(): CliBundle {
  if (!bundle) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle people run, loaded once per process
    bundle = require(CLI) as CliBundle;
    bundle.gitHostWhenAsked();
  }
  return bundle;
}

/** Verbs whose process is part of what they do: `run` (Ctrl-C, `process.exit`, its own script path for agent CLIs), `mcp` and `hook` (stdin). */
const NEEDS_A_PROCESS: ReadonlySet<string> = new Set(['run', 'mcp', 'hook']);

/** The verb `args` name (`run` also after `--workspace x`); undefined when they do not parse (main says why). */
function verbOf(args: string[], cwd: string): string | undefined {
  try {
    return parseCli(args, cwd).kind;
  } catch {
    return undefined;
  }
}

let inProcessTurn: Promise<unknown> = Promise.resolve();

/**
 * The same CLI as `runCli`, run inside this process: the bundle itself (dist/cli.js, refused when older
 * than the sources as `runCli` refuses it; requiring it does not run it) and its exported `main`, with the `CliIo` its own
 * entry point would build in a child whose stdin is not a terminal — no `confirm`, no `ask`,
 * `unattended` from `env` (CI, GitHub Actions) — and whose stdout and stderr are collected. For the
 * steps a test takes before what it tests (`init`, `task add`): a child process adds nothing there
 * and costs a Node start and a 4 MB bundle load each time (≈ 0.2 CPU-s). Where the process is the
 * point — locks or races between processes, signals, kills, stdin or a terminal, `run`, anything an
 * agent CLI starts — use `runCli`/`startCli`; `run`, `mcp` and `hook` are refused here.
 *
 * For the call, the process looks like the child's: `process.env` holds exactly `env` (keys not in
 * it are removed) and the working directory is `cwd`, so what the verb reads from the environment
 * (the API key, `PATH`, `CI`) and what it passes on to git (the test identity, no system config: a
 * git call takes `process.env` when it is made) are the child's values; both are put back when it
 * ends. Calls take turns (one at a time, in the order made): mocha runs one test at a time in a
 * worker, but two calls of one test must not interleave their environments. Code of the test that
 * runs at the same time (a scripted server's handler) sees that environment too. What differs
 * from a child: the process id is this one's (a run lock this process itself holds is not another
 * process's to the CLI; a `ralph run` holds its lock in its own child), and the bundle's module
 * state (caches) outlives one call, as it does inside one `ralph` process. The bundle is set up as its
 * entry point sets up a child (`gitHostWhenAsked`): its git starts from this process, as the child's
 * does; a git helper process would outlive the call with that call's working directory (a test's
 * workspace, removed after it) and environment.
 * An exception out of `main` is the child's "unexpected error" and exit 1.
 */
export function runCliInProcess(args: string[], cwd: string, env: NodeJS.ProcessEnv = CLI_ENV): Promise<CliResult> {
  const verb = verbOf(args, cwd);
  if (verb && NEEDS_A_PROCESS.has(verb)) throw new Error(`\`ralph ${verb}\` needs its own process: use runCli`);
  const turn = inProcessTurn.then(() => inProcess(args, cwd, env));
  inProcessTurn = turn.catch(() => undefined);
  return turn;
}

async function inProcess(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<CliResult> {
  checkBundle();
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    out: (line) => (stdout += `${line}\n`),
    err: (line) => (stderr += `${line}\n`),
    cwd,
    unattended: nobodyToAsk(env),
    // no signal reaches a call inside this process; the verbs run here register none
    onInterrupt: () => () => undefined,
  };
  const restore = becomeChildOf(env, cwd);
  try {
    const { main } = loadBundle();
    return { code: await main(args, io), stdout, stderr };
  } catch (error) {
    stderr += `ralph: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`;
    return { code: 1, stdout, stderr };
  } finally {
    restore();
  }
}

/** `process.env` becomes exactly `env` and the working directory `cwd`; the returned function puts both back. */
function becomeChildOf(env: NodeJS.ProcessEnv, cwd: string): () => void {
  const savedEnv = { ...process.env };
  const savedCwd = process.cwd();
  const setEnv = (to: NodeJS.ProcessEnv) => {
    for (const name of Object.keys(process.env)) if (to[name] === undefined) delete process.env[name];
    for (const [name, value] of Object.entries(to)) if (value !== undefined) process.env[name] = value;
  };
  process.chdir(cwd);
  setEnv(env);
  return () => {
    setEnv(savedEnv);
    process.chdir(savedCwd);
  };
}

/** The CLI on a pseudo-terminal (util-linux `script`), typing `answer` at its question. */
export function runOnTerminal(args: string[], cwd: string, answer: string, env: NodeJS.ProcessEnv = CLI_ENV): Promise<CliResult> {
  checkBundle();
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, CLI, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin?.write(`${answer}\n`);
  return collect(child);
}

/** The file a task's prompt names (`WRITE <file>`): how one scripted step serves several tasks. */
export function fileOf(request: RecordedRequest): string {
  const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
  return /WRITE (\S+)/.exec(typeof user?.content === 'string' ? user.content : '')?.[1] ?? 'unknown.txt';
}
