import { availableParallelism } from 'node:os';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../gates/types';

/** `loop.maxConcurrentGates` as configured, else the machine's CPU count less one (at least 1). */
export function gateProcessLimit(configured: number | undefined): number {
  return configured ?? Math.max(1, availableParallelism() - 1);
}

/**
 * The run's bound on gate processes (`loop.maxConcurrentGates`, issue 34). Every gate run of the
 * run goes through it — an iteration's gates, a task's run at its base, its proof, a merged
 * check — so however many tasks are on their gates at once (their agent slots given to other
 * tasks meanwhile), at most `limit` gate processes run and the machine keeps room for the
 * agents. The others wait in line, first come first served; one stopped while it waits leaves
 * the line at once. It sits next to the process: a run the gate cache takes again waits for no
 * place, and the wait counts against no gate's timeout.
 */
export class GateBound {
  private running = 0;
  private readonly line: (() => void)[] = [];
  /** The most gate processes that ran at once, and the runs that waited for a place (for the tests and the bench). */
  readonly counts = { peak: 0, waited: 0 };

  constructor(readonly limit: number) {}

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
    });
  }

  private take(): void {
    this.running++;
    this.counts.peak = Math.max(this.counts.peak, this.running);
  }

  /** A place is free: the first in line takes it at once (no one else gets in between). */
  private leave(): void {
    this.running--;
    this.line.shift()?.();
  }
}
