import * as assert from 'node:assert/strict';
import { StopRequestedError } from '../../../src/core/errors';
import { MAX_RETRY_DELAY_MS, abortableSleep, backoffDelayMs, defaultSleep, retryAfterMs, retryDelayMs } from '../../../src/core/llm/retry';

const headers = (values: Record<string, string>) => new Headers(values);

describe('retry helpers', () => {
  describe('retryAfterMs', () => {
    it('reads Retry-After in seconds, fractions included', () => {
      assert.equal(retryAfterMs(headers({ 'retry-after': '2' })), 2000);
      assert.equal(retryAfterMs(headers({ 'retry-after': '0.5' })), 500);
    });

    it('reads Retry-After as an HTTP date relative to now', () => {
      const now = Date.parse('Wed, 21 Oct 2026 07:28:00 GMT');
      assert.equal(retryAfterMs(headers({ 'retry-after': 'Wed, 21 Oct 2026 07:28:07 GMT' }), now), 7000);
      assert.equal(retryAfterMs(headers({ 'retry-after': 'Wed, 21 Oct 2026 07:27:00 GMT' }), now), 0);
    });

    it('prefers retry-after-ms', () => {
      assert.equal(retryAfterMs(headers({ 'retry-after-ms': '120', 'retry-after': '5' })), 120);
    });

    it('ignores absent or unusable values', () => {
      assert.equal(retryAfterMs(undefined), undefined);
      assert.equal(retryAfterMs(headers({})), undefined);
      assert.equal(retryAfterMs(headers({ 'retry-after': 'soon' })), undefined);
      assert.equal(retryAfterMs(headers({ 'retry-after': '-3' })), undefined);
      assert.equal(retryAfterMs(headers({ 'retry-after-ms': 'x', 'retry-after': '1' })), 1000);
    });
  });

  describe('delays', () => {
    it('doubles the backoff and draws from its upper half', () => {
      assert.equal(
        backoffDelayMs(1, () => 0),
        500,
      );
      assert.equal(
        backoffDelayMs(1, () => 1),
        1000,
      );
      assert.equal(
        backoffDelayMs(3, () => 1),
        4000,
      );
      assert.equal(
        backoffDelayMs(20, () => 1),
        30_000,
      );
    });

    it('uses the server delay when given, capped at 60 s', () => {
      assert.equal(retryDelayMs(1, headers({ 'retry-after': '7' })), 7000);
      assert.equal(retryDelayMs(1, headers({ 'retry-after': '86400' })), MAX_RETRY_DELAY_MS);
      assert.equal(
        retryDelayMs(2, undefined, () => 1),
        2000,
      );
    });
  });

  describe('sleeping', () => {
    it('defaultSleep rejects at once when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      await assert.rejects(defaultSleep(60_000, controller.signal), StopRequestedError);
    });

    it('abortableSleep ends a sleep that ignores the signal when it aborts', async () => {
      const controller = new AbortController();
      const waiting = abortableSleep(() => new Promise<void>(() => {}), 60_000, controller.signal);
      controller.abort(new StopRequestedError('stop now'));
      await assert.rejects(waiting, { name: 'StopRequestedError', message: 'stop now' });
    });

    it('abortableSleep resolves when the sleep does', async () => {
      const asked: number[] = [];
      await abortableSleep(async (ms) => void asked.push(ms), 1234, new AbortController().signal);
      assert.deepEqual(asked, [1234]);
    });
  });
});
