import { readFileSync } from 'node:fs';

/** Alive and not a zombie (an init that never reaps would otherwise keep killed pids "alive"). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

/** Waits, bounded (5 s), for a killed process to disappear; returns whether it did. Not a timing assertion. */
export async function waitUntilGone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isAlive(pid); i++) await new Promise((done) => setTimeout(done, 50));
  return !isAlive(pid);
}

/**
 * The pid of a process that has ended and can never be another one: above Linux's highest
 * possible pid (2^22) and macOS's (99,999). A pid taken from a child that just exited is reused
 * within seconds on a busy machine (pid_max is often 32,768), and a lock naming it would then
 * name a live stranger.
 */
export const ENDED_PID = 4_194_305;

/**
 * A command's time limit (`NodeCommandRunner`'s `timeLimit`) that runs out once `condition`
 * holds (looked at every 10 ms) — the processes a test wants killed have started — instead of
 * after a fixed time, which a loaded machine can spend before they even start.
 */
export function limitWhen(condition: () => boolean): (expire: () => void) => () => void {
  return (expire) => {
    const looking = setInterval(() => {
      if (!condition()) return;
      clearInterval(looking);
      expire();
    }, 10);
    return () => clearInterval(looking);
  };
}
