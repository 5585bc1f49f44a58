import * as assert from 'node:assert/strict';
import { type AttemptFailure, withRetries } from '../../../src/core/llm/retry';
import type { RetryNotice } from '../../../src/core/llm/types';

interface Fault extends AttemptFailure {
  reason: string;
}

class Flaky extends Error {
  constructor(readonly failure: Fault) {
    super(failure.reason);
  }
}

/** The loop every model adapter retries with (OpenAI-compatible and the editor's models). */
describe('withRetries', () => {
  const slept: number[] = [];
  const loop = (maxRetries: number, heard: RetryNotice[][], signal?: AbortSignal) => ({
    maxRetries,
    signal,
    sleep: async (ms: number) => void slept.push(ms),
    onRetry: heard.map((list) => (notice: RetryNotice) => list.push(notice)),
    classify: (error: unknown) => (error instanceof Flaky ? error.failure : undefined),
    notice: (failure: Fault) => ({ reason: failure.reason, fault: 'outage' as const }),
    fail: (failure: Fault, attempts: number) => new Error(`gave up after ${attempts}: ${failure.reason}`),
  });
  beforeEach(() => (slept.length = 0));

  it("tells every listener (the client's and the request's) of each retry, then answers", async () => {
    const client: RetryNotice[] = [];
    const receipt: RetryNotice[] = [];
    let calls = 0;
    const answer = await withRetries(loop(3, [client, receipt]), async () => {
      if (++calls < 3)
        throw new Flaky({
          retryable: true,
          reason: `reset ${calls}`,
          headers: { get: (name) => (name === 'retry-after-ms' ? '250' : null) },
        });
      return 'ok';
    });
    assert.equal(answer, 'ok');
    assert.deepEqual(
      client.map((n) => [n.attempt, n.maxRetries, n.delayMs, n.reason, n.fault]),
      [
        [1, 3, 250, 'reset 1', 'outage'],
        [2, 3, 250, 'reset 2', 'outage'],
      ],
    );
    assert.deepEqual(receipt, client);
    assert.deepEqual(slept, [250, 250], "the server's delay");
  });

  it("ends with fail() when the failure is final or the retries are spent; rethrows what is not the provider's", async () => {
    await assert.rejects(
      withRetries(loop(1, []), async () => {
        throw new Flaky({ retryable: true, reason: 'down' });
      }),
      /gave up after 2: down/,
    );
    await assert.rejects(
      withRetries(loop(5, []), async () => {
        throw new Flaky({ retryable: false, reason: 'bad key' });
      }),
      /gave up after 1: bad key/,
    );
    await assert.rejects(
      withRetries(loop(5, []), async () => {
        throw new TypeError('a bug of ours');
      }),
      TypeError,
    );
  });

  it('stops at once when the request is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    let calls = 0;
    await assert.rejects(
      withRetries(loop(5, [], controller.signal), async () => ++calls),
      /aborted/,
    );
    assert.equal(calls, 0);
  });
});
