import { promises as fs } from 'node:fs';
import { cpus } from 'node:os';

/**
 * CPU time of a process tree, from Linux's /proc: the process and every descendant, each with
 * the children it has waited for (`utime + stime + cutime + cstime`), in milliseconds. A child
 * that ended has its time in its parent's `cutime`, so the sum only grows while the tree lives.
 * Undefined where it cannot tell: another OS, a process that is gone.
 */
export async function treeCpuMs(pid: number): Promise<number | undefined> {
  if (process.platform !== 'linux') return undefined;
  const seen = new Set<number>();
  let ticks = 0;
  const visit = async (p: number): Promise<boolean> => {
    if (seen.has(p)) return true;
    seen.add(p);
    const stat = await fs.readFile(`/proc/${p}/stat`, 'utf8').catch(() => undefined);
    if (!stat) return false;
    // the command name (field 2) may hold spaces and parentheses: fields are counted after its last `)`
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks += [11, 12, 13, 14].reduce((sum, i) => sum + (Number(fields[i]) || 0), 0);
    const threads = await fs.readdir(`/proc/${p}/task`).catch(() => [] as string[]);
    for (const thread of threads) {
      const children = await fs.readFile(`/proc/${p}/task/${thread}/children`, 'utf8').catch(() => '');
      for (const child of children.split(' ').filter(Boolean)) await visit(Number(child));
    }
    return true;
  };
  if (!(await visit(pid))) return undefined;
  // USER_HZ: 100 on every Linux architecture Node runs on
  return ticks * 10;
}

/** The machine's idle cores between two calls, from the OS's per-core times (`os.cpus()`). */
export function machineIdleCores(): () => number {
  const read = () => {
    let idle = 0;
    let total = 0;
    for (const core of cpus()) {
      const t = core.times;
      idle += t.idle;
      total += t.user + t.nice + t.sys + t.idle + t.irq;
    }
    return { idle, total };
  };
  let last = read();
  return () => {
    const now = read();
    const total = now.total - last.total;
    const idle = now.idle - last.idle;
    last = now;
    return total > 0 ? (idle / total) * cpus().length : 0;
  };
}
