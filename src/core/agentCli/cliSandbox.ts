/**
 * Ralph's sandbox around an agent CLI's whole process (issue 46): on Linux, with bubblewrap
 * working and `commands.sandbox` not "off", the CLI runs inside bwrap — the system read-only, the
 * task's folder writable (its `.git` and `.ralph/` read-only again, but the repository's data as
 * an approved command may write it and the task's progress notes), the CLI's own credentials and
 * state folders writable (its login keeps working), the session's private folder writable (Ralph's
 * signal server writes the signals there), a private /tmp, the network kept (the CLI talks to its
 * API). Every other file of the user is read-only. macOS and Windows: the CLI runs unwrapped
 * (Ralph's Seatbelt profile confines the built-in agent's commands only); said, never faked.
 */

import { existsSync, promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dependencyMounts } from '../commands/dependencyMounts';
import { isUnder, PRIVATE_TMP, privateTmpBinds } from '../commands/privateTmp';
import { approvedGitBinds, type SandboxProbe, SandboxUnavailableError } from '../commands/sandbox';
import type { AgentCliAdapter } from './types';

export type SandboxMode = 'auto' | 'required' | 'off';

/** Whether a session of an agent CLI runs inside Ralph's sandbox, and why (or why not). */
export interface CliSandboxDecision {
  wrapped: boolean;
  reason: string;
}

/**
 * The decision for `adapter` under `commands.sandbox`: "off" never wraps; "auto" wraps where
 * bubblewrap works (Linux); "required" wraps or throws SandboxUnavailableError (nothing runs).
 */
export function cliSandboxDecision(
  adapter: Pick<AgentCliAdapter, 'label'>,
  mode: SandboxMode,
  probe: SandboxProbe,
  platform: NodeJS.Platform = process.platform,
): CliSandboxDecision {
  if (mode === 'off') return { wrapped: false, reason: 'commands.sandbox is "off"' };
  let why: string | undefined;
  if (platform !== 'linux')
    why =
      platform === 'darwin'
        ? `on macOS Ralph has no sandbox around an agent CLI (its Seatbelt profile confines the built-in agent's commands only)`
        : `no sandbox on ${platform}`;
  else if (!probe.available) why = probe.reason;
  if (!why) return { wrapped: true, reason: 'bubblewrap' };
  if (mode === 'required') throw new SandboxUnavailableError(`${adapter.label} cannot run in it: ${why}`);
  return { wrapped: false, reason: why };
}

/** One line for the run's first lines and `ralph doctor`: whether the CLI is confined, and to what. */
export function cliSandboxLine(adapter: Pick<AgentCliAdapter, 'label'>, decision: CliSandboxDecision): string {
  return decision.wrapped
    ? `${adapter.label} runs in Ralph's sandbox (bubblewrap): it writes only the task's folder (not .ralph/), its own login and state folders and its session's folder; the network is reachable`
    : `${adapter.label} runs without Ralph's sandbox (${decision.reason}): its own permission mode is all that confines its commands`;
}

/** What the sandbox of one session is made of. */
export interface CliSandboxPlan {
  /** The task's folder (its worktree, or the workspace): writable. */
  cwd: string;
  /** The session's private folder (MCP config, signals, hook files): writable. */
  sessionDir: string;
  /** The CLI's own credentials and state (`adapter.stateDirs`): writable. */
  state: readonly string[];
  /** The task's progress notes (absolute): the one file under `.ralph/` the session writes. */
  progressFile?: string;
  /** The user's home when it lives under /tmp (a test's, a CI's): readable, as the rest of the system is. */
  home?: string;
  /** The CLI's temporary folder (`TMPDIR`) when it is not /tmp: writable. */
  tmpdir?: string;
  /** `worktrees.link`: the installed dependencies read-only, their `.cache` writable, as for the built-in agent's commands (dependencyMounts.ts). */
  links?: readonly string[];
  /** Programs the session starts (the CLI, Ralph's own CLI for `ralph mcp`): their installation readable when it lives under /tmp. */
  programs?: readonly string[];
}

