import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GitService } from '../../../src/core/git/gitService';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { TaskActions } from '../../../src/core/record/actions';
import { chatRequests, eventsOf, type LoopHarness, requestText } from '../helpers/loopHarness';
import {
  cheatThenInsist,
  complete,
  GREETER_FIXED_JS,
  GREETER_TEST,
  greeterHarness,
  packageJson,
  secondIterationRequest,
  write,
} from '../helpers/greeterProject';

/**
 * Agents that weaken the gate instead of fixing `add` (which returns a - b): none of them may
 * end `done`, and the next iteration is told exactly what was weakened. Real git, real npm
 * and node:test, the scripted model server.
 */
describe('gate integrity: a gate cannot be passed by weakening it', function () {
  this.timeout(90000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  /** Runs the one task; returns its status and the text of iteration 2's first request. */
  async function runCheat(steps: Parameters<typeof cheatThenInsist>): Promise<{ status: string; feedback: string; id: string }> {
    const id = await h.addTask({ title: 'Fix add', prompt: 'add(2, 3) must be 5. Make npm test pass.', promise: 'npm test passes' });
    const summary = await h.runner().run();
    return { status: summary.results[0].status, feedback: secondIterationRequest(h, steps.length + 1), id };
  }

  it('rejects a package.json "test" script rewritten to `exit 0`, and says so in feedback, events, reports and the panel event', async () => {
    const cheat = [write('package.json', packageJson('exit 0'))];
    h = await greeterHarness(cheatThenInsist(...cheat));
    const { status, feedback, id } = await runCheat(cheat);
    assert.equal(status, 'timeout');
    assert.equal((await h.store.get(id)).status, 'timeout');
    assert.match(feedback, /Your COMPLETE was not accepted: the quality gate tests was weakened/);
    assert.match(
      feedback,
      /gate weakened: `package\.json scripts\.test` changed since the task's base \(`node --test` → `exit 0`\) — restore it/,
    );
    assert.match(feedback, /gate weakened: the gate's output gave no test count; at the task's base it ran 2 tests/);

    const baseline = eventsOf(h.events, 'integrity.baseline');
    assert.equal(baseline.length, 1, 'the base is recorded once, before iteration 1');
    assert.deepEqual(baseline[0].gates[0].tests, { total: 2, skipped: 0, named: 2 });
    const finished = eventsOf(h.events, 'gate.finished');
    assert.deepEqual(
      finished.map((e) => [e.iteration, e.passed]),
      [
        [1, false],
        [2, false],
      ],
    );
    assert.equal(finished[0].integrity?.violations.length, 2);
    assert.match(finished[0].summary, /weakened against the task's base/);

    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /### Gates weakened against the task's base\n- \*\*tests\*\*: `package\.json scripts\.test` changed/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /## Gate integrity/);
    assert.match(final, /\*\*Gates weakened when the task ended\*\*/);
    assert.match(await h.ws.read('package.json'), /exit 0/, "the agent's work is left as it is, for a person to see");
  });

  it('rejects the failing test replaced by an empty one under the same name', async () => {
    const emptied = GREETER_TEST.replace(
      "test('adds two numbers', () => {\n  assert.equal(add(2, 3), 5);\n});",
      "test('adds two numbers', () => {});",
    );
    assert.notEqual(emptied, GREETER_TEST);
    const cheat = [write('greeter.test.js', emptied)];
    h = await greeterHarness(cheatThenInsist(...cheat));
    const { status, feedback } = await runCheat(cheat);
    assert.equal(status, 'timeout');
    assert.match(
      feedback,
      /gate weakened: test `adds two numbers` failed at the task's base and passes now, but `greeter\.test\.js`, which defines it, lost lines it had there \(`test\('adds two numbers', \(\) => \{`, `assert\.equal\(add\(2, 3\), 5\);`/,
    );
  });

  it('rejects the failing test deleted (its file replaced by a placeholder), and asks a person once the agent keeps it', async () => {
    const cheat = [write('greeter.test.js', "const test = require('node:test');\ntest('placeholder', () => {});\n")];
    h = await greeterHarness(cheatThenInsist(...cheat), { maxIterations: 5 });
    const { status, feedback, id } = await runCheat(cheat);
    assert.equal(status, 'needs_help', 'told once, kept the change: a person decides instead of looping to the limit');
    assert.match(feedback, /gate weakened: tests `greets by name`, `adds two numbers` ran at the task's base and are gone now/);
    assert.match(feedback, /gate weakened: 1 test ran, fewer than the 2 at the task's base/);
    const task = await h.store.get(id);
    assert.equal(task.iterations, 2);
    assert.match(
      task.blockedReason ?? '',
      /Test `greets by name` of the gate "tests" passed at the task's base and is gone now; the agent was told to restore it and kept the change/,
    );
    assert.match(task.blockedReason ?? '', new RegExp(`ralph task edit ${id} --allow-gate-changes tests`));
  });

  it('rejects the failing test skipped with .skip', async () => {
    const cheat = [write('greeter.test.js', GREETER_TEST.replace("test('adds two numbers'", "test.skip('adds two numbers'"))];
    h = await greeterHarness(cheatThenInsist(...cheat));
    const { status, feedback } = await runCheat(cheat);
    assert.equal(status, 'timeout');
    assert.match(feedback, /gate weakened: test `adds two numbers` is skipped now but ran at the task's base — un-skip it/);
  });

  it('rejects a name filter added to the test script', async () => {
    const cheat = [write('package.json', packageJson('node --test --test-name-pattern=greets'))];
    h = await greeterHarness(cheatThenInsist(...cheat));
    const { status, feedback } = await runCheat(cheat);
    assert.equal(status, 'timeout');
    assert.match(
      feedback,
      /`package\.json scripts\.test` changed since the task's base \(`node --test` → `node --test --test-name-pattern=greets`\)/,
    );
    assert.match(feedback, /`adds two numbers`/);
  });

  it('rejects an edited test-runner config (a mocha grep in .mocharc.json) and the dropped count', async () => {
    // mocha through a node_modules link at the workspace's top (as a project has it): the gate names no
    // path outside the workspace, so it runs the same from a clone under /tmp, whose /tmp the sandbox hides
    const mocha = 'node node_modules/mocha/bin/mocha.js';
    const spec = GREETER_TEST.replace(/^const test = require\('node:test'\);\n/, '').replace(/\btest\(/g, 'it(');
    const rc = (extra: object) => `${JSON.stringify({ spec: ['test/*.spec.js'], ...extra })}\n`;
    const cheat = [write('.mocharc.json', rc({ grep: 'greets' }))];
    h = await greeterHarness(cheatThenInsist(...cheat), {
      files: {
        'greeter.test.js': '',
        'test/greeter.spec.js': spec.replace("'./greeter'", "'../greeter'"),
        '.mocharc.json': rc({}),
        '.gitignore': 'node_modules\n',
      },
      links: { node_modules: path.dirname(path.dirname(path.dirname(require.resolve('mocha/bin/mocha.js')))) },
      gates: [{ name: 'unit', command: mocha, kind: 'tests', required: true }],
    });
    const { status, feedback } = await runCheat(cheat);
    assert.equal(status, 'timeout');
    assert.match(feedback, /gate weakened: `\.mocharc\.json` changed since the task's base — restore it/);
    assert.match(feedback, /gate weakened: 1 test ran, fewer than the 2 at the task's base/);
  });

  it('accepts a task that fixes the bug and adds tests', async () => {
    const more = `${GREETER_TEST}\ntest('adds negative numbers', () => {\n  assert.equal(add(-2, -3), -5);\n});\n`;
    h = await greeterHarness([write('greeter.js', GREETER_FIXED_JS), write('greeter.test.js', more), complete()]);
    const id = await h.addTask({ title: 'Fix add', prompt: 'add(2, 3) must be 5.', promise: 'npm test passes' });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    assert.equal(chatRequests(h.server).length, 3);
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.deepEqual(finished.tests, { passed: 3, failed: 0, total: 3, failing: [] });
    assert.equal(finished.integrity, undefined);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(
      final,
      /## Gate integrity\n\nJudged against the base taken .* \(tests: 2 tests run\)\.\n\n_The gates check what they checked at the base\._/,
    );
  });

  it('accepts a task allowed to change the test script, and its final report says what changed', async () => {
    h = await greeterHarness([
      write('package.json', packageJson('node --test greeter.test.js')),
      write('greeter.js', GREETER_FIXED_JS),
      complete(),
    ]);
    const id = await h.addTask({
      title: 'Run only the greeter tests',
      prompt: 'Fix add and name the test file in the test script.',
      promise: 'npm test passes',
      allowGateChanges: ['tests'],
    });
    assert.deepEqual((await h.store.get(id)).allowGateChanges, ['tests']);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.passed, true);
    assert.deepEqual(finished.integrity, {
      violations: [],
      allowed: ["`package.json scripts.test` changed since the task's base (`node --test` → `node --test greeter.test.js`)"],
    });
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(
      final,
      /\*\*Gate changes the task was allowed to make\*\*\n\n- \*\*tests\*\*: `package\.json scripts\.test` changed since the task's base \(`node --test` → `node --test greeter\.test\.js`\)/,
    );
    assert.match(requestText(chatRequests(h.server)[0]), /Fix add/);
  });

  it('keeps the base across a resume: a cheat left in place is still judged against the original base', async () => {
    h = await greeterHarness([write('package.json', packageJson('exit 0')), complete('fixed'), complete('still fixed')], {
      maxIterations: 1,
    });
    const id = await h.addTask({ title: 'Fix add', prompt: 'add(2, 3) must be 5.', promise: 'npm test passes' });
    assert.equal((await h.runner().run()).results[0].status, 'timeout');
    await new TaskActions(h.store, new CheckpointStore(h.paths), new GitService(h.ws.dir)).increaseMaxIterations(id, 1, 1);
    const resumed = await h.runner().run({ taskId: id });
    assert.equal(resumed.results[0].status, 'timeout', 'the working tree at the resume is not the base');
    assert.equal(eventsOf(h.events, 'integrity.baseline').length, 1, 'the base is recorded once per task, not per run');
    const last = eventsOf(h.events, 'gate.finished').at(-1)!;
    assert.equal(last.iteration, 2);
    assert.match(
      last.integrity?.violations.join('\n') ?? '',
      /`package\.json scripts\.test` changed since the task's base \(`node --test` → `exit 0`\)/,
    );
  });

  it('loads a checkpoint from before gate baselines: says so once, and judges the gates as before', async () => {
    h = await greeterHarness(
      [{ content: 'looking around <ralph>PROGRESS:10</ralph>' }, write('greeter.js', GREETER_FIXED_JS), complete()],
      { maxIterations: 1 },
    );
    const id = await h.addTask({ title: 'Fix add', prompt: 'add(2, 3) must be 5.', promise: 'npm test passes' });
    assert.equal((await h.runner().run()).results[0].status, 'timeout');
    const file = h.paths.state(id);
    const { integrity: _dropped, ...old } = JSON.parse(await fs.readFile(file, 'utf8')) as Record<string, unknown>;
    await fs.writeFile(file, JSON.stringify(old));
    await new TaskActions(h.store, new CheckpointStore(h.paths), new GitService(h.ws.dir)).increaseMaxIterations(id, 1, 1);
    const resumed = await h.runner().run({ taskId: id });
    assert.equal(resumed.results[0].status, 'done');
    const warnings = eventsOf(h.events, 'warning').filter((w) => w.code === 'integrity-baseline-missing');
    assert.equal(warnings.length, 1);
    assert.equal(eventsOf(h.events, 'integrity.baseline').length, 1, 'only the first run recorded one');
  });
});
