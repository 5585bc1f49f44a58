/**
 * The port through which the core runs shell commands (run_command, quality gates) and what a
 * command is and gives back; implemented by `NodeCommandRunner` (processRunner.ts), wrapped by
 * the sandbox, the command policy and the control-file guard.
 */

/** What the sandbox of one command confines it to. */
export interface SandboxSpec {
  /** The workspace (or the task's worktree): the only writable tree. */
  root: string;
  network: boolean;
  /** Files inside read-only parts that stay writable (the task's progress notes). */
  writablePaths: readonly string[];
  /** A person approved the command: the repository's data is writable, its hooks and config not. */
  gitWritable?: boolean;
  /** Paths under the private /tmp mounted read-only (a workspace under /tmp, its links' targets; see privateTmp.ts). */
  readablePaths?: readonly string[];
  /** Folders outside the root that stay writable (a gate's test probe records; under /tmp too, through the private /tmp). */
  writableDirs?: readonly string[];
  /** Installed dependencies inside the root, read-only (see dependencyMounts.ts). */
  readOnlyPaths?: readonly string[];
  /** Writable folders mounted over the dependencies' caches (`node_modules/.cache`): the worktree's own, or the workspace's. */
  cacheBinds?: readonly { source: string; target: string }[];
}

/** One shell command to run to completion. */
export interface CommandRequest {
  /** Shell text, run with `bash -c` (or `/bin/sh -c`; `cmd.exe` on Windows). */
  command: string;
  cwd: string;
  /** The whole process tree is killed when this elapses. */
  timeoutMs: number;
  /** Cap of `output`; the head and the tail are kept, the middle replaced by a marker. */
  maxOutputChars: number;
  signal?: AbortSignal;
  /** Merged over the inherited environment and the non-interactive hints. */
  env?: NodeJS.ProcessEnv;
  /** `env` is the whole environment (plus the non-interactive hints): nothing is inherited. */
  replaceEnv?: boolean;
  /** Appended (after a space) to the variable's value in the final environment, or its value when it has none (NODE_OPTIONS). */
  appendEnv?: Record<string, string>;
  /** Existing folders the command may write inside the sandbox (the test probe's records). */
  writableDirs?: string[];
  /** Run inside bubblewrap with this confinement (see sandbox.ts); undefined: run directly. */
  sandbox?: SandboxSpec;
  /** Files that stay writable inside the sandbox's read-only parts (the task's progress notes). */
  writablePaths?: string[];
  /**
   * A person approved this very command (a gated one, or any in semi-auto mode): inside the
   * sandbox the repository's data (`.git`: index, objects, refs) is writable for it; the hooks and
   * the repository's config stay read-only.
   */
  approved?: boolean;
  /** `action`: a human-approved external command of caio (push, pull request); default `agent`. */
  purpose?: 'agent' | 'gate' | 'action';
  /** Every chunk of stdout/stderr as it arrives, uncapped (for live terminals and logs). */
  onOutput?: (chunk: string) => void;
}

export interface CommandResult {
  /** null when the process was killed by a signal or never started. */
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  aborted: boolean;
  /** stdout and stderr interleaved in arrival order, capped. */
  output: string;
  truncated: boolean;
  durationMs: number;
}

/** Runs shell commands to completion. */
export interface CommandRunner {
  /** Resolves when the command ends, times out or is aborted; rejects only if it could not be started. */
  run(req: CommandRequest): Promise<CommandResult>;
  /**
   * What a run of `req` sees besides its command line and the files of its folder: the whole
   * environment its process starts with (less Ralph's per-run variables, `PER_RUN_VARIABLES`),
   * the sandbox it runs in and the shell — as text, the same for two requests exactly when
   * their runs would see the same. Undefined (or absent) when this runner cannot say.
   */
  environmentOf?(req: CommandRequest): Promise<string | undefined>;
}
