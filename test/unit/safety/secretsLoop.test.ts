import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, TEST_KEY, TEST_KEY_ENV } from '../helpers/loopHarness';

const call = (name: string, args: Record<string, unknown>): Step => ({ toolCalls: [{ name, arguments: args }] });
const complete: Step = call('ralph_complete', { summary: 'done', promiseEvidence: 'hello.txt contains hi' });

describe('no secret in reach (the loop against the scripted server)', function () {
  if (process.platform === 'win32') return;
  let h: LoopHarness;
  afterEach(async () => {
    delete process.env.RALPH_LOOP_TEST_TOKEN;
    await h?.cleanup();
  });

  it('printenv of the API key shows nothing; a file holding it is redacted; the key never reaches the server, the events or the run log', async () => {
    process.env.RALPH_LOOP_TEST_TOKEN = 'tok-loop-secret-987654321';
    h = await makeLoopHarness([
      call('run_command', { command: `printenv ${TEST_KEY_ENV}; printenv RALPH_LOOP_TEST_TOKEN; echo "printed"` }),
      call('read_file', { path: 'leak.txt' }),
      call('write_file', { path: 'hello.txt', content: 'hi' }),
      complete,
    ]);
    await h.configure({ gates: [{ name: 'env', command: `echo "gate sees [$${TEST_KEY_ENV}]"; cat leak.txt`, kind: 'custom' }] });
    await fs.writeFile(h.ws.path('leak.txt'), `the key is ${TEST_KEY} and the token tok-loop-secret-987654321\n`);
    const id = await h.addTask();
    const summary = await h.runner().run();

    assert.equal((await h.store.get(id)).status, 'done');
    const requests = chatRequests(h.server);
    assert.ok(requests.length >= 4);
    for (const request of requests) {
      const body = JSON.stringify(request.body);
      assert.ok(!body.includes(TEST_KEY), `request ${request.seq} carries the API key`);
      assert.ok(!body.includes('tok-loop-secret-987654321'), `request ${request.seq} carries the token`);
    }
    const printed = JSON.stringify(requests[1].body);
    assert.match(printed, /printed/);
    assert.match(JSON.stringify(requests[2].body), /\[REDACTED\]/);
    const gate = eventsOf(h.events, 'gate.finished')[0];
    assert.ok(gate, 'the gate ran');
    const all = JSON.stringify(h.events) + (await fs.readFile(summary.logFile, 'utf8'));
    assert.ok(!all.includes(TEST_KEY), 'the key is in an event or the run log');
    assert.ok(!all.includes('tok-loop-secret-987654321'), 'the token is in an event or the run log');
    // The file holding the key stays on disk, out of the history; the rest is committed.
    assert.equal(h.ws.git('ls-files', 'leak.txt'), '');
    assert.equal(h.ws.git('ls-files', 'hello.txt'), 'hello.txt');
    assert.ok(!h.ws.git('log', '-p', '--all').includes(TEST_KEY));
    assert.ok(h.ws.exists('leak.txt'));
    assert.ok(eventsOf(h.events, 'warning').some((w) => w.code === 'secret-withheld' && w.message.includes('leak.txt')));
  });
});
