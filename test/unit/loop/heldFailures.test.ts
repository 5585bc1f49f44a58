import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { runCliInProcess } from '../helpers/cliHarness';
import { chatRequests, eventsOf, type LoopHarness, requestText } from '../helpers/loopHarness';
import { completeStep, projectHarness, RELEASE_TEST, TESTS_GATE, writeStep } from '../helpers/verdictProjects';

/**
 * Verdicts from evidence (issue 33) on a library that throws from its own source, a task whose
 * words never name its test, and a legacy red test that imports nothing the task touches: the
 * task's own failing test is never forgiven, the honest fix lands, a person decides what the
 * evidence does not settle. One at a time and in the default parallel configuration.
 */
const MONEY_JS = `exports.parseAmount = (text) => {
  const m = /^(\\d+)\\.(\\d{2})$/.exec(text);
  if (!m) throw new Error('not an amount: ' + text);
  return Number(m[1]) * 100 + Number(m[2]);
};
`;
const MONEY_FIXED_JS = MONEY_JS.replace('\\.(', '[.,](');
const MONEY_WRONG_JS = MONEY_JS.replace('\\.(', '[.;](');
const MONEY_TEST = `const test = require('node:test');
const assert = require('node:assert/strict');
const { parseAmount } = require('../src/money');

test('reads cents', () => assert.equal(parseAmount('12.50'), 1250));
test('reads amounts with a comma', () => assert.equal(parseAmount('12,50'), 1250));
`;
const PROJECT: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'money', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/money.js': MONEY_JS,
  'test/money.test.js': MONEY_TEST,
  'test/release.test.js': RELEASE_TEST,
};
/** Its words name neither the test nor its file, and its promise does not ask for the whole suite. */
const TASK = {
  title: 'European amounts',
  prompt: 'People in Europe write twelve and a half as 12,50. The parser must read such amounts like 12.50.',
  promise: 'Amounts written with a decimal comma are read correctly.',
};
const OWN_TEST = 'reads amounts with a comma';
const LEGACY = 'release date is in the future';

/** An agent that only reads and reports progress: one report, then it stops talking (the iteration ends). */
const progressAgent: Step = (request: RecordedRequest) =>
  (request.body?.messages ?? []).at(-1)?.role === 'tool'
    ? { content: 'Still reading the parser.' }
    : { toolCalls: [{ name: 'report_progress', arguments: { percent: 10, note: 'reading the parser' } }] };

for (const maxParallel of [1, 3]) {
  describe(`verdicts from evidence: the task's own failing test is never forgiven (maxParallel ${maxParallel})`, function () {
    this.timeout(180000);
    let h: LoopHarness;
    afterEach(async () => h?.cleanup());
    const config = (maxIterations: number) => ({ gates: [TESTS_GATE], loop: { maxParallel, maxIterations } });

    it('no change and COMPLETE: not done; the next iteration names the failing test and its error', async () => {
      h = await projectHarness([completeStep(), completeStep(), completeStep()], { files: PROJECT, config: config(3) });
      const id = await h.addTask(TASK);
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'timeout', summary.results[0].reason);
      const second = requestText(chatRequests(h.server)[1]);
      assert.match(second, /you have changed no file of the workspace since the task's base/);
      assert.match(second, new RegExp(`failing test: ${OWN_TEST}`));
      assert.match(second, /not an amount: 12,50/);
      assert.match(second, /it failed at the task's base too and is yours to fix: the task has changed no source file/);
      assert.notEqual((await h.store.get(id)).status, 'done');
    });

    it('a wrong edit of the code under test: held with the evidence, then the person is asked once (needs_help, never done)', async () => {
      h = await projectHarness([writeStep('src/money.js', MONEY_WRONG_JS), completeStep(), completeStep(), completeStep()], {
        files: PROJECT,
        config: config(5),
      });
      const id = await h.addTask(TASK);
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'needs_help', summary.results[0].reason);
      assert.equal((await h.store.get(id)).iterations, 2);
      const reason = summary.results[0].reason;
      assert.match(
        reason,
        new RegExp(`\`${OWN_TEST}\` \\(\`test/money\\.test\\.js\` imports \`src/money\\.js\`, which the task changed\\)`),
      );
      assert.match(reason, /--part-of-task.*--unrelated/s);
      const question = (await h.store.get(id)).questions?.at(-1);
      assert.equal(question?.kind, 'verdict');
      assert.deepEqual(question?.tests, [OWN_TEST]);
      // the legacy red test imports nothing the task touched: forgiven, with the evidence, in the same gate run
      // the second iteration's own gates (with maxParallel 3 a merged check ahead of them may finish later)
      const last = eventsOf(h.events, 'gate.finished')
        .filter((e) => e.taskId === id && e.iteration === 2)
        .at(-1)!;
      assert.deepEqual(
        last.baseFailures?.map((v) => [v.name, v.held]).sort(),
        [
          [LEGACY, false],
          [OWN_TEST, true],
        ].sort(),
      );
      assert.match(last.baseFailures?.find((v) => v.name === LEGACY)?.why ?? '', /it exercises only `test\/release\.test\.js`/);

      // the person says it is unrelated: a known failure of this task, and the next COMPLETE lands
      const answered = await runCliInProcess(['task', 'answer', id, '--unrelated'], h.ws.dir);
      assert.equal(answered.code, 0, answered.stderr);
      assert.deepEqual((await h.store.get(id)).knownFailures, [OWN_TEST]);
      const again = await h.runner().run();
      assert.equal(again.results[0].status, 'done', again.results[0].reason);
      assert.match(requestText(chatRequests(h.server).at(-1)!), /unrelated to this task: land without them/);
    });

    it('the honest fix lands in one iteration; the legacy red test is named pre-existing with its evidence', async () => {
      h = await projectHarness([writeStep('src/money.js', MONEY_FIXED_JS), completeStep()], { files: PROJECT, config: config(2) });
      const id = await h.addTask(TASK);
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
      assert.equal((await h.store.get(id)).iterations, 1);
      assert.equal(h.ws.git('show', 'HEAD:src/money.js'), MONEY_FIXED_JS.trimEnd());
      const finished = eventsOf(h.events, 'gate.finished').filter((g) => g.iteration === 1);
      assert.deepEqual(finished[0].preExisting, [LEGACY]);
      const status = await runCliInProcess(['status'], h.ws.dir);
      assert.match(status.stdout, /pre-existing failure.*release date is in the future/);
    });

    it('an agent that only reads and reports progress: the held failure counts, stuck detection fires before the limit', async () => {
      h = await projectHarness(
        Array.from({ length: 20 }, () => progressAgent),
        { files: PROJECT, config: { ...config(8), escalation: { threshold: 1, councilAfter: 10 } } },
      );
      const id = await h.addTask(TASK);
      const summary = await h.runner().run();
      assert.notEqual(summary.results[0].status, 'done');
      const records = JSON.parse(await fs.readFile(h.paths.state(id), 'utf8')) as { history: { failingTests: string[] }[] };
      assert.ok(
        records.history.every((r) => r.failingTests.includes(OWN_TEST)),
        'the held failure is a failure of every iteration',
      );
      assert.ok(
        eventsOf(h.events, 'escalation').length > 0 || /stuck|the same failing tests/.test(summary.results[0].reason),
        `the ladder climbed or stuck detection fired: ${summary.results[0].reason}`,
      );
    });
  });
}

