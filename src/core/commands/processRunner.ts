import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import type { CommandRequest, CommandResult, CommandRunner } from './commandPort';
import { COMMAND_MARKER_ENV, killProcessTree } from './processTree';
import { sandboxLaunch } from './sandbox';

export type { CommandRequest, CommandResult, CommandRunner } from './commandPort';

export { COMMAND_MARKER_ENV };

/**
 * Variables Ralph sets for one run only (a marker, a folder of the run's own): what a command
 * sees of them differs from run to run and says nothing of its result, so they are left out of
 * `CommandRunner.environmentOf` (the run's gate cache keys by it). Ralph's other per-run
 * variables join this list.
 */
export const PER_RUN_VARIABLES: readonly string[] = [COMMAND_MARKER_ENV];

/**
 * A sandbox as `environmentOf` describes it. A dependency cache is named by where tools see it
 * (its target), not by the folder mounted there: each worktree mounts a folder of its own
 * (`dependencyMounts.ts`), and a cache's content is outside the key like any ignored file — so
 * the same tree in two worktrees is the same environment.
 */
function describedSandbox(spec: NonNullable<CommandRequest['sandbox']>, bwrap: string | undefined): object {
  const { cacheBinds, ...rest } = spec;
  return {
    ...rest,
    writablePaths: [...spec.writablePaths].sort(),
    ...(cacheBinds ? { writableCaches: cacheBinds.map((c) => c.target).sort() } : {}),
    bwrap,
  };
}

/** Nothing the agent runs can ask a human anything: there is no terminal behind it. */
export const NON_INTERACTIVE_ENV: Readonly<Record<string, string>> = Object.freeze({
  CI: 'true',
  GIT_TERMINAL_PROMPT: '0',
  GIT_PAGER: 'cat',
  PAGER: 'cat',
  GIT_EDITOR: 'true',
  NO_COLOR: '1',
  DEBIAN_FRONTEND: 'noninteractive',
});

export interface NodeCommandRunnerOptions {
  /** Shell executable; default bash when present, else /bin/sh. */
  shell?: string;
  /** bubblewrap executable for sandboxed requests. */
  bwrap?: string;
  /** Between SIGTERM and SIGKILL of the process group. */
  killGraceMs?: number;
  /** How long to wait for the pipes to close after the shell exited (grandchildren may hold them). */
  drainMs?: number;
  /**
   * Starts a run's time limit: calls `expire` once `ms` have passed, returns what cancels it.
   * Default: a timer. The tests give a clock of their own, so a limit runs out at a moment they
   * choose (the command's processes started) rather than at one a loaded machine can outrun.
   */
  timeLimit?: (expire: () => void, ms: number) => () => void;
}

const IS_WINDOWS = process.platform === 'win32';
/** setTimeout fires at once for delays past 2^31-1 ms. */
const MAX_TIMER_MS = 2_147_483_647;

/** `timeLimit`'s default: a timer of `ms` (capped where setTimeout would fire at once). */
function timerLimit(expire: () => void, ms: number): () => void {
  const timer = setTimeout(expire, Math.min(MAX_TIMER_MS, Math.max(0, ms)));
  return () => clearTimeout(timer);
}

/** Feeds stdout and stderr (each decoded on its own, so a split UTF-8 character stays whole) to the capture and the listener. */
function pipeOutput(child: ChildProcess, capture: OutputCapture, onOutput: ((chunk: string) => void) | undefined): void {
  const onData = (decoder: StringDecoder) => (data: Buffer) => {
    const chunk = decoder.write(data);
    if (!chunk) return;
    capture.push(chunk);
    if (onOutput) {
      try {
        onOutput(chunk);
      } catch {
        // A failing listener must not break the command.
      }
    }
  };
  child.stdout?.on('data', onData(new StringDecoder('utf8')));
  child.stderr?.on('data', onData(new StringDecoder('utf8')));
}

/**
 * Runs commands in their own process group (`detached`), so a timeout or an abort kills the
 * whole tree, not just the shell. If the shell exits while background processes still hold
 * its pipes, the runner stops waiting after `drainMs` and terminates those leftovers.
 */
export class NodeCommandRunner implements CommandRunner {
  private readonly shell: string;
  private readonly bwrap: string;
  private readonly killGraceMs: number;
  private readonly drainMs: number;
  private readonly timeLimit: (expire: () => void, ms: number) => () => void;

  constructor(options: NodeCommandRunnerOptions = {}) {
    this.shell = options.shell ?? defaultShell();
    this.bwrap = options.bwrap ?? 'bwrap';
    this.killGraceMs = options.killGraceMs ?? 2000;
    this.drainMs = options.drainMs ?? 500;
    this.timeLimit = options.timeLimit ?? timerLimit;
  }

