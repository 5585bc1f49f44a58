import { availableParallelism, cpus } from 'node:os';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../gates/types';

/** `loop.maxConcurrentGates` as configured, else the machine's CPU count less one (at least 1). */
export function gateProcessLimit(configured: number | undefined): number {
  return configured ?? Math.max(1, availableParallelism() - 1);
}

/**
 * How the default bound looks past its limit: while half a core of the machine or more sat idle over
 * the last look (the gates running mostly wait — a sleep, a server, the network), one more gate
 * in line gets a place, up to `ceiling`. `idleCores` tells the idle cores since its last call.
 */
export interface IdleCores {
  readonly ceiling: number;
  readonly everyMs: number;
  idleCores(): number;
}

/** Half a core idle since the last look lets one more gate in (a whole core let too few in: `npm run bench`, slow gate). */
const IDLE_ENOUGH = 0.5;

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

/**
 * The bound a run gets: `loop.maxConcurrentGates` as configured holds exactly; the default
 * (CPU count less one) also lets in one more gate while a core sits idle, up to twice the CPU
 * count — on 2 cores a limit of 1 would otherwise line up gates that only wait.
 */
export function runGateBound(configured: number | undefined): GateBound {
  if (configured !== undefined) return new GateBound(configured);
  return new GateBound(gateProcessLimit(undefined), { ceiling: gatePlaces(undefined), everyMs: 100, idleCores: machineIdleCores() });
}

/** The most gate processes the run's bound lets run at once: a configured value, else the default's ceiling. */
export function gatePlaces(configured: number | undefined): number {
  return configured ?? Math.max(gateProcessLimit(undefined), 2 * availableParallelism());
}

/**
 * The run's bound on gate processes (`loop.maxConcurrentGates`, issue 34). Every gate run of the
 * run goes through it — an iteration's gates, a task's run at its base, its proof, a merged
 * check — so however many tasks are on their gates at once (their agent slots given to other
 * tasks meanwhile), at most `limit` gate processes run and the machine keeps room for the
 * agents. The others wait in line, first come first served; one stopped while it waits leaves
 * the line at once. It sits next to the process: a run the gate cache takes again waits for no
 * place, and the wait counts against no gate's timeout. With `idle` (the default bound), the
 * first in line also gets a place while half a core or more sat idle over the last look, up to its
 * ceiling: one at a time, so the newcomer's CPU shows in the next look before another comes in.
 */
export class GateBound {
  private running = 0;
  private readonly line: (() => void)[] = [];
  private looking: ReturnType<typeof setInterval> | undefined;
  /** The most gate processes that ran at once, the runs that waited for a place, and those let in past the limit by an idle core (for the tests and the bench). */
  readonly counts = { peak: 0, waited: 0, idleAdmitted: 0 };

  constructor(
    readonly limit: number,
    private readonly idle?: IdleCores,
  ) {}

  /**
   * `inner` with this bound in front of it (every gate runner of the run shares the one bound).
   * It tells `inner`'s environment as its own: the run's gate cache, in front of it, keys by it.
   */
  around(inner: GateRunner): GateRunner {
    return {
      run: (request) => this.run(inner, request),
      ...(inner.environment ? { environment: (request: GateRunRequest) => inner.environment!(request) } : {}),
    };
  }

  /** Gate runs waiting for a place now. */
  get waiting(): number {
    return this.line.length;
  }

  private async run(inner: GateRunner, request: GateRunRequest): Promise<GateRunResult> {
    if (!(await this.enter(request.signal)))
      return {
        exitCode: null,
        timedOut: false,
        aborted: true,
        output: 'stopped while waiting for a place among the gate processes',
        durationMs: 0,
      };
    try {
      return await inner.run(request);
    } finally {
      this.leave();
    }
  }

  /** True once a place is taken; false when `signal` stopped the wait. */
  private enter(signal: AbortSignal | undefined): Promise<boolean> {
    if (signal?.aborted) return Promise.resolve(false);
    if (this.running < this.limit) {
      this.take();
      return Promise.resolve(true);
    }
    this.counts.waited++;
    return new Promise<boolean>((resolve) => {
      const go = () => {
        signal?.removeEventListener('abort', gone);
        this.take();
        resolve(true);
      };
      const gone = () => {
        const at = this.line.indexOf(go);
        if (at >= 0) this.line.splice(at, 1);
        resolve(false);
      };
      this.line.push(go);
      signal?.addEventListener('abort', gone, { once: true });
      this.lookForIdleCores();
    });
  }

  /** While some wait, look at the machine every `everyMs`: a core idle since the last look lets the first in. */
  private lookForIdleCores(): void {
    const idle = this.idle;
    if (!idle || this.looking) return;
    idle.idleCores();
    this.looking = setInterval(() => {
      if (this.line.length === 0) {
        clearInterval(this.looking);
        this.looking = undefined;
        return;
      }
      if (idle.idleCores() >= IDLE_ENOUGH && this.running < idle.ceiling) {
        this.counts.idleAdmitted++;
        this.line.shift()?.();
      }
    }, idle.everyMs);
    this.looking.unref?.();
  }

  private take(): void {
    this.running++;
    this.counts.peak = Math.max(this.counts.peak, this.running);
  }

  /** A place is free: the first in line takes it at once (no one else gets in between) — unless idle cores had let the run past its limit. */
  private leave(): void {
    this.running--;
    if (this.running < this.limit) this.line.shift()?.();
  }
}
