import * as os from 'node:os';

/** All cores' busy and idle milliseconds so far (the OS's own counters: /proc/stat on Linux). */
function cpuTimes(): { busy: number; idle: number } {
  let busy = 0;
  let idle = 0;
  for (const { times } of os.cpus()) {
    busy += times.user + times.nice + times.sys + times.irq;
    idle += times.idle;
  }
  return { busy, idle };
}

/**
 * How many of the machine's cores sat idle, on average, between one reading and the next —
 * whoever kept the others busy (this process, its gates, the user's editor, a neighbour). The
 * first reading counts from the sampler's creation. NaN where the OS tells no CPU times.
 */
export function idleCoresSampler(): () => number {
  let last = cpuTimes();
  return () => {
    const now = cpuTimes();
    const busy = now.busy - last.busy;
    const idle = now.idle - last.idle;
    last = now;
    const cores = os.cpus().length;
    return busy + idle > 0 ? (idle / (busy + idle)) * cores : Number.NaN;
  };
}
