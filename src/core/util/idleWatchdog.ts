/**
 * Fires once when it has not been re-armed for `ms`: a model's stream that went quiet half-way
 * (a provider's own timeout often stops at the response headers). `fired` says whether it did,
 * so that the caller tells a timeout from the end or the abort it caused.
 */
export class IdleWatchdog {
  private timer: NodeJS.Timeout | undefined;
  fired = false;

  constructor(
    private readonly ms: number,
    private readonly onIdle: () => void,
  ) {}

  rearm(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.fired = true;
      this.onIdle();
    }, this.ms);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
