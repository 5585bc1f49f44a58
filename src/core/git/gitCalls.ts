import { execFile, spawn } from 'node:child_process';
import { type LogOptions, type LogResult, type SimpleGit, simpleGit } from 'simple-git';

/**
 * What the git helper process runs (gitHostMain.ts; see gitHost.ts). What simple-git parses
 * safely for any file name — status (read with --null) and log (its own field separators) — is
 * run through simple-git and comes back parsed. Every other call (worktrees, merges, refs,
 * plumbing, diffs) is started as is, with git's own exit code and output: simple-git's `raw`
 * waits a fixed 50 ms after any command that prints nothing (its completion plugin, not
 * configurable in simple-git 4), and most of that plumbing prints nothing — an iteration's commit
 * alone would pay it twice, a merge a dozen times; and its diff summary reads git's quoted names,
 * not the `-z` lists those callers read. The same function runs in-process where the helper
 * cannot (Windows, RALPH_GIT_HOST=off).
 */
interface CallBase {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** `-c key=value` options of every call (`HARDENED_GIT_CONFIG`). */
  config: readonly string[];
  args: readonly string[];
}

/**
 * What the orchestrator asks of git: one command, in one folder, with its environment. `stream`:
 * git's standard output is handed over piece by piece as git prints it (`OnText`), never held
 * whole — what can be as large as the working tree (the status and the staged diff of an
 * iteration that created 100,000 files); the reply's `stdout` is then empty.
 */
export type GitCall =
  (CallBase & { op: 'raw'; input?: string }) | (CallBase & { op: 'stream'; input?: string }) | (CallBase & { op: 'status' | 'log' });

/** Takes a piece of a `stream` call's output; git waits (its pipe full) until a returned promise settles. */
export type OnText = (text: string) => void | Promise<void>;

/** One changed path from `status` (renames: `from` is where it was). */
export interface GitStatusFile {
  path: string;
  from?: string;
  index: string;
  workingDir: string;
}

/** One commit from `log`. */
export interface GitLogEntry {
  hash: string;
  parents: string[];
  subject: string;
  body: string;
}

/** git's answer: its exit code and output, and what simple-git parsed of it when the op parses. */
export interface GitReply {
  code: number;
  stdout: string;
  stderr: string;
  status?: GitStatusFile[];
  /** With `status`: the paths with unresolved merge conflicts (both sides changed, added or deleted). */
  conflicted?: string[];
  log?: GitLogEntry[];
}

/**
 * Options of the orchestrator's own calls that simple-git's safety checks refuse by default: they
 * switch hooks, fsmonitor, the pager and the editor OFF (`HARDENED_GIT_CONFIG`, GIT_EDITOR=true),
 * the opposite of what those checks guard against. Nothing an agent writes is passed as an
 * option: paths come after `--`, refs are the orchestrator's own names.
 */
const ORCHESTRATOR_OPTIONS = {
  allowUnsafeHooksPath: true,
  allowUnsafeFsMonitor: true,
  allowUnsafePager: true,
  allowUnsafeEditor: true,
} as const;

const MAX_OUTPUT = 64 * 1024 * 1024;
/** What a `stream` call keeps of git's error output (its messages are a few lines). */
const MAX_STDERR = 1024 * 1024;
const LOG_FIELDS = { hash: '%H', parents: '%P', subject: '%s', body: '%b' };
type LogWithArgs = (args: string[], options: LogOptions<typeof LOG_FIELDS>) => Promise<LogResult<typeof LOG_FIELDS>>;

/** Runs one call; never rejects (a git that could not start is exit 128 with the reason). `onText`: a `stream` call's output. */
export async function handleGitCall(call: GitCall, onText?: OnText): Promise<GitReply> {
  if (call.op === 'stream') return stream(call, onText ?? (() => undefined));
  return call.op === 'raw' ? raw(call) : parsed(call);
}

function stream(call: GitCall & { op: 'stream' }, onText: OnText): Promise<GitReply> {
  return new Promise((resolve) => {
    let stderr = '';
    let failure: Error | undefined;
    const child = spawn('git', [...call.config.flatMap((option) => ['-c', option]), ...call.args], {
      cwd: call.cwd,
      env: call.env,
      windowsHide: true,
    });
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      const taken = onText(text);
      if (!(taken instanceof Promise)) return;
      child.stdout.pause();
      void taken.then(() => child.stdout.resume());
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => {
      if (stderr.length < MAX_STDERR) stderr += text;
    });
    child.on('error', (error) => (failure = error));
    child.on('close', (code) =>
      resolve({ code: failure ? 128 : (code ?? 128), stdout: '', stderr: stderr || (failure ? failure.message : '') }),
    );
    child.stdin.on('error', () => undefined); // git that ended before reading its input
    child.stdin.end(call.input);
  });
}

function raw(call: GitCall & { op: 'raw' }): Promise<GitReply> {
  return new Promise((resolve) => {
    const child = execFile(
      'git',
      [...call.config.flatMap((option) => ['-c', option]), ...call.args],
      { cwd: call.cwd, env: call.env, maxBuffer: MAX_OUTPUT, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error ? (typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : 128) : 0;
        resolve({ code, stdout, stderr: stderr || (error && code === 128 ? error.message : '') });
      },
    );
    if (call.input !== undefined) child.stdin?.end(call.input);
  });
}

async function parsed(call: GitCall & { op: 'status' | 'log' }): Promise<GitReply> {
  const seen = { code: 0, stderr: '' };
  try {
    const git = simpleGit({
      baseDir: call.cwd,
      trimmed: false,
      config: [...call.config],
      // the environment is the orchestrator's own (LC_ALL, GIT_TERMINAL_PROMPT, GIT_EDITOR, identities)
      allowEnvironment: Object.keys(call.env),
      unsafe: ORCHESTRATOR_OPTIONS,
      errors: (error, result) => {
        seen.code = result.exitCode;
        return error;
      },
    }).env(call.env);
    git.outputHandler((_command, _stdout, stderr) => stderr.on('data', (chunk: Buffer) => (seen.stderr += chunk.toString('utf8'))));
    return call.op === 'status' ? await status(git, call.args) : await log(git, call.args);
  } catch (error) {
    return { code: seen.code || 128, stdout: '', stderr: seen.stderr || messageOf(error) };
  }
}

async function status(git: SimpleGit, args: readonly string[]): Promise<GitReply> {
  const result = await git.status([...args]);
  const files = result.files.map((f) => ({ path: f.path, ...(f.from ? { from: f.from } : {}), index: f.index, workingDir: f.working_dir }));
  return { code: 0, stdout: '', stderr: '', status: files, conflicted: result.conflicted };
}

async function log(git: SimpleGit, args: readonly string[]): Promise<GitReply> {
  // simple-git reads a leading array as the command's own arguments (ranges, counts, paths) and
  // the trailing object as the log options; its typings know only one of the two at a time
  const result = await (git as unknown as { log: LogWithArgs }).log([...args], { format: LOG_FIELDS, splitter: '\x1e' });
  const entries = result.all.map((e) => ({
    hash: e.hash,
    parents: e.parents.split(' ').filter(Boolean),
    subject: e.subject,
    body: e.body,
  }));
  return { code: 0, stdout: '', stderr: '', log: entries };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
