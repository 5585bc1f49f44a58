/**
 * The machine's CPU time, from the OS (`/proc/stat`, Linux): what a run cost in CPU-seconds,
 * whoever spent them — the orchestrator, git, the gates' processes, the bench's model process —
 * and its CPU floor: that CPU spread over every core, the least wall time the run could take on
 * this machine. On a shared machine the figure includes the neighbours' work: indicative only.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import * as os from 'node:os';

let ticksPerSecond: number | undefined;

/** Busy clock ticks of all cores so far (user, nice, system, irq, softirq, steal); undefined where there is no /proc/stat. */
export function busyTicks(): number | undefined {
  let line: string;
  try {
    line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  } catch {
    return undefined;
  }
  const [, user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).map(Number);
  return user + nice + system + irq + softirq + (steal || 0);
}

function hz(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** Starts counting; `stop()` gives the machine's CPU-seconds since (NaN where the OS does not say). */
export function machineCpu(): { stop(): number } {
  const start = busyTicks();
  return {
    stop: () => {
      const end = busyTicks();
      return start === undefined || end === undefined ? Number.NaN : (end - start) / hz();
    },
  };
}

/** A run's wall time over its CPU floor (its CPU-seconds spread over every core of the machine). */
export function floorRatio(wallMs: number, cpuSeconds: number): number {
  return wallMs / 1000 / (cpuSeconds / os.cpus().length);
}
