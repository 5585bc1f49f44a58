import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { PINNED_HEADER, SUMMARY_HEADER } from '../../../src/core/agent/compaction';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { openAI, openRouter } from '../../fixtures/providerErrors';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText, TEST_KEY, TEST_KEY_ENV } from '../helpers/loopHarness';

const complete: Step = {
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote hello.txt', promiseEvidence: 'hello.txt contains hi' } }],
};
const writeHello: Step = { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi' } }] };

/** The last user message of a recorded request. */
function lastUser(request: { body?: { messages?: { role: string; content?: unknown }[] } }): string {
  const message = [...(request.body?.messages ?? [])].reverse().find((m) => m.role === 'user');
  return typeof message?.content === 'string' ? message.content : '';
}

describe('model faults in the loop (scripted server, provider-shaped errors)', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it("authentication: the task halts at once naming the key's source, never the key; the run stops and later tasks stay todo", async () => {
    h = await makeLoopHarness([openAI.auth(`${TEST_KEY.slice(0, 8)}****cret`), complete]);
    const first = await h.addTask({ title: 'first' });
    const second = await h.addTask({ title: 'second' });
    const summary = await h.runner().run();

    assert.deepEqual(
      summary.results.map((r) => `${r.taskId}:${r.status}`),
      [`${first}:halted`],
    );
    const task = await h.store.get(first);
    assert.match(task.blockedReason ?? '', /authentication failed/);
    assert.ok(task.blockedReason?.includes(`the environment variable ${TEST_KEY_ENV}`), task.blockedReason);
    assert.equal(task.iterations, 1, 'no second iteration against a bad key');
    assert.equal((await h.store.get(second)).status, 'todo');
    assert.match(summary.reason, /the run stopped and 1 task not started stays todo/);
    assert.equal(chatRequests(h.server).length, 1, 'not retried');
    const faults = eventsOf(h.events, 'model.fault');
    assert.deepEqual(
      faults.map((f) => `${f.fault}:${f.action}`),
      ['auth:halt'],
    );
    assert.equal(eventsOf(h.events, 'task.finished')[0].fault, 'auth', 'the editor offers Set API Key on it');
    const everything = JSON.stringify(h.events);
    assert.ok(!everything.includes(TEST_KEY), 'the key is in no event');
    assert.ok(!everything.includes('****cret'), 'nor the masked form the provider echoed');
  });

  it('parallel agents: a quota halt starts no further agent; the tasks not started stay todo', async () => {
    h = await makeLoopHarness([openRouter.credits(), openRouter.credits(), complete, complete]);
    await h.configure({ loop: { maxParallel: 2 } });
    const ids = [await h.addTask({ title: 'a' }), await h.addTask({ title: 'b' }), await h.addTask({ title: 'c' })];
    const summary = await h.runner().run();
    assert.deepEqual(summary.results.map((r) => r.status).sort(), ['halted', 'halted']);
    assert.equal((await h.store.get(ids[2])).status, 'todo');
    assert.match(summary.reason, /\(quota or credits exhausted\): HTTP 402 Insufficient credits.*; no new agents started/);
    assert.equal(eventsOf(h.events, 'warning').filter((w) => w.code === 'provider-halt').length, 1);
    assert.equal(eventsOf(h.events, 'warning').filter((w) => w.code === 'autopilot-stalled').length, 0);
  });

  it("quota (OpenRouter 402) without a fallback: halted with the provider's message, not retried", async () => {
    h = await makeLoopHarness([openRouter.credits(), complete]);
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'halted');
    assert.match(
      summary.results[0].reason,
      /\(quota or credits exhausted\): HTTP 402 Insufficient credits\. Add more using https:\/\/openrouter\.ai\/settings\/credits/,
    );
    assert.equal(chatRequests(h.server).length, 1);
    assert.equal(eventsOf(h.events, 'model.fault')[0].fault, 'quota');
    const checkpoint = await new CheckpointStore(h.paths).load(id);
    assert.match(checkpoint?.history.at(-1)?.error ?? '', /HTTP 402/, 'the iteration record (and its report) keeps the cause');
    const report = await fs.readFile(summary.results[0].reportFile!, 'utf8');
    assert.match(
      report,
      /## Errors and model faults\n- iteration 1 \(model-a\): .*\(quota or credits exhausted\): HTTP 402 Insufficient credits/,
    );
  });

  it('context length exceeded: the conversation is compacted and the request retried once', async () => {
    h = await makeLoopHarness([writeHello, openAI.contextLength(), { content: 'Summary: hello.txt was written with "hi".' }, complete]);
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    const faults = eventsOf(h.events, 'model.fault');
    assert.deepEqual(
      faults.map((f) => `${f.fault}:${f.action}`),
      ['context_length:compact-retry'],
    );
    assert.equal(eventsOf(h.events, 'compaction').length, 1);
    const requests = chatRequests(h.server);
    assert.equal(requests.length, 4);
    const retried = requestText(requests[3]);
    assert.ok(retried.includes(SUMMARY_HEADER) && retried.includes(PINNED_HEADER), 'the retry carries the summary and the pinned request');
    assert.equal((await h.store.get(id)).status, 'done');
  });

  it('context length exceeded twice: the iteration ends with the error (compacted once, not again)', async () => {
    h = await makeLoopHarness([writeHello, openAI.contextLength(), { content: 'Summary.' }, openAI.contextLength(), complete]);
    await h.configure({ loop: { maxIterations: 1 } });
    await h.addTask();
    await h.runner().run();
    const faults = eventsOf(h.events, 'model.fault');
    assert.deepEqual(
      faults.map((f) => `${f.fault}:${f.action}`),
      ['context_length:compact-retry', 'context_length:error'],
    );
    const finished = eventsOf(h.events, 'iteration.finished')[0];
    assert.equal(finished.outcome, 'error');
    assert.match(finished.error ?? '', /context length exceeded/);
  });

  it('content filtered (a reply stopped with finish_reason content_filter, then an Azure 400): fed back to the agent, which goes on', async () => {
    h = await makeLoopHarness([{ content: '', finishReason: 'content_filter' }, openAI.contentFilter(), writeHello, complete]);
    const id = await h.addTask();
    await h.runner().run();
    assert.equal((await h.store.get(id)).status, 'done');
    const requests = chatRequests(h.server);
    assert.match(lastUser(requests[1]), /content filter blocked the last reply/);
    assert.match(lastUser(requests[2]), /content filter blocked the last request/);
    assert.deepEqual(
      eventsOf(h.events, 'model.fault').map((f) => `${f.fault}:${f.action}`),
      ['content_filter:feedback', 'content_filter:feedback'],
    );
  });

  it('an outage with llm.fallback: the fallback serves the iteration, the switch is an event and a warning naming both models', async () => {
    h = await makeLoopHarness([openAI.outage(), writeHello, complete]);
    await h.configure({ llm: { maxRetries: 0, fallback: [{ model: 'model-backup' }] } });
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    const requests = chatRequests(h.server);
    assert.deepEqual(
      requests.map((r) => r.model),
      ['model-a', 'model-backup', 'model-backup'],
    );
    const [fallback] = eventsOf(h.events, 'model.fallback');
    assert.equal(fallback.kind, 'switch');
    assert.equal(fallback.from, 'model-a');
    assert.equal(fallback.to, 'model-backup');
    assert.equal(fallback.fault, 'outage');
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'model-switch');
    assert.match(
      warning?.message ?? '',
      /model model-a is failing \(provider outage: .*\); switched to the fallback model-backup, the primary is probed again in 300 s/,
    );
    const checkpoint = await new CheckpointStore(h.paths).load(id);
    assert.equal(checkpoint?.modelUsage['model-backup']?.calls, 2, "the fallback's calls are metered as the fallback model");
    assert.equal(checkpoint?.modelUsage['model-a'], undefined);
    const report = await fs.readFile(summary.results[0].reportFile!, 'utf8');
    assert.match(report, /`model-backup` \(llm\.fallback\) served 2 calls while the primary was failing/);
  });
});
