import assert from 'node:assert/strict';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import type { SafeguardWarning } from '../../../src/core/ports';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

const idle = (text = 'still working'): Step => ({ content: text, usage: { prompt_tokens: 1000, completion_tokens: 10 } });
const analyst: Step = {
  content: 'Root cause: the function returns the wrong value.',
  usage: { prompt_tokens: 500, completion_tokens: 50 },
};

describe('escalation, council, stuck detection, budgets and warnings (observed from the server)', function () {
  this.timeout(60000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('with ladder [a, b, c] and threshold 2, asks a, a, b, b, c, then the council in parallel, and logs the escalations', async () => {
    h = await makeLoopHarness([
      idle(),
      idle(),
      idle(),
      idle(),
      idle(),
      analyst,
      analyst,
      analyst,
      { content: '1. Fix greet.\n2. Run the tests.' },
      idle(),
    ]);
    await h.configure({
      llm: { models: ['a', 'b', 'c'] },
      loop: { maxIterations: 6 },
      escalation: { threshold: 2, councilAfter: 1 },
      gates: [{ name: 'tests', command: 'echo "1 passed, 1 failed"; exit 1', kind: 'tests', required: true }],
    });
    const id = await h.addTask({ complexity: 1 });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');

    const models = chatRequests(h.server).map((r) => r.model);
    assert.deepEqual(models.slice(0, 5), ['a', 'a', 'b', 'b', 'c']);
    assert.deepEqual(models.slice(5, 8).sort(), ['a', 'b', 'c'], 'three analysts');
    assert.equal(models[8], 'c', 'the synthesizer is the top model');
    assert.equal(models[9], 'c', 'the next iteration stays on the top model');
    const analystTimes = chatRequests(h.server)
      .slice(5, 8)
      .map((r) => r.time);
    assert.ok(Math.max(...analystTimes) - Math.min(...analystTimes) < 1000, 'the analysts were asked together');
    assert.match(requestText(chatRequests(h.server)[9]), /Bug council plan[\s\S]*1\. Fix greet/);

    assert.deepEqual(
      eventsOf(h.events, 'escalation').map((e) => [e.iteration, e.from, e.to]),
      [
        [2, 'a', 'b'],
        [4, 'b', 'c'],
      ],
    );
    assert.equal(eventsOf(h.events, 'council.started').length, 1);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /iteration 2: a → b/);
    assert.match(final, /bug council plan/);
    assert.match(final, /\| a \| 3 \|/, 'model a: two iterations and one analyst call');
    // the receipt: the council's four calls (three analysts, the synthesizer) apart from the orchestrator's, on the iteration that convened it
    const receipt = (await new CheckpointStore(h.paths).load(id))?.receipt;
    assert.equal(receipt?.byRole.orchestrator.calls, 6);
    assert.equal(receipt?.byRole.council.calls, 4);
    assert.ok((receipt?.byRole.council.promptTokens ?? 0) > 1500, 'three analysts at 500 prompt tokens, and the synthesizer');
    assert.equal(receipt?.byIteration['5'].calls, 5);
    assert.equal(receipt?.byIteration['6'].calls, 1);
    assert.match(final, /\| council \| 4 \| /);
  });

  it('flags the same failing test three iterations running as stuck and escalates at once', async () => {
    h = await makeLoopHarness([idle(), idle(), idle(), analyst, analyst, { content: 'plan' }, idle()]);
    await h.ws.write('fail.test.js', "require('node:test')('always fails', () => { throw new Error('nope'); });\n");
    h.ws.git('add', '-A');
    h.ws.git('commit', '-qm', 'failing test');
    await h.configure({
      llm: { models: ['a', 'b'] },
      loop: { maxIterations: 4 },
      escalation: { threshold: 5, councilAfter: 5 },
      gates: [{ name: 'tests', command: 'node --test', kind: 'tests' }],
    });
    // the task names the failing test: it is its to fix (a failure it did not name would be pre-existing)
    await h.addTask({ complexity: 1, prompt: 'Make the test "always fails" pass.' });
    await h.runner().run();
    const escalations = eventsOf(h.events, 'escalation');
    assert.equal(escalations.length, 1);
    assert.equal(escalations[0].iteration, 3);
    assert.match(escalations[0].reason, /stuck: the same failing tests 3 iterations running: always fails/);
    assert.deepEqual(
      chatRequests(h.server).map((r) => r.model),
      ['a', 'a', 'a', 'a', 'b', 'b', 'b'],
    );
  });

  it('halts on a budget cap no more than one call past it, with state saved', async () => {
    h = await makeLoopHarness([idle(), idle(), idle(), idle(), idle()]);
    await h.configure({
      llm: { models: ['a'], prices: { a: { input: 1000, output: 0 } } },
      budget: { maxCostUsd: 2.5 },
      loop: { maxIterations: 10 },
    });
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'halted');
    assert.match(summary.results[0].reason, /run budget reached: \$3\.0000 of \$2\.5 spent/);
    assert.equal(chatRequests(h.server).length, 3, '$1 a call: the third call crosses $2.50, no fourth is made');
    const budget = eventsOf(h.events, 'budget').at(-1);
    assert.equal(budget?.costUsd, 3);
    assert.equal((await h.store.get(id)).status, 'halted');
  });

  it('fires the safeguard warnings at the right iterations and applies the answers', async () => {
    h = await makeLoopHarness([idle(), idle(), idle(), idle(), idle(), idle(), idle(), idle()]);
    await h.configure({
      llm: { models: ['a'] },
      loop: { maxIterations: 6 },
      escalation: { councilAfter: 100 },
      safeguards: { noCommitWarnIterations: 2, iterationWarnRatio: 0.5 },
    });
    const id = await h.addTask({ maxIterations: 6 });
    const asked: SafeguardWarning[] = [];
    const runner = h.runner({
      safeguards: {
        decide: async (warning) => {
          asked.push(warning);
          const firstRatio = warning.code === 'iteration-ratio' && asked.filter((w) => w.code === 'iteration-ratio').length === 1;
          return firstRatio ? { action: 'increase', by: 2 } : { action: 'continue' };
        },
      },
    });
    const summary = await runner.run();
    assert.equal(summary.results[0].status, 'timeout');
    // iteration 1 commits the new progress notes; no commit after it: warned at 3, 5, 7.
    // max 6 at ratio 0.5 → warned at 3 and raised to 8, whose own threshold (4) warns once more
    assert.deepEqual(
      asked.map((w) => [w.code, w.iteration, w.maxIterations]),
      [
        ['no-commits', 3, 6],
        ['iteration-ratio', 3, 6],
        ['iteration-ratio', 4, 8],
        ['no-commits', 5, 8],
        ['no-commits', 7, 8],
      ],
    );
    assert.equal((await h.store.get(id)).maxIterations, 8, 'raised once by 2');
    assert.equal(chatRequests(h.server).length, 8);
    assert.equal(eventsOf(h.events, 'warning.answered').length, 5);
  });

  it('never runs a denied command, and asks before a gated one', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'run_command', arguments: { command: 'touch denied-marker' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'rm -rf src; touch rm-marker' } }] },
      { toolCalls: [{ name: 'run_command', arguments: { command: 'git push --force origin main; echo pushed > push-marker' } }] },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    await h.configure({ commands: { deny: ['touch *'] } });
    await h.addTask();
    const asked: string[] = [];
    await h.runner({ approval: { approve: async (request) => (asked.push(request.detail), false) } }).run();
    for (const marker of ['denied-marker', 'rm-marker', 'push-marker']) assert.equal(h.ws.exists(marker), false, marker);
    const results = eventsOf(h.events, 'tool.result').filter((r) => r.tool === 'run_command');
    assert.deepEqual(
      results.map((r) => r.ok),
      [false, false, false],
    );
    assert.deepEqual(asked, ['git push --force origin main; echo pushed > push-marker']);
    const toolMessages = chatRequests(h.server)
      .slice(1, 4)
      .map((r) => String(r.body?.messages?.at(-1)?.content));
    assert.match(toolMessages[0], /refused \(refused by commands\.deny \(touch \*\)\)/);
    assert.match(toolMessages[1], /recursive delete of src/);
    assert.match(toolMessages[2], /not approved/);
  });
});
