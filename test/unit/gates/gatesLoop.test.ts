import assert from 'node:assert/strict';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

const complete = (summary = 'done'): Step => ({
  toolCalls: [{ name: 'ralph_complete', arguments: { summary, promiseEvidence: 'tests pass' } }],
});

const GREET_TEST = `const test = require('node:test');
const assert = require('node:assert/strict');
const { greet } = require('./greet');
test('greets Ada by name', () => assert.equal(greet('Ada'), 'Hello, Ada!'));
test('greets with an exclamation mark', () => assert.match(greet('x'), /!$/));
`;

const FIX_GREET = {
  title: 'Fix greet',
  prompt: 'greet(name) must return "Hello, <name>!"; make greet.test.js pass.',
  promise: 'node --test passes',
};

/** A workspace whose greet.js fails its two tests, and a model that claims COMPLETE, then fixes it, then claims again. */
async function greetWithABug(): Promise<LoopHarness> {
  const harness = await makeLoopHarness([
    complete('claims done too early'),
    { toolCalls: [{ name: 'write_file', arguments: { path: 'greet.js', content: 'exports.greet = (name) => `Hello, ${name}!`;\n' } }] },
    complete('fixed greet'),
  ]);
  await harness.ws.write('greet.js', "exports.greet = (name) => 'Hi ' + name;\n");
  await harness.ws.write('greet.test.js', GREET_TEST);
  harness.ws.git('add', '-A');
  harness.ws.git('commit', '-qm', 'greet with a bug');
  return harness;
}

describe('quality gates in the loop (real commands, scripted model)', function () {
  this.timeout(60000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('does not accept COMPLETE while a real test fails, names the failing test next iteration, and accepts it once fixed', async () => {
    h = await greetWithABug();
    await h.configure({ gates: [{ name: 'tests', command: 'node --test', kind: 'tests', required: true }] });
    // the failing tests are the task's: it names their file (failures it does not name would be pre-existing)
    const id = await h.addTask(FIX_GREET);

    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
    );
    assert.equal((await h.store.get(id)).iterations, 2);

    const requests = chatRequests(h.server);
    const secondIteration = requestText(requests[1]);
    assert.match(secondIteration, /Your COMPLETE was not accepted/);
    assert.match(secondIteration, /failing test: greets Ada by name/);
    assert.match(secondIteration, /failing test: greets with an exclamation mark/);

    const gateEvents = eventsOf(h.events, 'gate.finished');
    assert.deepEqual(
      gateEvents.map((e) => [e.iteration, e.passed]),
      [
        [1, false],
        [2, true],
      ],
    );
    assert.deepEqual(gateEvents[0].tests, {
      passed: 0,
      failed: 2,
      total: 2,
      failing: ['greets Ada by name', 'greets with an exclamation mark'],
    });

    const report1 = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report1, /## Decision: ITERATE/);
    assert.match(
      report1,
      /\| tests \| tests \| yes \| ✗ FAIL \| 0\/2 tests passing, 2 failing (?:\(taken from an earlier run on the same tree\) )?\(2 failing at the task's base too, held against the task\) \|/,
    );
    assert.match(report1, /`greets Ada by name`/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /Status: \*\*COMPLETE\*\* \(done\) — fixed greet/);
    assert.match(final, /\| model-a \| 3 \|/, 'three model calls on model-a');
    assert.match(final, /\*\*Modified: 1\*\*\n- `greet\.js`/);
    assert.match(summary.results[0].reportFile ?? '', /final\.md$/);
  });

  it('halts the task on a critical security finding, with the finding in the report', async () => {
    h = await makeLoopHarness([complete()]);
    const sarif = {
      version: '2.1.0',
      runs: [
        {
          tool: { driver: { name: 'scanner', rules: [{ id: 'SQLI-1', properties: { 'security-severity': '9.8' } }] } },
          results: [
            {
              ruleId: 'SQLI-1',
              level: 'error',
              message: { text: 'SQL injection in login query' },
              locations: [{ physicalLocation: { artifactLocation: { uri: 'src/login.js' } } }],
            },
          ],
        },
      ],
    };
    await h.ws.write('scan.sarif', JSON.stringify(sarif));
    await h.configure({ gates: [{ name: 'security', command: 'cat scan.sarif', kind: 'security', required: true }] });
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'halted');
    assert.match(summary.results[0].reason, /critical security finding.*SQL injection/);
    const task = await h.store.get(id);
    assert.match(task.blockedReason ?? '', /SQL injection/);
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /\*\*critical\*\* SQL injection in login query/);
    assert.match(report, /## Decision: HALT/);
  });

  it('lets a failing optional gate hold COMPLETE back at most its maxIterations, never blocking', async () => {
    h = await makeLoopHarness([complete('first'), complete('second')]);
    await h.configure({
      gates: [
        { name: 'tests', command: 'echo "3 passed, 0 failed"', kind: 'tests', required: true },
        { name: 'perf', command: 'echo too slow; exit 1', kind: 'custom', required: false, maxIterations: 1 },
      ],
    });
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    assert.equal((await h.store.get(id)).iterations, 2);
    assert.match(requestText(chatRequests(h.server)[1]), /Optional gates still fail \(perf\)/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /\| perf \| no \| ✗ FAIL \|/);
  });

  it('keeps iterating when the gates pass but the agent gives no signal', async () => {
    h = await makeLoopHarness([{ content: 'did some work <ralph>PROGRESS:80</ralph>' }, complete()]);
    await h.configure({ gates: [{ name: 'tests', command: 'echo "1 passed, 0 failed"', kind: 'tests', required: true }] });
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    assert.match(
      requestText(chatRequests(h.server)[1]),
      /required gates pass, but the previous iteration ended without a completion signal/,
    );
  });

  it('with loop.fixTasks, keeps a failing required gate as a linked fix task, cancelled once the task passes it', async () => {
    h = await greetWithABug();
    await h.configure({ loop: { fixTasks: true }, gates: [{ name: 'tests', command: 'node --test', kind: 'tests', required: true }] });
    const id = await h.addTask(FIX_GREET);
    let afterFirst: { status: string; prompt: string } | undefined;
    h.bus.subscribe((event) => {
      if (event.type === 'iteration.finished' && event.iteration === 1) {
        void h.store.get(`${id}-fix-tests`).then(
          (t) => (afterFirst = t),
          () => undefined,
        );
      }
    });
    const summary = await h.runner().run({ taskId: id });
    assert.equal(summary.results[0].status, 'done');
    assert.equal(afterFirst?.status, 'todo');
    assert.match(afterFirst?.prompt ?? '', /failing test: greets Ada by name/);
    const fix = await h.store.get(`${id}-fix-tests`);
    assert.equal(fix.status, 'cancelled');
    assert.equal(fix.blockedReason, `resolved by ${id}`);
    assert.equal(fix.type, 'bugfix');
  });
});
