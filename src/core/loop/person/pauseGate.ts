/**
 * Pause/Resume for a run: the loop calls `wait()` between steps and iterations; while paused
 * it waits there, and a stop ends the wait at once. A model request in flight when Pause is
 * pressed is cancelled (`signal`) and asked again after Resume; a running tool or gate finishes.
 */
export class PauseGate {
  private paused = false;
  private waiters: (() => void)[] = [];
  private pausing = new AbortController();

  get isPaused(): boolean {
    return this.paused;
  }

  /**
   * Aborts when Pause is pressed: a model request in flight is cancelled (its partial answer
   * dropped) and asked again on Resume, instead of running on while the person waits.
   */
  get signal(): AbortSignal {
    return this.pausing.signal;
  }

  pause(): boolean {
    if (this.paused) return false;
    this.paused = true;
    this.pausing.abort();
    return true;
  }

  resume(): boolean {
    if (!this.paused) return false;
    this.paused = false;
    this.pausing = new AbortController();
    for (const wake of this.waiters.splice(0)) wake();
    return true;
  }

  /** Resolves at once when not paused; otherwise on resume or when `signal` aborts. */
  async wait(signal?: AbortSignal): Promise<void> {
    if (!this.paused || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const wake = () => {
        signal?.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.push(wake);
      signal?.addEventListener('abort', wake, { once: true });
    });
  }
}