/** The words of a task decide nothing: a task that names an unrelated red test file is asked about, never refused to its limit. */
describe('verdicts from evidence: words of the task', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('a task that names the legacy test file and says to leave it alone: asked once, then lands when the person says unrelated', async () => {
    h = await projectHarness([writeStep('src/money.js', MONEY_FIXED_JS), completeStep(), completeStep(), completeStep()], {
      files: PROJECT,
      config: { gates: [TESTS_GATE], loop: { maxIterations: 6 } },
    });
    const id = await h.addTask({ ...TASK, prompt: `${TASK.prompt} Leave test/release.test.js alone: it is known to be broken.` });
    const first = await h.runner().run();
    assert.equal(first.results[0].status, 'needs_help', first.results[0].reason);
    assert.equal((await h.store.get(id)).iterations, 2, 'asked at the second COMPLETE, not refused until the limit');
    assert.match(first.results[0].reason, /its test file `test\/release\.test\.js` is one the task's words name/);
    assert.equal((await runCliInProcess(['task', 'answer', id, '--unrelated', 'it was broken before'], h.ws.dir)).code, 0);
    const second = await h.runner().run();
    assert.equal(second.results[0].status, 'done', second.results[0].reason);
  });

  it('answers "part of this task": the agent is told to go on, and the question is not asked again', async () => {
    const steps: Step[] = [writeStep('src/money.js', MONEY_WRONG_JS), completeStep(), completeStep(), completeStep(), completeStep()];
    h = await projectHarness(steps, { files: PROJECT, config: { gates: [TESTS_GATE], loop: { maxIterations: 4 } } });
    const id = await h.addTask(TASK);
    assert.equal((await h.runner().run()).results[0].status, 'needs_help');
    assert.equal((await runCliInProcess(['task', 'answer', id, '--part-of-task'], h.ws.dir)).code, 0);
    const again = await h.runner().run();
    assert.equal(again.results[0].status, 'timeout', 'refused on: never done while its own test is red');
    const asked = (await h.store.get(id)).questions?.filter((q) => q.kind === 'verdict') ?? [];
    assert.equal(asked.length, 1);
    const lastRequest: RecordedRequest = chatRequests(h.server).at(-1)!;
    assert.match(requestText(lastRequest), /part of this task: keep working until these tests pass/);
  });

  it('refuses a verdict answer where the task asks no such question, and --unrelated with --part-of-task', async () => {
    h = await projectHarness([], { files: PROJECT, config: { gates: [TESTS_GATE] } });
    const id = await h.addTask(TASK);
    const both = await runCliInProcess(['task', 'answer', id, '--unrelated', '--part-of-task'], h.ws.dir);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give --part-of-task or --unrelated, not both/);
  });
});
