import { lstat } from 'node:fs/promises';
import * as net from 'node:net';
import * as path from 'node:path';
import { isUnder, mainWorkspaceOf } from '../commands/privateTmp';
import { runGit } from '../git/gitExec';
import type { TestCounts } from './parsers/types';
import { rootsOf } from './testLocations';

/**
 * A gate that cannot run where the task runs, for a reason no change of the agent fixes: it
 * writes where the sandbox makes the file system read-only, it needs a file of the working tree
 * that is not committed (so a task's worktree lacks it), it reaches the working tree through a
 * fixed path, or it needs a service or the network the sandbox does not give. Said at the task's
 * first gate run, with the setting to use, instead of iterating to the limit.
 *
 * No false alarms, by two rules. The evidence is checked, never only matched: a path named in the
 * output is looked up (outside the task's tree, or in the working tree and not tracked there), a
 * refused connection is tried from this process (a service listens on this machine). And the
 * evidence must explain the failure: the gate failed with no failing test (it crashed, or every
 * test passed and the command still failed), or every failing test's message carries it. A test
 * that fails on its own assertion, beside a tool's harmless warning, is never taken for this.
 */
export interface EnvironmentFault {
  /** The line of the output that shows it. */
  evidence: string;
  /** Why the gate cannot run there. */
  why: string;
  /** What to set or do instead. */
  remedy: string;
}

export interface EnvironmentContext {
  /** The gate's working folder: the workspace, or one of its worktrees (`.ralph/worktrees/<x>`). */
  cwd: string;
  /** The sandbox confined the run (commands.sandbox not off, and it works here). */
  sandboxed: boolean;
  /** `commands.network`. */
  network: boolean;
  /** `worktrees.link`: the installed dependencies. */
  links: readonly string[];
}

/** Where a gate ran: its tree, the workspace, and every spelling of each (given, real). */
interface Places {
  root: string;
  roots: string[];
  workspace: string;
  workspaces: string[];
  worktree: boolean;
  /** Every spelling of every dependency folder: in the tree, in the workspace, and their real paths. */
  dependencies: string[];
}

const MAX_PATHS = 40;
const MAX_PROBES = 3;

/** The environment fault a failed gate's output shows, checked; undefined when there is none (or it explains nothing). */
export async function diagnoseEnvironment(
  output: string,
  tests: TestCounts | undefined,
  ctx: EnvironmentContext,
): Promise<EnvironmentFault | undefined> {
  const places = placesOf(ctx);
  const lines = output.split('\n');
  const found = [
    ctx.sandboxed ? () => readOnlyWrite(lines, places) : undefined,
    places.worktree ? () => uncommittedFile(lines, places) : undefined,
    places.worktree ? () => workspacePath(lines, places) : undefined,
    ctx.sandboxed && !ctx.network ? () => unreachable(lines) : undefined,
  ];
  for (const look of found) {
    const fault = await look?.();
    if (fault && explains(tests, fault.tokens)) return fault.fault;
  }
  return undefined;
}

/** Whether the evidence explains the failure: no failing test at all, or every failing test's message names it. */
function explains(tests: TestCounts | undefined, tokens: readonly string[]): boolean {
  if (!tests || tests.failed === 0) return true;
  if (tests.failures.length < tests.failed) return false;
  return tests.failures.every((f) => tokens.some((t) => (f.message ?? '').includes(t) || f.name.includes(t)));
}

interface Found {
  fault: EnvironmentFault;
  /** What a failing test's message must carry for this to be its cause. */
  tokens: string[];
}

function placesOf(ctx: EnvironmentContext): Places {
  const cwd = path.resolve(ctx.cwd);
  const workspace = mainWorkspaceOf(cwd);
  const marker = path.join(workspace, '.ralph', 'worktrees');
  const rel = path.relative(marker, cwd);
  const worktree = rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
  const root = worktree ? path.join(marker, rel.split(path.sep)[0]) : workspace;
  const dependencies = ctx.links.flatMap((l) => [...rootsOf(path.join(root, l)), ...rootsOf(path.join(workspace, l))]);
  return { root, roots: rootsOf(root), workspace, workspaces: rootsOf(workspace), worktree, dependencies: [...new Set(dependencies)] };
}

