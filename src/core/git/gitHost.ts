import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { type GitCall, type GitReply, handleGitCall, type OnText } from './gitCalls';
import { gitHostWanted, gitHostWhenAsked, wantGitHost } from './gitHostMode';

export { gitHostWhenAsked };

/**
 * Where the orchestrator's git processes are started from. On Linux a new process is a fork of
 * the one that starts it, and a fork costs in proportion to that process's memory: from an
 * editor's extension host (hundreds of MB) each `git` blocks its event loop for 10–20 ms — the
 * merge queue runs a dozen per merge, the loop one per iteration. So git runs in a small helper
 * process (plain Node with simple-git, a few tens of MB, forked once, started on first use, gone
 * with this process): the fork happens there, off this event loop, and so does simple-git's
 * parsing of what git printed. Where the helper cannot run, or on Windows (no fork there), the
 * same calls run in this process; a helper that died is started again by the next call.
 * `RALPH_GIT_HOST=off` runs them in this process always. The CLI (`gitHostWhenAsked`) starts it
 * only for a run (`startGitHost`): its other verbs are small processes that make a few git calls,
 * where the helper's own Node start (about 0.1 CPU-second) costs more than the forks it saves.
 */

// The helper's program, beside this module: dist/gitHostMain.js in the bundles, the compiled
// gitHostMain.js in tests. Absent (an unusual packaging): git calls run in this process.
const HOST_SCRIPT = path.join(__dirname, 'gitHostMain.js');

interface Pending {
  call: GitCall;
  /** A `stream` call's output, as the helper's `{ id, chunk }` messages bring it. */
  onText?: OnText;
  resolve(reply: GitReply): void;
}

let host: ChildProcess | undefined;
/** The helper could not run here: git is started directly from now on. */
let unavailable = process.platform === 'win32' || process.env.RALPH_GIT_HOST === 'off';
let nextId = 0;
const pending = new Map<number, Pending>();

/**
 * Runs one git call to its end in the helper; never rejects (a git that could not start is exit
 * 128 with the reason). `onText`: a `stream` call's output, piece by piece, before it resolves.
 */
export function callGit(call: GitCall, onText?: OnText): Promise<GitReply> {
  const helper = unavailable ? undefined : (host ?? (gitHostWanted() ? ensureHost() : undefined));
  if (!helper) return handleGitCall(call, onText);
  return new Promise((resolve) => {
    const id = ++nextId;
    pending.set(id, { call, onText, resolve });
    if (pending.size === 1) helper.channel?.ref();
    try {
      helper.send({ id, ...call });
    } catch {
      pending.delete(id);
      stopUsing(helper);
      resolve(handleGitCall(call, onText));
    }
  });
}

/**
 * Starts the helper ahead of the first git call, where it can run: its Node start-up (about a
 * tenth of a second) then overlaps the caller's own work instead of delaying that first call.
 * A no-op when it runs already; like every start, it never keeps this process alive.
 */
export function startGitHost(): void {
  wantGitHost();
  if (!unavailable) ensureHost();
}

/**
 * Ends the helper and waits until it has gone (at most `timeoutMs`, then SIGKILL): a CLI about to
 * exit leaves no process of its own behind, not even for the moment the helper takes to see its
 * parent go (longer on a busy machine). Calls in flight fail as when the helper dies; a later
 * call starts a new helper.
 */
export function stopGitHost(timeoutMs = 2000): Promise<void> {
  const child = host;
  if (!child || child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      resolve();
    }, timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    stopUsing(child);
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
    if (!existsSync(HOST_SCRIPT)) throw new Error(`no ${HOST_SCRIPT}`);
    child = spawn(process.execPath, [HOST_SCRIPT], {
      stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      windowsHide: true,
    });
  } catch {
    unavailable = true;
    return undefined;
  }
  host = child;
  child.on('message', ({ id, ...reply }: (GitReply & { id: number }) | { id: number; chunk: string }) => {
    const waiting = pending.get(id);
    if (!waiting) return;
    if ('chunk' in reply) return void waiting.onText?.(reply.chunk);
    pending.delete(id);
    if (pending.size === 0) child.channel?.unref();
    waiting.resolve(reply);
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
    if (left === 'run-directly') void handleGitCall(call.call, call.onText).then(call.resolve);
    else call.resolve({ code: 128, stdout: '', stderr: 'the git helper process ended before git did; git may or may not have run' });
  }
  try {
    child.kill();
  } catch {
    // already gone
  }
}
