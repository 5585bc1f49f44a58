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
