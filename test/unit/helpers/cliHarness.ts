import { type ChildProcess, spawn } from 'node:child_process';
import * as path from 'node:path';
import type { RecordedRequest } from '../../fixtures/scriptedServer';
import { TEST_KEY, TEST_KEY_ENV } from './loopHarness';
import { TEST_GIT_ENV } from './tempWorkspace';

/** The compiled `ralph` CLI (out/src/cli/main.js), run as a real child process. */
export const CLI = path.resolve(__dirname, '../../../src/cli/main.js');

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
  const child = spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, done: collect(child) };
}

export const runCli = (args: string[], cwd: string, env: NodeJS.ProcessEnv = CLI_ENV): Promise<CliResult> => startCli(args, cwd, env).done;

/** The CLI on a pseudo-terminal (util-linux `script`), typing `answer` at its question. */
export function runOnTerminal(args: string[], cwd: string, answer: string, env: NodeJS.ProcessEnv = CLI_ENV): Promise<CliResult> {
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
