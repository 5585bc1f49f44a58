import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import * as path from 'node:path';
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
