import { type ChildProcess, execFile, spawn } from 'node:child_process';

/**
 * Where the orchestrator's git processes are started from. On Linux a new process is a fork of
 * the one that starts it, and a fork costs in proportion to that process's memory: from an
 * editor's extension host (hundreds of MB) each `git` blocks its event loop for 10–20 ms — the
 * merge queue runs a dozen per merge, the loop one per iteration. So git is started by a small
 * helper process (plain Node, a few tens of MB, forked once, started on first use, gone with
 * this process): the fork happens there, off this event loop. Where the helper cannot run, or
 * on Windows (no fork there), git is started directly, as before; a helper that died is started
 * again by the next call. `RALPH_GIT_HOST=off` starts git directly always.
 */

export interface GitRun {
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  input?: string;
  maxBuffer: number;
}

export interface GitExit {
  code: number;
  stdout: string;
  stderr: string;
}

// Plain CommonJS run by the helper (`node -e`): no file to locate after bundling.
const HOST_SOURCE = `
const { execFile } = require('node:child_process');
process.on('message', (m) => {
  const child = execFile('git', m.args, { cwd: m.cwd, env: m.env, maxBuffer: m.maxBuffer, encoding: 'utf8' }, (error, stdout, stderr) => {
    const code = error ? (typeof error.code === 'number' ? error.code : 128) : 0;
    process.send({ id: m.id, code, stdout: String(stdout), stderr: String(stderr) || (error && code === 128 && !stderr ? String(error.message) : '') });
  });
  if (m.input !== undefined) child.stdin && child.stdin.end(m.input);
});
process.on('disconnect', () => process.exit(0));
`;

interface Pending {
  run: GitRun;
  resolve(exit: GitExit): void;
}

let host: ChildProcess | undefined;
/** The helper could not run here: git is started directly from now on. */
let unavailable = process.platform === 'win32' || process.env.RALPH_GIT_HOST === 'off';
let nextId = 0;
const pending = new Map<number, Pending>();

/** Runs git to its end; never rejects (a git that could not start is exit 128 with the reason). */
export function runGitProcess(run: GitRun): Promise<GitExit> {
  const helper = unavailable ? undefined : ensureHost();
  if (!helper) return direct(run);
  return new Promise((resolve) => {
    const id = ++nextId;
    pending.set(id, { run, resolve });
    if (pending.size === 1) helper.channel?.ref();
    try {
      helper.send({ id, args: run.args, cwd: run.cwd, env: run.env, input: run.input, maxBuffer: run.maxBuffer });
    } catch {
      pending.delete(id);
      stopUsing(helper);
      resolve(direct(run));
    }
  });
}

/** The helper's process id while it runs (for tests and diagnostics). */
export function gitHostPid(): number | undefined {
  return host?.pid;
}

function ensureHost(): ChildProcess | undefined {
  if (host) return host;
  let child: ChildProcess;
  try {
    // ELECTRON_RUN_AS_NODE: in an editor, process.execPath is the editor's own binary
    child = spawn(process.execPath, ['-e', HOST_SOURCE], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'], env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, windowsHide: true });
  } catch {
    unavailable = true;
    return undefined;
  }
  host = child;
  child.on('message', (message: GitExit & { id: number }) => {
    const waiting = pending.get(message.id);
    if (!waiting) return;
    pending.delete(message.id);
    if (pending.size === 0) child.channel?.unref();
    waiting.resolve({ code: message.code, stdout: message.stdout, stderr: message.stderr });
  });
  let started = false;
  child.on('spawn', () => (started = true));
  // could not start (no such binary, no IPC): direct from now on, what it was handed included (none of it ran);
  // died: started again on the next call
  child.on('error', () => {
    if (started) return stopUsing(child);
    unavailable = true;
    stopUsing(child, 'run-directly');
  });
  child.on('exit', () => stopUsing(child, started ? 'failed' : 'run-directly'));
  // never what keeps this process alive: referenced only while a git run is in flight
  child.unref();
  child.channel?.unref();
  return child;
}

/**
 * The helper is gone or unusable. What a helper that ran had in hand may have run, in part or
 * whole (a commit, a compare-and-swap of a ref): it is not run again, it failed — the callers'
 * own recovery (a merge queued again, an iteration's commit retried) takes it from there. What
 * a helper that never started was handed never ran: it is run directly.
 */
function stopUsing(child: ChildProcess, left: 'failed' | 'run-directly' = 'failed'): void {
  if (host !== child) return;
  host = undefined;
  const waiting = [...pending.values()];
  pending.clear();
  for (const call of waiting) {
    if (left === 'run-directly') void direct(call.run).then(call.resolve);
    else call.resolve({ code: 128, stdout: '', stderr: 'the git helper process ended before git did; git may or may not have run' });
  }
  try {
    child.kill();
  } catch {
    // already gone
  }
}

function direct(run: GitRun): Promise<GitExit> {
  return new Promise((resolve) => {
    const child = execFile('git', [...run.args], { cwd: run.cwd, env: run.env, maxBuffer: run.maxBuffer, encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 128) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) || (error && code === 128 && !stderr ? error.message : '') });
    });
    if (run.input !== undefined) child.stdin?.end(run.input);
  });
}