/** The folder a program is installed in: above its `node_modules` when it is in one, else its own folder (links resolved). */
export function installRoot(program: string): string {
  let file = path.resolve(program);
  try {
    file = realpathSync(file);
  } catch {
    // not there: its folder as named
  }
  const at = file.indexOf(`${path.sep}node_modules${path.sep}`);
  return at > 0 ? file.slice(0, at) : path.dirname(file);
}

/** The bwrap options (before `--` and the CLI's command line) of one session. Paths that do not exist are left out. */
export function cliBwrapArgs(plan: CliSandboxPlan): string[] {
  const cwd = path.resolve(plan.cwd);
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', PRIVATE_TMP];
  const readable = [...privateTmpBinds(cwd)];
  const seen = [plan.home, ...(plan.programs ?? []).map(installRoot)];
  for (const dir of seen) if (dir && isUnder(path.resolve(dir), PRIVATE_TMP) && !readable.some((r) => isUnder(dir, r))) readable.push(dir);
  for (const dir of readable) if (existsSync(dir)) args.push('--ro-bind', dir, dir);
  args.push('--bind', cwd, cwd);
  for (const name of ['.git', '.ralph']) {
    const target = path.join(cwd, name);
    if (existsSync(target)) args.push('--ro-bind', target, target);
  }
  const dependencies = dependencyMounts(cwd, plan.links ?? []);
  for (const dir of dependencies.readOnly) args.push('--ro-bind', dir, dir);
  for (const cache of dependencies.caches) args.push('--bind', cache.source, cache.target);
  // the CLI's own git works (commit, branch), what makes git run programs stays read-only
  args.push(...approvedGitBinds(cwd));
  const writable = [plan.progressFile, ...plan.state, plan.sessionDir, plan.tmpdir !== PRIVATE_TMP ? plan.tmpdir : undefined];
  for (const place of writable) if (place && existsSync(place)) args.push('--bind', place, place);
  args.push('--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--die-with-parent', '--new-session');
  args.push('--chdir', cwd);
  return args;
}

/**
 * Makes what the plan binds exist (bind mounts need a source): the CLI's state folders (it would
 * make them itself) and the empty progress notes file, as the built-in agent's sandbox does.
 */
export async function prepareCliSandbox(plan: CliSandboxPlan): Promise<void> {
  for (const dir of plan.state) {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 }).catch(() => undefined);
  }
  if (plan.progressFile) {
    await fs.mkdir(path.dirname(plan.progressFile), { recursive: true }).catch(() => undefined);
    await fs.writeFile(plan.progressFile, '', { flag: 'a' }).catch(() => undefined);
  }
}

/**
 * The command line of a wrapped session — bwrap, its options, then the CLI's own — its places
 * made first: the CLI's state folders from its environment, the session's folder, the task's notes.
 */
export async function sandboxedCommand(
  session: {
    adapter: Pick<AgentCliAdapter, 'stateDirs'>;
    env: Record<string, string>;
    cwd: string;
    command: string;
    mcp?: { args: string[] };
  },
  sessionDir: string,
  sandbox: { bwrap: string; progressFile?: string; links?: readonly string[] },
  args: readonly string[],
): Promise<{ file: string; args: string[] }> {
  const home = session.env.HOME || os.homedir();
  const plan: CliSandboxPlan = {
    cwd: session.cwd,
    sessionDir,
    state: session.adapter.stateDirs(session.env, home),
    ...(sandbox.progressFile ? { progressFile: sandbox.progressFile } : {}),
    home,
    ...(session.env.TMPDIR ? { tmpdir: session.env.TMPDIR } : {}),
    ...(sandbox.links ? { links: sandbox.links } : {}),
    // the CLI, and Ralph's CLI script that `ralph mcp` and its hooks run
    programs: [session.command, ...(session.mcp?.args.slice(0, 1).filter((a) => path.isAbsolute(a)) ?? [])],
  };
  await prepareCliSandbox(plan);
  return { file: sandbox.bwrap, args: [...cliBwrapArgs(plan), '--', session.command, ...args] };
}
