import { spawn } from 'node:child_process';
import { existsSync, promises as fs, readFileSync, statSync } from 'node:fs';
import * as os from 'node:os';
import path from 'node:path';
import type { RalphConfig } from '../config/schema';
import { RalphError } from '../errors';
import type { CommandRequest, CommandResult, CommandRunner, SandboxSpec } from './commandPort';
import { dependencyMounts } from './dependencyMounts';
import { hiddenPathMessage, hiddenTmpPath, mainWorkspaceOf, privateTmpBinds } from './privateTmp';
import { scrubEnvironment, type SecretRedactor } from './secrets';
import { probeSeatbelt, SANDBOX_EXEC, seatbeltProfile, seatbeltTemp } from './seatbelt';

export type { SandboxSpec };

/** `commands.sandbox: required` and no working bubblewrap: nothing runs. */
export class SandboxUnavailableError extends RalphError {
  constructor(reason: string) {
    super(
      `commands.sandbox is "required" but the sandbox is not available (${reason}); no command was run. Install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap) on Linux with user namespaces enabled (macOS uses its own sandbox-exec; Windows has none), or set commands.sandbox to "auto" or "off".`,
      'sandbox-unavailable',
    );
  }
}

/** Inside the sandbox HOME, caches and temp files live in the private /tmp and vanish with it. */
const SANDBOX_HOME = '/tmp/home';
/** Variables of the host environment a sandboxed command keeps (besides `commands.env`). */
const SANDBOX_KEEP = [
  'PATH',
  'LANG',
  'LANGUAGE',
  'TERM',
  'TZ',
  'USER',
  'LOGNAME',
  'SHELL',
  'NODE_PATH',
  'NVM_BIN',
  'JAVA_HOME',
  'GOROOT',
  'CARGO_HOME',
  'RUSTUP_HOME',
];

export interface SandboxProbe {
  available: boolean;
  reason: string;
}

const probes = new Map<string, Promise<SandboxProbe>>();

/**
 * Whether the sandbox works here (once per process): on Linux bubblewrap, present and allowed to
 * create namespaces; on macOS sandbox-exec (Seatbelt) with a generated profile; none on Windows.
 */
