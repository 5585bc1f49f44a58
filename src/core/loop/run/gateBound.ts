import { availableParallelism } from 'node:os';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../gates/types';
import { idleCoresSampler } from '../../util/idleCores';

/** `loop.maxConcurrentGates` as configured, else the machine's CPU count less one (at least 1). */
export function gateProcessLimit(configured: number | undefined): number {
  return configured ?? Math.max(1, availableParallelism() - 1);
}

/**
 * The default bound's room beyond its limit: while gate runs wait in line, one more is let in
 * whenever the machine had CPU to spare over the last look — a gate that mostly waits (a sleep,
 * a server, the network) does not hold the others back, one that keeps its cores busy does.
 */
export interface SpareRoom {
  /** The most gate processes at once, the spare ones included. */
  most: number;
  /** Cores idle, on average, since the previous reading (`idleCoresSampler`). */
  idleCores: () => number;
  /** How often the line looks, which is also the least time between two places let in beyond the limit. */
  everyMs: number;
  /** The idle cores a look must see to let one more in. */
  needIdle: number;
}

/**
 * The run's bound: `loop.maxConcurrentGates` exactly when it is set; by default the CPU count
 * less one, and beyond it, up to four per core, one more each quarter second the machine had
 * half a core idle (on 2 cores: a second suite of one busy core, many gates that sleep).
 */
export function runGateBound(configured: number | undefined): GateBound {
  if (configured !== undefined) return new GateBound(configured);
  const limit = gateProcessLimit(undefined);
  return new GateBound(limit, {
    most: Math.max(limit, 4 * availableParallelism()),
    idleCores: idleCoresSampler(),
    everyMs: 250,
    needIdle: 0.5,
  });
}

/**
 * The run's bound on gate processes (`loop.maxConcurrentGates`, issue 34). Every gate run of the
 * run goes through it — an iteration's gates, a task's run at its base, its proof, a merged
 * check — so however many tasks are on their gates at once (their agent slots given to other
 * tasks meanwhile), at most `limit` gate processes run and the machine keeps room for the
 * agents. The others wait in line, first come first served; one stopped while it waits leaves
 * the line at once. With `spare` room (the default bound), the first in line is also let in
 * beyond the limit when a look at the machine finds CPU to spare. It sits next to the process: a
 * run the gate cache takes again waits for no place, and the wait counts against no gate's timeout.
 */
export class GateBound {
  private running = 0;
  private readonly line: (() => void)[] = [];
  private looking: ReturnType<typeof setInterval> | undefined;
  /** The most gate processes that ran at once, the runs that waited for a place, those let in beyond the limit (for the tests and the bench). */
  readonly counts = { peak: 0, waited: 0, spare: 0 };

  constructor(
    readonly limit: number,
    private readonly spare?: SpareRoom,
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
      this.lookForSpare();
    });
  }

  /** While runs wait (and the bound has spare room), a look every `everyMs`: one more in when the machine had CPU to spare. */
  private lookForSpare(): void {
    const spare = this.spare;
    if (!spare || this.looking) return;
    spare.idleCores(); // the first look counts from now
    this.looking = setInterval(() => {
      if (this.line.length === 0) {
        clearInterval(this.looking);
        this.looking = undefined;
        return;
      }
      if (this.running < spare.most && spare.idleCores() >= spare.needIdle) {
        this.counts.spare++;
        this.line.shift()?.();
      }
    }, spare.everyMs);
    this.looking.unref?.();
  }

  private take(): void {
    this.running++;
    this.counts.peak = Math.max(this.counts.peak, this.running);
  }

  /** A place is free: the first in line takes it at once (no one else gets in between) — a place within the limit. */
  private leave(): void {
    this.running--;
    if (this.running < this.limit) this.line.shift()?.();
  }
}
