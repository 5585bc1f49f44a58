/** Backoff, Retry-After parsing and abortable sleep for the model client's own retries. */

import { StopRequestedError, RalphError } from '../errors';

/** Longest the client ever waits between two attempts, whatever the server asks for. */
export const MAX_RETRY_DELAY_MS = 60_000;
const BASE_DELAY_MS = 1_000;
const MAX_BACKOFF_MS = 30_000;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * Exponential backoff with jitter for retry number `attempt` (1-based): the nominal delay
 * doubles each time (1 s, 2 s, 4 s … capped at 30 s) and the wait is drawn from its upper half,
 * so concurrent clients spread out without any retry coming much earlier than planned.
 */
export function backoffDelayMs(attempt: number, random: () => number = Math.random): number {
  const nominal = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(nominal * (0.5 + 0.5 * random()));
}

/** A minimal view of response headers: the SDK hands us a WHATWG `Headers`. */
export interface HeaderSource {
  get(name: string): string | null;
}

/**
 * The delay a server asked for, from `retry-after-ms` (milliseconds, non-standard but sent by
 * OpenAI and Azure) or `Retry-After` (seconds or an HTTP date). Undefined when absent or unusable.
 */
export function retryAfterMs(headers: HeaderSource | undefined, now: number = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '') {
    const value = Number(ms);
    if (Number.isFinite(value) && value >= 0) return Math.round(value);
  }
  const header = headers.get('retry-after');
  if (header === null || header.trim() === '') return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  const date = Date.parse(header);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** The wait before retry `attempt`: the server's Retry-After when given, else backoff; capped. */
export function retryDelayMs(attempt: number, headers?: HeaderSource, random?: () => number): number {
  const asked = retryAfterMs(headers);
  return Math.min(MAX_RETRY_DELAY_MS, asked ?? backoffDelayMs(attempt, random));
}

/** The error an aborted model call ends with: the signal's own reason when it is ours. */
export function abortError(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  if (reason instanceof RalphError) return reason;
  return new StopRequestedError('model request aborted');
}

/** Real sleep that ends early (rejecting) when the signal aborts. */
export const defaultSleep: Sleep = (ms, signal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(abortError(signal));
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/**
 * Runs `sleep` but stops waiting the moment `signal` aborts, even when an injected sleep
 * ignores the signal (tests inject sleeps that only record the delay).
 */
export function abortableSleep(sleep: Sleep, ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return sleep(ms);
  if (signal.aborted) return Promise.reject(abortError(signal));
  let onAbort: () => void = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([sleep(ms, signal), aborted]).finally(() => signal.removeEventListener('abort', onAbort));
}