export function probeSandbox(bwrap = 'bwrap', platform: NodeJS.Platform = process.platform): Promise<SandboxProbe> {
  if (platform === 'darwin') {
    const known = probes.get(SANDBOX_EXEC);
    if (known) return known;
    const probe = probeSeatbelt();
    probes.set(SANDBOX_EXEC, probe);
    return probe;
  }
  if (platform !== 'linux') {
    return Promise.resolve({ available: false, reason: `no sandbox on ${platform}; commands run with the user's own rights` });
  }
  // a program named without a folder is looked up on PATH: the answer holds for the PATH it was found
  // on (a long-lived process whose PATH changes — an extension host — asks again)
  const key = bwrap.includes('/') ? bwrap : `${bwrap}\n${process.env.PATH ?? ''}`;
  const known = probes.get(key);
  if (known) return known;
  const probe = new Promise<SandboxProbe>((resolve) => {
    const child = spawn(
      bwrap,
      [
        '--ro-bind',
        '/',
        '/',
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--tmpfs',
        '/tmp',
        '--unshare-pid',
        '--unshare-net',
        '--die-with-parent',
        '--',
        'true',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let stderr = '';
    child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', (error) => resolve({ available: false, reason: `bubblewrap (bwrap) not found: ${error.message}` }));
    child.on('close', (code) =>
      resolve(
        code === 0
          ? { available: true, reason: 'bubblewrap' }
          : {
              available: false,
              reason: `bubblewrap fails here (exit ${code}): ${stderr.trim().split('\n')[0] ?? ''} — user namespaces may be disabled`,
            },
      ),
    );
  });
  probes.set(key, probe);
  return probe;
}

/**
 * The repository directories of `root` (its `.git` folder, or a worktree's own git dir and the
 * common one it points to) made writable for a person-approved command, with what makes git run
 * programs or read other configuration (hooks, config, info/attributes…) mounted read-only on top.
 */
export function approvedGitBinds(root: string): string[] {
  const dirs = repositoryDirs(root);
  const args: string[] = [];
  for (const dir of dirs) args.push('--bind', dir, dir);
  for (const dir of dirs) {
    for (const name of ['hooks', 'config', 'config.worktree', 'info']) {
      const target = path.join(dir, name);
      if (existsSync(target)) args.push('--ro-bind', target, target);
    }
  }
  return args;
}

/** The git dirs of `root`: its `.git` folder, or a worktree's own git dir and the common one it points to. */
export function repositoryDirs(root: string): string[] {
  const dotGit = path.join(root, '.git');
  let gitDir: string | undefined;
  try {
    if (statSync(dotGit).isDirectory()) gitDir = dotGit;
    else {
      const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'))?.[1];
      if (pointer) gitDir = path.resolve(root, pointer);
    }
  } catch {
    return [];
  }
  if (!gitDir || !existsSync(gitDir)) return [];
  const dirs = [gitDir];
  try {
    const common = path.resolve(gitDir, readFileSync(path.join(gitDir, 'commondir'), 'utf8').trim());
    if (existsSync(common)) dirs.unshift(common);
  } catch {
    // not a linked worktree: the git dir is the common dir
  }
  return dirs;
}

/** How a sandboxed command is started: the program, its arguments and its environment. */
export interface SandboxLaunch {
  file: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * The start of `shell -c command` in the sandbox of this platform: bubblewrap on Linux (its own
 * private /tmp holds HOME), sandbox-exec with a generated Seatbelt profile on macOS (HOME and
 * TMPDIR in a temp folder of the workspace's own, writable).
 */
export function sandboxLaunch(
  spec: SandboxSpec,
  cwd: string,
  env: Record<string, string>,
  shell: string,
  command: string,
  options: { platform?: NodeJS.Platform; bwrap?: string } = {},
): SandboxLaunch {
  if ((options.platform ?? process.platform) === 'darwin') {
    const temp = seatbeltTemp(spec.root);
    const profile = seatbeltProfile(spec, { home: os.homedir(), temp }, spec.gitWritable ? repositoryDirs(spec.root) : []);
    const inside = {
      ...env,
      HOME: path.join(temp, 'home'),
      TMPDIR: temp,
      XDG_CACHE_HOME: path.join(temp, '.cache'),
      npm_config_cache: path.join(temp, '.npm'),
    };
    return { file: SANDBOX_EXEC, args: ['-p', profile, shell, '-c', command], env: inside };
  }
  return {
    file: options.bwrap ?? 'bwrap',
    args: bwrapArgs(spec, cwd, env, shell, command),
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
  };
}

/** The bwrap argument list that runs `shell -c command` inside the sandbox. */
export function bwrapArgs(spec: SandboxSpec, cwd: string, env: Record<string, string>, shell: string, command: string): string[] {
  const root = path.resolve(spec.root);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--dir', SANDBOX_HOME];
  // what a workspace under /tmp reaches outside its tree, read-only like the rest of the system
  for (const readable of spec.readablePaths ?? []) {
    if (existsSync(readable)) args.push('--ro-bind', readable, readable);
  }
  args.push('--bind', root, root);
  // `.git` (a directory, or the file of a worktree) and Ralph's bookkeeping stay read-only.
  for (const name of ['.git', '.ralph']) {
    const target = path.join(root, name);
    if (existsSync(target)) args.push('--ro-bind', target, target);
  }
  // installed dependencies read-only, their caches writable (see dependencyMounts.ts)
  for (const dir of spec.readOnlyPaths ?? []) args.push('--ro-bind', dir, dir);
  for (const cache of spec.cacheBinds ?? []) args.push('--bind', cache.source, cache.target);
  if (spec.gitWritable) args.push(...approvedGitBinds(root));
  for (const file of spec.writablePaths) {
    if (existsSync(file)) args.push('--bind', file, file);
  }
  for (const dir of spec.writableDirs ?? []) {
    if (existsSync(dir)) args.push('--bind', dir, dir);
  }
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try');
  if (!spec.network) args.push('--unshare-net');
  args.push('--die-with-parent', '--new-session', '--clearenv');
  for (const [name, value] of Object.entries(env)) args.push('--setenv', name, value);
  args.push('--chdir', cwd, '--', shell, '-c', command);
  return args;
}

/** The minimal environment of a sandboxed command. */
export function sandboxEnvironment(scrubbed: Record<string, string>, passThrough: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(scrubbed)) {
    if (SANDBOX_KEEP.includes(name) || name.startsWith('LC_') || passThrough.includes(name)) env[name] = value;
  }
  env.PATH ??= '/usr/local/bin:/usr/bin:/bin';
  return {
    ...env,
    HOME: SANDBOX_HOME,
    TMPDIR: '/tmp',
    XDG_CACHE_HOME: '/tmp/.cache',
    npm_config_cache: '/tmp/.npm',
    npm_config_update_notifier: 'false',
  };
}

export interface IsolationSettings {
  root: string;
  commands: Pick<RalphConfig['commands'], 'sandbox' | 'network' | 'env'>;
  /** Variables holding provider keys (`llm.apiKeyEnv`, …): always scrubbed. */
  keyVariables: readonly string[];
  /** Variables only caio's approved external commands (push, pull request) receive. */
  actionEnv?: readonly string[];
  /** `worktrees.link`: the installed dependencies, read-only to commands but for their caches (dependencyMounts.ts). */
  links?: readonly string[];
}

/**
 * Every command of the agent and every gate goes through here: secrets are scrubbed from the
 * environment, the command runs in the sandbox when there is one (refused under `required`
 * when there is not), and known secret values are redacted from what comes back.
 */
export class IsolatedCommandRunner implements CommandRunner {
  private warned = false;

  constructor(
    private readonly inner: CommandRunner,
    private readonly settings: IsolationSettings | (() => Promise<IsolationSettings>),
    private readonly redactor: SecretRedactor,
    private readonly onWarning: (message: string) => void = () => {},
    private readonly probe: () => Promise<SandboxProbe> = () => probeSandbox(),
  ) {}

  async run(req: CommandRequest): Promise<CommandResult> {
    const launch = await this.prepare(req);
    if ('refused' in launch) return launch.refused;
    const onOutput = req.onOutput;
    const result = await this.inner.run({
      ...launch.request,
      onOutput: onOutput ? (chunk) => onOutput(this.redactor.redact(chunk)) : undefined,
    });
    const { hiddenNote } = launch;
    const output = hiddenNote && result.exitCode !== 0 ? `${result.output}\n[ralph] ${hiddenNote}` : result.output;
    return { ...result, output: this.redactor.redact(output) };
  }

  /** What `run` would start for `req` (its environment scrubbed, its sandbox), as the runner below describes it; undefined for a request refused here. */
  async environmentOf(req: CommandRequest): Promise<string | undefined> {
    if (!this.inner.environmentOf) return undefined;
    const launch = await this.prepare(req, false);
    return 'refused' in launch ? undefined : this.inner.environmentOf(launch.request);
  }

  /**
   * `req` as it runs: its environment scrubbed (or the sandbox's), its sandbox decided; or the
   * refusal of a gate that names a path the sandbox hides. Throws when the sandbox is required
   * and missing. `learn`: the secrets scrubbed are added to the redactor (a run's output is redacted).
   */
  private async prepare(
    req: CommandRequest,
    learn = true,
  ): Promise<{ request: CommandRequest; hiddenNote?: string } | { refused: CommandResult }> {
    const settings = typeof this.settings === 'function' ? await this.settings() : this.settings;
    const action = req.purpose === 'action';
    const passThrough = [...settings.commands.env, ...(action ? (settings.actionEnv ?? []) : [])];
    const scrub = scrubEnvironment(process.env, { keyVariables: settings.keyVariables, passThrough });
    // Passed through on purpose still means: never shown to the model or written to a log.
    if (learn) this.redactor.add(...scrubEnvironment(process.env, { keyVariables: settings.keyVariables, passThrough: [] }).values);
    const mode = settings.commands.sandbox;
    let sandbox: SandboxSpec | undefined;
    let hiddenNote: string | undefined;
    // caio's approved actions (push, pull request) need the network and write refs in .git.
    if (mode !== 'off' && !action) {
      const probe = await this.probe();
      if (probe.available) {
        const root = worktreeRoot(settings.root, req.cwd) ?? settings.root;
        const readablePaths = privateTmpBinds(root);
        const hidden = hiddenTmpPath(req.command, root, readablePaths);
        // a gate that names a path the sandbox hides would fail with "not found" and no reason: say why instead
        if (hidden && req.purpose === 'gate') return { refused: refusedHidden(hiddenPathMessage(hidden, 'gate')) };
        const dependencies = dependencyMounts(root, settings.links ?? []);
        sandbox = {
          root,
          network: settings.commands.network,
          writablePaths: await ensureFiles(req.writablePaths ?? []),
          gitWritable: req.approved === true,
          readablePaths,
          ...(req.writableDirs?.length ? { writableDirs: req.writableDirs.filter((d) => existsSync(d)) } : {}),
          readOnlyPaths: dependencies.readOnly,
          cacheBinds: dependencies.caches,
        };
        if (hidden) hiddenNote = hiddenPathMessage(hidden, 'agent');
      } else if (mode === 'required') {
        throw new SandboxUnavailableError(probe.reason);
      } else if (!this.warned) {
        this.warned = true;
        this.onWarning(
          `commands run without a sandbox (${probe.reason}); they can write anywhere the user can and reach the network. Set commands.sandbox to "required" to refuse instead.`,
        );
      }
    }
    const base = sandbox ? sandboxEnvironment(scrub.env, passThrough) : scrub.env;
    return { request: { ...req, env: { ...base, ...req.env }, replaceEnv: true, sandbox }, ...(hiddenNote ? { hiddenNote } : {}) };
  }
}

/** A command not run because it could not work in the sandbox; the output says why. */
function refusedHidden(message: string): CommandResult {
  return { exitCode: 126, signal: null, timedOut: false, aborted: false, output: `[ralph] ${message}\n`, truncated: false, durationMs: 0 };
}

/** Bind mounts need an existing target: create the (empty) notes file when it is missing. */
async function ensureFiles(files: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  for (const file of files) {
    try {
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, '', { flag: 'a' });
      out.push(file);
    } catch {
      // Not writable for us either: the command simply cannot write it.
    }
  }
  return out;
}

/**
 * A command whose cwd is inside one of the workspace's task worktrees (`.ralph/worktrees/<id>`,
 * parallel runs and the merge queue) gets that worktree as its writable root: under the
 * workspace root the whole of `.ralph/` is read-only.
 */
function worktreeRoot(root: string, cwd: string): string | undefined {
  // the workspace's own worktrees: a task's, the merge queue's, a proof's scratch (also from a task worktree)
  const worktrees = path.join(mainWorkspaceOf(root), '.ralph', 'worktrees');
  const rel = path.relative(worktrees, path.resolve(cwd));
  if (rel === '' || rel.startsWith('..') || path.isAbsolute(rel)) return undefined;
  return path.join(worktrees, rel.split(path.sep)[0]);
}

/** Isolation settings of a workspace from its configuration. */
export function isolationSettings(root: string, config: Pick<RalphConfig, 'commands' | 'llm' | 'agents' | 'worktrees'>): IsolationSettings {
  return {
    root,
    commands: config.commands,
    keyVariables: [config.llm.apiKeyEnv],
    actionEnv: config.agents.caio?.env ?? [],
    links: config.worktrees.link,
  };
}
