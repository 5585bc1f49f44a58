import { setTimeout as sleep } from 'node:timers/promises';

/** `promise`, or undefined as soon as `stop` fires. */
export function untilStopped<T>(promise: Promise<T | undefined>, stop: AbortSignal | undefined): Promise<T | undefined> {
  if (!stop) return promise;
  if (stop.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onStop = () => resolve(undefined);
    stop.addEventListener('abort', onStop, { once: true });
    void promise.then((value) => {
      stop.removeEventListener('abort', onStop);
      resolve(value);
    });
  });
}

/** Resolves after `ms`, or at once when `stop` fires; never rejects. */
export function sleepOrStop(ms: number, stop: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal: stop }).catch(() => undefined);
}