const QUOTED_PATH = /['"`](\/[^'"`\n]+)['"`]/;
const ABS_PATHS = /(?:^|[\s'"`(=:,[])(\/[^\s'"`,:)\]]+)/g;

/** Absolute paths a line names (`file://` URLs too), without a trailing `:line:col` or punctuation. */
function pathsIn(line: string): string[] {
  return [...line.matchAll(ABS_PATHS)].map((m) => m[1].replace(/^\/+/, '/').replace(/[.;]+$/, '')).filter((p) => p.length > 1);
}

/** A write the sandbox refused (EROFS): where it went says why. */
function readOnlyWrite(lines: readonly string[], places: Places): Found | undefined {
  const line = lines.find((l) => /\bEROFS\b|Read-only file system/i.test(l));
  if (!line) return undefined;
  const target = QUOTED_PATH.exec(line)?.[1] ?? pathsIn(line)[0];
  const tokens = ['EROFS', 'read-only file system', 'Read-only file system'];
  const evidence = line.trim();
  if (target && places.dependencies.some((d) => isUnder(target, path.join(d, '.cache'))))
    return {
      tokens,
      fault: {
        evidence,
        why: `it writes ${target}, in the installed dependencies' cache folder, which is not writable here (a link to a read-only place, or a folder Ralph could not make)`,
        remedy: `Make node_modules/.cache a plain folder of the workspace, or set "commands.sandbox": "off" in .ralph/config.json (then nothing is read-only to commands)`,
      },
    };
  if (target && places.dependencies.some((d) => isUnder(target, d)))
    return {
      tokens,
      fault: {
        evidence,
        why: `it writes ${target}, inside the installed dependencies, which are read-only to the agent's commands and gates (all but their .cache folder, each task's own)`,
        remedy: `Make the tool keep what it writes under node_modules/.cache (its cache option), or set "commands.sandbox": "off" in .ralph/config.json (then nothing is read-only to commands)`,
      },
    };
  if (target && places.worktree && places.workspaces.some((w) => isUnder(target, w)) && !places.roots.some((r) => isUnder(target, r)))
    return {
      tokens,
      fault: {
        evidence,
        why: `it writes ${target}, in your working tree outside the task's worktree (a path to the workspace fixed in its configuration or code), which is read-only to a task's commands`,
        remedy: `Set "loop.maxParallel": 1 in .ralph/config.json (tasks then run one at a time in your working tree), or make that path relative`,
      },
    };
  return {
    tokens,
    fault: {
      evidence,
      why: `it writes ${target ?? 'a file'} outside the folder the sandbox lets commands write (the task's tree and a private /tmp, HOME=/tmp/home)`,
      remedy: `Make it write inside the project or under /tmp, or set "commands.sandbox": "off" in .ralph/config.json (then commands run with your own rights)`,
    },
  };
}

/** Absolute paths in the tree that the output names (and the targets of relative `Cannot find module` / ENOENT paths), with their lines. */
function namedInTree(lines: readonly string[], places: Places): { file: string; line: string }[] {
  const named: { file: string; line: string }[] = [];
  const add = (file: string, line: string) => {
    if (named.length < MAX_PATHS && !named.some((n) => n.file === file)) named.push({ file, line });
  };
  lines.forEach((line, i) => {
    for (const p of pathsIn(line)) if (places.roots.some((r) => isUnder(p, r))) add(p, line);
    const relative = /(?:Cannot find module|ENOENT[^'"]*)\s*['"](\.{0,2}\/?[^'"/][^'"]*)['"]/.exec(line)?.[1];
    if (!relative || path.isAbsolute(relative)) return;
    // node: `Require stack:` then `- /abs/file` names the file the relative path is relative to
    const from = lines
      .slice(i + 1, i + 6)
      .map((l) => /^\s*-\s+(\/\S+)/.exec(l)?.[1])
      .find(Boolean);
    if (from) add(path.resolve(path.dirname(from), relative), line);
    else if (!/Cannot find module/.test(line)) add(path.resolve(places.root, relative), line);
  });
  return named;
}

/** A file the gate needs that the working tree has, untracked, and the task's worktree lacks. */
async function uncommittedFile(lines: readonly string[], places: Places): Promise<Found | undefined> {
  for (const { file, line } of namedInTree(lines, places)) {
    const spelled = places.roots.find((r) => isUnder(file, r))!;
    const segments = path.relative(spelled, file).split(path.sep).filter(Boolean);
    if (segments.length === 0 || segments[0] === '.git' || segments[0] === '.ralph') continue;
    const top = await firstMissing(places.root, segments);
    if (!top) continue;
    if (!(await lstat(path.join(places.workspace, ...top.split('/'))).catch(() => undefined))) continue;
    const tracked = await runGit(places.workspace, ['ls-files', '-z', '--', `:(literal)${top}`]);
    if (tracked.code !== 0 || tracked.stdout !== '') continue;
    return {
      tokens: [top, file],
      fault: {
        evidence: line.trim(),
        why: `it needs ${top}, which is in your working tree but not committed (untracked or ignored), so a task's worktree does not have it`,
        remedy: `Add "${top}" to "worktrees.link" in .ralph/config.json (linked into every worktree, as node_modules is), commit it, or set "loop.maxParallel": 1 (tasks then run one at a time in your working tree)`,
      },
    };
  }
  return undefined;
}

/** The first of `segments`' leading paths (`a`, `a/b`, …) missing under `root`, or undefined when the whole path is there. */
async function firstMissing(root: string, segments: readonly string[]): Promise<string | undefined> {
  for (let i = 1; i <= segments.length; i++) {
    const rel = segments.slice(0, i).join('/');
    if (!(await lstat(path.join(root, ...segments.slice(0, i))).catch(() => undefined))) return rel;
  }
  return undefined;
}

/** A file of the working tree the gate reached from a task's worktree (not Ralph's, git's or the dependencies'). */
function workspacePath(lines: readonly string[], places: Places): Found | undefined {
  for (const line of lines) {
    for (const p of pathsIn(line)) {
      const spelled = places.workspaces.find((w) => isUnder(p, w) && p !== w);
      if (!spelled || places.dependencies.some((d) => isUnder(p, d))) continue;
      const first = path.relative(spelled, p).split(path.sep)[0];
      if (first === '.ralph' || first === '.git') continue;
      return {
        tokens: [p],
        fault: {
          evidence: line.trim(),
          why: `it reaches ${p} in your working tree instead of the task's worktree (a path to the workspace fixed in its configuration or code, or a configuration file found above the worktree)`,
          remedy: `Set "loop.maxParallel": 1 in .ralph/config.json (tasks then run one at a time in your working tree), or make that path relative`,
        },
      };
    }
  }
  return undefined;
}

const REFUSED = /\bECONNREFUSED\s+\[?(127\.\d+\.\d+\.\d+|::1|localhost)\]?:(\d+)/;
const NO_NETWORK = /\b(ENETUNREACH|EHOSTUNREACH|EAI_AGAIN)\b/;

/** A service on this machine the sandbox's own network cannot reach (tried from here), or no network at all. */
async function unreachable(lines: readonly string[]): Promise<Found | undefined> {
  let probes = 0;
  for (const line of lines) {
    const refused = REFUSED.exec(line);
    if (refused && probes < MAX_PROBES) {
      probes++;
      const [, host, port] = refused;
      if (await listening(host, Number(port)))
        return {
          tokens: ['ECONNREFUSED'],
          fault: {
            evidence: line.trim(),
            why: `it connects to ${host}:${port}, a service running on this machine, which sandboxed commands cannot reach (they have a network of their own, "commands.network": false)`,
            remedy: `Set "commands.network": true in .ralph/config.json (sandboxed commands then use this machine's network), or start the service from the gate's command`,
          },
        };
    }
    const none = NO_NETWORK.exec(line);
    if (none)
      return {
        tokens: [none[1]],
        fault: {
          evidence: line.trim(),
          why: `it needs the network (${none[1]}), which sandboxed commands do not have ("commands.network": false)`,
          remedy: `Set "commands.network": true in .ralph/config.json`,
        },
      };
  }
  return undefined;
}

/** Whether something accepts a TCP connection at host:port on this machine (within a second). */
function listening(host: string, port: number): Promise<boolean> {
  if (!(port > 0 && port < 65536)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** The whole sentence a person reads: the gate, where, why, the evidence, what to set. */
export function environmentMessage(
  gate: { name: string; command: string },
  fault: EnvironmentFault,
  where: { worktree: boolean; logPath?: string },
): string {
  const place = where.worktree ? "in a task's worktree" : 'here';
  const log = where.logPath ? ` (full output: ${where.logPath})` : '';
  return `the gate ${gate.name} (\`${gate.command}\`) cannot run ${place}: ${fault.why}. Its output: ${JSON.stringify(fault.evidence.slice(0, 300))}. ${fault.remedy}. It is not the task's doing, so the task stopped at its first run of the gates instead of iterating${log}`;
}

/** Whether `cwd` is one of the workspace's worktrees (`.ralph/worktrees/<x>`). */
export function inWorktree(cwd: string): boolean {
  return placesOf({ cwd, sandboxed: false, network: false, links: [] }).worktree;
}
