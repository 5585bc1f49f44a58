/**
 * The one way every test tier waits: until `probe` gives a value (neither undefined nor false),
 * looking every `intervalMs`; past `timeoutMs` it fails naming what was awaited (and the probe's
 * last error, when `tolerateErrors` let it keep looking). The condition decides, the bound only
 * ends a wait that would never end — it is for a shared, slow machine, not a speed check.
 */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** A probe that throws is tried again (a page still loading); otherwise its error ends the wait. */
  tolerateErrors?: boolean;
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  options: WaitOptions | number = {},
): Promise<T> {
  const { timeoutMs = 20_000, intervalMs = 50, tolerateErrors = false } = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      if (!tolerateErrors) throw error;
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
