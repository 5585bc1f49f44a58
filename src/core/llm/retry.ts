/** Backoff, Retry-After parsing and abortable sleep for the model client's own retries. */

import { StopRequestedError, RalphError } from '../errors';
import type { RetryNotice } from './types';

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

/** What went wrong in one attempt, as far as retrying it goes. */
export interface AttemptFailure {
  retryable: boolean;
  /** The server's headers, for the delay it asked for (Retry-After). */
  headers?: HeaderSource;
}

export interface RetryLoop<F extends AttemptFailure> {
  maxRetries: number;
  sleep: Sleep;
  signal?: AbortSignal;
  /** Told of every retry about to be made: the client's own listener and the request's (the receipt's). */
  onRetry: readonly (((notice: RetryNotice) => void) | undefined)[];
  /** The failure an error stands for; undefined: not the provider's (a bug, or an answer already final), rethrown as it is. */
  classify(error: unknown): F | undefined;
  /** The retry notice's reason (and fault) for a failure. */
  notice(failure: F): Pick<RetryNotice, 'reason' | 'fault'>;
  /** The error a failure ends with when it is not retried (any more). */
  fail(failure: F, attempts: number): Error;
}

/**
 * Runs `attempt` until it answers: a retryable failure is tried again up to `maxRetries` times,
 * after the server's Retry-After or a backoff, each retry told first; an abort ends it at once.
 * Shared by the model adapters so every provider retries, and reports retries, the same way.
 */
export async function withRetries<T, F extends AttemptFailure>(loop: RetryLoop<F>, attempt: () => Promise<T>): Promise<T> {
  for (let n = 1; ; n++) {
    if (loop.signal?.aborted) throw abortError(loop.signal);
    try {
      return await attempt();
    } catch (error) {
      if (loop.signal?.aborted) throw abortError(loop.signal);
      const failure = loop.classify(error);
      if (!failure) throw error;
      if (!failure.retryable || n > loop.maxRetries) throw loop.fail(failure, n);
      const delayMs = retryDelayMs(n, failure.headers);
      const notice: RetryNotice = { attempt: n, maxRetries: loop.maxRetries, delayMs, ...loop.notice(failure) };
      for (const listener of loop.onRetry) listener?.(notice);
      await abortableSleep(loop.sleep, delayMs, loop.signal);
    }
  }
}
