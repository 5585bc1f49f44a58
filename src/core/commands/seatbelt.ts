import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SandboxSpec } from './commandPort';
import { CREDENTIAL_DIRS, CREDENTIAL_FILES } from './credentialRules';

/** macOS's sandbox front end (Seatbelt), present on every macOS since 10.5. */
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** Where a sandboxed command's HOME and temp files live on macOS (there is no private /tmp there). */
export interface SeatbeltPlaces {
  /** The user's real home: its credential stores are unreadable inside. */
  home: string;
  /** The command's own temp folder (HOME and TMPDIR inside it), writable. */
  temp: string;
}

/**
 * The Seatbelt (SBPL) profile of one sandboxed command on macOS, the way other coding agents
 * confine their commands there. Everything is allowed first (processes, Mach services, sysctl
 * reads — what compilers and test runners need; Seatbelt gives the last matching rule the
 * say), then narrowed:
 * - writes: only the workspace (or the task's worktree) without its `.git`, `.ralph` and
 *   installed dependencies (their `.cache` folder writable, shared by the tasks), the task's
 *   progress notes, the command's temp folder and the system temp folders, and the harmless
 *   devices; with `gitWritable` (a person approved the command) the repository's data
 *   too, its hooks, config and info/ still not;
 * - reads: none of the credential stores under the user's home (`~/.ssh`, `~/.aws`, `.netrc`…);
 * - network: none, unless `commands.network` (local Unix sockets stay usable).
 * Untested on macOS by this project's suite (it runs on Linux): the profile's text is.
 */
export function seatbeltProfile(spec: SandboxSpec, places: SeatbeltPlaces, gitDirs: readonly string[] = []): string {
  const root = real(spec.root);
  const home = real(places.home);
  const lines = [
    '(version 1)',
    '(allow default)',
    '',
    ';; writes: the workspace (not its .git and .ralph), the temp folders, the harmless devices',
    '(deny file-write*)',
  ];
  lines.push(
    `(allow file-write* (require-all (subpath ${q(root)}) (require-not (subpath ${q(path.join(root, '.git'))})) (require-not (literal ${q(path.join(root, '.git'))})) (require-not (subpath ${q(path.join(root, '.ralph'))}))))`,
  );
  // installed dependencies read-only but for their caches (one per workspace here: Seatbelt cannot mount a task's own)
  if (spec.readOnlyPaths?.length) lines.push(`(deny file-write* ${spec.readOnlyPaths.map((d) => `(subpath ${q(real(d))})`).join(' ')})`);
  if (spec.cacheBinds?.length) lines.push(`(allow file-write* ${spec.cacheBinds.map((c) => `(subpath ${q(real(c.target))})`).join(' ')})`);
  const temps = [...new Set([real(places.temp), real(os.tmpdir()), '/private/tmp', '/private/var/folders'])];
  lines.push(`(allow file-write* ${temps.map((t) => `(subpath ${q(t)})`).join(' ')})`);
  lines.push(
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
  );
  for (const file of spec.writablePaths) lines.push(`(allow file-write* (literal ${q(real(file))}))`);
  for (const dir of spec.writableDirs ?? []) lines.push(`(allow file-write* (subpath ${q(real(dir))}))`);
  if (spec.gitWritable && gitDirs.length > 0) {
    lines.push('', ";; a person approved this command: the repository's data is writable, what makes git run programs is not");
    lines.push(`(allow file-write* ${gitDirs.map((d) => `(subpath ${q(real(d))})`).join(' ')})`);
    const locked = gitDirs.flatMap((d) => ['hooks', 'config', 'config.worktree', 'info'].map((name) => path.join(real(d), name)));
    lines.push(`(deny file-write* ${locked.map((p) => `(literal ${q(p)}) (subpath ${q(p)})`).join(' ')})`);
  }
  lines.push('', ';; credentials under the home folder are not read');
  const stores = [
    ...CREDENTIAL_DIRS.map((d) => `(subpath ${q(path.join(home, d))})`),
    ...CREDENTIAL_FILES.map((f) => `(literal ${q(path.join(home, f))})`),
  ];
  lines.push(`(deny file-read* ${stores.join(' ')})`);
  if (!spec.network) {
    lines.push('', ';; no network (Unix sockets on this machine excepted)');
    lines.push('(deny network-outbound (remote ip))', '(deny network-inbound (local ip))', '(deny network-bind (local ip))');
  }
  return `${lines.join('\n')}\n`;
}

/** An SBPL string literal. */
function q(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** Seatbelt matches real paths (`/tmp` is `/private/tmp` on macOS): links are resolved where the path exists. */
function real(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
}

/** The temp folder of a workspace's sandboxed commands on macOS (made when missing), with a HOME inside. */
export function seatbeltTemp(root: string): string {
  const dir = path.join(os.tmpdir(), `ralph-sandbox-${createHash('sha256').update(path.resolve(root)).digest('hex').slice(0, 12)}`);
  mkdirSync(path.join(dir, 'home'), { recursive: true });
  return dir;
}

/** Whether sandbox-exec works here: it exists and runs a trivial profile. */
export function probeSeatbelt(executable = SANDBOX_EXEC): Promise<{ available: boolean; reason: string }> {
  return new Promise((resolve) => {
    const child = spawn(executable, ['-p', '(version 1)(allow default)', '/usr/bin/true'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
    child.on('error', (error) => resolve({ available: false, reason: `sandbox-exec not found: ${error.message}` }));
    child.on('close', (code) =>
      resolve(
        code === 0
          ? { available: true, reason: 'sandbox-exec' }
          : { available: false, reason: `sandbox-exec fails here (exit ${code}): ${stderr.trim().split('\n')[0] ?? ''}` },
      ),
    );
  });
}
