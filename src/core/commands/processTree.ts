import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';

/**
 * Every command carries a unique value of this variable; the tree is found through it in
 * /proc even after a child left the process group with `setsid` (or was re-parented).
 */
export const COMMAND_MARKER_ENV = 'RALPH_COMMAND_ID';

const IS_WINDOWS = process.platform === 'win32';

/**
 * Ends a process tree: SIGTERM to the group led by `pid` and to every process carrying the
 * command's marker (`COMMAND_MARKER_ENV`), SIGKILL once `graceMs` is over if anything is still
 * alive, then a check that nothing is left. On Windows, `taskkill /T /F`.
 */
export async function killProcessTree(pid: number | undefined, marker: string, graceMs: number): Promise<void> {
  if (pid === undefined) return;
  if (IS_WINDOWS) {
    await new Promise<void>((done) => {
      const killer = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true, stdio: 'ignore' });
      killer.once('error', () => done());
      killer.once('exit', () => done());
    });
    return;
  }
  const alive = async (): Promise<number[]> => [...((await groupHasLiveMember(pid)) ? [-pid] : []), ...(await markedProcesses(marker))];
  let left = await alive();
  if (left.length === 0) return;
  signalAll(pid, left, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await sleep(50);
    left = await alive();
    if (left.length === 0) return;
  }
  // SIGKILL until nothing carries the marker: a process may fork while we look.
  for (let round = 0; round < 20 && left.length > 0; round++) {
    signalAll(pid, left, 'SIGKILL');
    await sleep(50);
    left = await alive();
  }
}

function signalAll(pgid: number, pids: readonly number[], signal: NodeJS.Signals): void {
  signalGroup(pgid, signal);
  for (const pid of pids) {
    if (pid <= 0) continue;
    try {
      process.kill(pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** Live (non-zombie) processes whose environment carries the marker; Linux only (/proc). */
async function markedProcesses(marker: string): Promise<number[]> {
  if (process.platform !== 'linux') return [];
  const needle = Buffer.from(`${COMMAND_MARKER_ENV}=${marker}\0`);
  const found: number[] = [];
  let names: string[];
  try {
    names = (await fs.readdir('/proc')).filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const name of names) {
    const pid = Number(name);
    if (pid === process.pid) continue;
    const environ = await fs.readFile(`/proc/${name}/environ`).catch(() => undefined);
    if (!environ || environ.indexOf(needle) < 0) continue;
    const stat = await fs.readFile(`/proc/${name}/stat`, 'utf8').catch(() => '');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    if (stat && state !== 'Z') found.push(pid);
  }
  return found;
}

/** Sends `signal` to the process group led by `pid`; false when the group no longer exists. */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether anything in the group still runs. Zombies don't count: in containers whose PID 1
 * never reaps (no --init), killed grandchildren stay zombies and would hold the group "alive"
 * for the whole grace period.
 */
async function groupHasLiveMember(pgid: number): Promise<boolean> {
  if (!signalGroup(pgid, 0)) return false;
  if (process.platform !== 'linux') return true;
  try {
    const pids = (await fs.readdir('/proc')).filter((name) => /^\d+$/.test(name));
    for (const pid of pids) {
      const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      // Fields after "(comm)": state, ppid, pgrp, …
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    }
    return false;
  } catch {
    return true;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((done) => setTimeout(done, ms));
}
