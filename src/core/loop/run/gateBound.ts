import { availableParallelism } from 'node:os';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../gates/types';
import { machineIdleCores, treeCpuMs } from '../../util/processCpu';

/** `loop.maxConcurrentGates` as configured, else the machine's CPU count less one (at least 1). */
export function gateProcessLimit(configured: number | undefined): number {
  return configured ?? Math.max(1, availableParallelism() - 1);
}

/** The most gate processes the run's bound lets run at once: a configured value, else the default's ceiling (twice the CPU count). */
export function gatePlaces(configured: number | undefined): number {
  return configured ?? Math.max(gateProcessLimit(undefined), 2 * availableParallelism());
}

/**
 * How the default bound looks past its limit, while a gate waits: every `everyMs`, the CPU each
 * running gate's process tree used since the last look (`treeCpuMs`), and the machine's idle
 * cores (`idleCores`). When every running gate used under a quarter of a core — they wait on a
 * sleep, a server, the network — and half a core of the machine sat idle, the first in line
 * gets a place, one a look, up to `ceiling`. A gate whose process the runner does not tell (the
 * Tasks API's) or whose tree cannot be read counts as busy, so the limit holds then.
 */
export interface GateWatch {
  readonly ceiling: number;
  readonly everyMs: number;
  treeCpuMs(pid: number): Promise<number | undefined>;
  idleCores(): number;
}

/** A running gate under a quarter of a core over the last look is quiet. */
const QUIET_CORES = 0.25;
/** Half a core of the machine idle over the last look leaves room for one more quiet gate. */
const IDLE_ENOUGH = 0.5;

/** The bound a run gets: `loop.maxConcurrentGates` as configured holds exactly; the default also lets in gates while the running ones only wait. */
export function runGateBound(configured: number | undefined): GateBound {
  if (configured !== undefined) return new GateBound(configured);
  return new GateBound(gateProcessLimit(undefined), {
    ceiling: gatePlaces(undefined),
    everyMs: 100,
    treeCpuMs,
    idleCores: machineIdleCores(),
  });
}

/** A gate process holding a place: its tree's root once started, and its CPU at the last look (or none at its start) and when. */
interface Place {
  pid?: number;
  cpuMs?: number;
  at?: number;
  quiet: boolean;
}

/**
 * The run's bound on gate processes (`loop.maxConcurrentGates`, issue 34). Every gate run of the
 * run goes through it — an iteration's gates, a task's run at its base, its proof, a merged
 * check — so however many tasks are on their gates at once (their agent slots given to other
 * tasks meanwhile), at most `limit` gate processes run and the machine keeps room for the
 * agents. The others wait in line, first come first served; one stopped while it waits leaves
 * the line at once. It sits next to the process: a run the gate cache takes again waits for no
 * place, and the wait counts against no gate's timeout. With a `watch` (the default bound), gates
 * that only wait let more in, up to its ceiling (see `GateWatch`).
 */
export class GateBound {
  private running = 0;
  private readonly line: (() => void)[] = [];
  private readonly places = new Set<Place>();
  private looking = false;
  /** The most gate processes that ran at once, the runs that waited for a place, and those let in past the limit while the running gates only waited (for the tests and the bench). */
  readonly counts = { peak: 0, waited: 0, quietAdmitted: 0 };

  constructor(
    readonly limit: number,
    private readonly watch?: GateWatch,
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
    const place: Place = { quiet: false };
    this.places.add(place);
    const told = request.onStart;
    const onStart = (pid: number) => {
      // a process just started has used nothing yet: the next look measures it from here
      Object.assign(place, { pid, cpuMs: 0, at: Date.now() });
      told?.(pid);
    };
    try {
      return await inner.run(this.watch ? { ...request, onStart } : request);
    } finally {
      this.places.delete(place);
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
      this.look();
    });
  }

  /** While some wait, look every `everyMs`: quiet running gates and an idle half core let the first in. */
  private look(): void {
    const watch = this.watch;
    if (!watch || this.looking) return;
    this.looking = true;
    watch.idleCores();
    const next = () => {
      const timer = setTimeout(() => void once(), watch.everyMs);
      timer.unref?.();
    };
    const once = async () => {
      if (this.line.length === 0) {
        this.looking = false;
        return;
      }
      let quiet = true;
      for (const place of this.places) {
        const cpuMs = place.pid === undefined ? undefined : await watch.treeCpuMs(place.pid);
        const now = Date.now();
        const used = cpuMs !== undefined && place.cpuMs !== undefined ? cpuMs - place.cpuMs : undefined;
        const over = Math.max(1, now - (place.at ?? now));
        place.quiet = used !== undefined && used >= 0 && used < QUIET_CORES * over;
        Object.assign(place, { cpuMs, at: now });
        quiet &&= place.quiet;
      }
      const idle = watch.idleCores();
      if (quiet && idle >= IDLE_ENOUGH && this.running < watch.ceiling && this.line.length > 0) {
        this.counts.quietAdmitted++;
        this.line.shift()?.();
      }
      next();
    };
    next();
  }

  private take(): void {
    this.running++;
    this.counts.peak = Math.max(this.counts.peak, this.running);
  }

  /** A place is free: the first in line takes it at once (no one else gets in between) — unless quiet gates had let the run past its limit. */
  private leave(): void {
    this.running--;
    if (this.running < this.limit) this.line.shift()?.();
  }
}
