/**
 * Pause/Resume for a run: the loop calls `wait()` between steps and iterations; while paused
 * it waits there (the current step is finished first), and a stop ends the wait at once.
 */
export class PauseGate {
  private paused = false;
  private waiters: (() => void)[] = [];

  get isPaused(): boolean {
    return this.paused;
  }

  pause(): boolean {
    if (this.paused) return false;
    this.paused = true;
    return true;
  }

  resume(): boolean {
    if (!this.paused) return false;
    this.paused = false;
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
