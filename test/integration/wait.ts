/**
 * Waits in the extension host until `probe` gives a value (neither undefined nor false),
 * looking every 50 ms; past `timeoutMs` it fails naming what was awaited. The bound is for a
 * shared, slow machine, not a speed check.
 */
export async function waitFor<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
