import assert from 'node:assert/strict';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { waitFor } from '../../helpers/waitFor';

const write: Step = { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } }] };
const complete: Step = {
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'hello.txt contains hi' } }],
};

describe('Pause cancels the model request in flight (scripted server)', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('a request that never answers is cancelled by Pause and sent again, the same, after Resume', async () => {
    h = await makeLoopHarness();
    await h.configure({ loop: { maxParallel: 1 }, llm: { requestTimeoutMs: 600_000, maxRetries: 0 } });
    await h.addTask();
    h.server.push({ fault: 'hang' }, write, complete);
    const runner = h.runner();
    const run = runner.run();
    await waitFor('the model request in flight', () => chatRequests(h.server).length === 1);
    runner.pause();
    await waitFor('the request-paused warning', () => eventsOf(h.events, 'warning').some((w) => w.code === 'request-paused'));
    assert.equal(chatRequests(h.server).length, 1, 'nothing is asked while paused');
    runner.resume();
    const summary = await run;

    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const requests = chatRequests(h.server);
    assert.equal(requests.length, 3, 'the cancelled request, the same one again, then the next step');
    assert.deepEqual(requests[1].body?.messages, requests[0].body?.messages, 'the request sent after Resume is the one Pause cancelled');
    const paused = eventsOf(h.events, 'warning').find((w) => w.code === 'request-paused');
    assert.match(paused?.message ?? '', /orchestrator: paused — the model request in flight was cancelled; it is sent again on Resume/);
    assert.equal(eventsOf(h.events, 'model.retry').length, 0, 'a pause is not a failed call to retry');
  });
});