  run(req: CommandRequest): Promise<CommandResult> {
    const started = Date.now();
    if (req.signal?.aborted) {
      return Promise.resolve({ ...emptyResult(), aborted: true });
    }
    const marker = `${process.pid}-${randomBytes(8).toString('hex')}`;
    const child = this.spawn(req, marker);
    const capture = new OutputCapture(req.maxOutputChars);
    return new Promise<CommandResult>((resolve, reject) => {
      let timedOut = false;
      let aborted = false;
      let killing: Promise<void> | undefined;
      let exit: { code: number | null; signal: string | null } | undefined;
      let drainTimer: NodeJS.Timeout | undefined;
      let settled = false;

      const killTree = (): Promise<void> => (killing ??= killProcessTree(child.pid, marker, this.killGraceMs));
      const onAbort = (): void => {
        aborted = true;
        void killTree();
      };
      const stopLimit = this.timeLimit(() => {
        timedOut = true;
        void killTree();
      }, req.timeoutMs);
      req.signal?.addEventListener('abort', onAbort, { once: true });

      const cleanup = (): void => {
        stopLimit();
        if (drainTimer) clearTimeout(drainTimer);
        req.signal?.removeEventListener('abort', onAbort);
      };
      const finish = async (): Promise<void> => {
        if (settled || !exit) return;
        settled = true;
        cleanup();
        // Whatever the command left behind (a daemon, a `setsid` child) ends with it.
        if (killing) await killing;
        else if (!IS_WINDOWS) await killTree();
        const { output, truncated } = capture.result();
        resolve({
          exitCode: exit.code,
          signal: exit.signal,
          timedOut,
          aborted,
          output,
          truncated,
          durationMs: Date.now() - started,
        });
      };

      pipeOutput(child, capture, req.onOutput);

      // `on`, not `once`: a second 'error' without a listener would crash the host.
      child.on('error', (error) => {
        if (exit || settled) return;
        settled = true;
        cleanup();
        reject(new Error(`could not start command in ${req.cwd}: ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        exit = { code, signal };
        drainTimer = setTimeout(() => {
          // Leftover background processes still hold our pipes: stop them and stop waiting.
          void killTree();
          child.stdout?.destroy();
          child.stderr?.destroy();
          void finish();
        }, this.drainMs);
      });
      child.once('close', () => void finish());
    });
  }

  /** See `CommandRunner.environmentOf`: the variables `spawn` gives (less the per-run ones), the shell, the sandbox. */
  environmentOf(req: CommandRequest): Promise<string> {
    const env = Object.entries(this.env(req))
      .filter(([name]) => !PER_RUN_VARIABLES.includes(name))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const sandbox = req.sandbox && !IS_WINDOWS ? describedSandbox(req.sandbox, this.bwrap) : undefined;
    return Promise.resolve(JSON.stringify({ platform: process.platform, shell: IS_WINDOWS ? 'cmd' : this.shell, env, sandbox }));
  }

  /** The environment a run of `req` starts with, but its marker. */
  private env(req: CommandRequest): Record<string, string> {
    const env = { ...(req.replaceEnv ? {} : definedOnly(process.env)), ...NON_INTERACTIVE_ENV, ...definedOnly(req.env ?? {}) };
    for (const [name, value] of Object.entries(req.appendEnv ?? {})) env[name] = env[name] ? `${env[name]} ${value}` : value;
    return env;
  }

  private spawn(req: CommandRequest, marker: string): ChildProcess {
    const env: Record<string, string> = { ...this.env(req), [COMMAND_MARKER_ENV]: marker };
    if (IS_WINDOWS) {
      return spawn(req.command, { cwd: req.cwd, env, shell: true, windowsHide: true, stdio: ['ignore', 'pipe', 'pipe'] });
    }
    if (req.sandbox) {
      const launch = sandboxLaunch(req.sandbox, req.cwd, env, this.shell, req.command, { bwrap: this.bwrap });
      return spawn(launch.file, launch.args, { cwd: req.cwd, env: launch.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    }
    return spawn(this.shell, ['-c', req.command], { cwd: req.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  }
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}

function defaultShell(): string {
  for (const candidate of ['/bin/bash', '/usr/bin/bash', '/usr/local/bin/bash']) {
    if (existsSync(candidate)) return candidate;
  }
  return '/bin/sh';
}

function emptyResult(): CommandResult {
  return { exitCode: null, signal: null, timedOut: false, aborted: false, output: '', truncated: false, durationMs: 0 };
}

/** `\n… [N characters omitted] …\n`, placed where a capped output lost its middle. */
export function omissionMarker(omitted: number): string {
  return `\n… [${omitted} characters omitted] …\n`;
}

/** Caps `text` the same way command output is capped: head and tail kept around a marker. */
export function capMiddle(text: string, maxChars: number): { text: string; truncated: boolean } {
  const capture = new OutputCapture(maxChars);
  capture.push(text);
  const { output, truncated } = capture.result();
  return { text: output, truncated };
}

/** Keeps the first half and the last half of `max` characters in bounded memory. */
class OutputCapture {
  private head = '';
  private tail = '';
  private total = 0;
  private readonly headMax: number;
  private readonly tailMax: number;

  constructor(max: number) {
    const cap = Math.max(0, Math.floor(max));
    this.headMax = Math.ceil(cap / 2);
    this.tailMax = cap - this.headMax;
  }

  push(chunk: string): void {
    this.total += chunk.length;
    let rest = chunk;
    if (this.head.length < this.headMax) {
      const take = this.headMax - this.head.length;
      this.head += rest.slice(0, take);
      rest = rest.slice(take);
    }
    if (!rest) return;
    this.tail += rest;
    // Trim lazily so a chatty command costs amortised O(1) per character.
    if (this.tail.length > 2 * this.tailMax + 4096) this.tail = this.tail.slice(-this.tailMax);
  }

  result(): { output: string; truncated: boolean } {
    const tail = this.tailMax === 0 ? '' : this.tail.slice(-this.tailMax);
    const omitted = this.total - this.head.length - tail.length;
    if (omitted <= 0) return { output: this.head + tail, truncated: false };
    return { output: this.head + omissionMarker(omitted) + tail, truncated: true };
  }
}
