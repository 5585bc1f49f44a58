import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { eventsOf, type LoopHarness } from '../helpers/loopHarness';
import { runCliInProcess } from '../helpers/cliHarness';
import {
  completeStep,
  projectHarness,
  requestAfter,
  SLUG_FIXED_JS,
  SLUG_JS,
  SLUG_PROJECT,
  SLUG_TASK,
  SLUG_TEST,
  TESTS_GATE,
  writeStep,
} from '../helpers/verdictProjects';

const SLUG_TEST_MORE = `${SLUG_TEST}test('collapses runs of spaces', () => assert.equal(slug('a  b'), 'a-b'));\n`;

/**
 * Verdicts against the task's base on real git, real npm and node:test, the scripted model:
 * a suite with one red test unrelated to the task must let honest work land, and nothing more.
 */
describe('verdicts against the base: pre-existing failures, flaky tests, runners without names', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('lands an honest fix in one iteration, naming the old failure as pre-existing everywhere a failure is named', async () => {
    h = await projectHarness(
      [writeStep('src/slug.js', SLUG_FIXED_JS), writeStep('test/slug.test.js', SLUG_TEST_MORE), completeStep('slugs collapse spaces')],
      { files: SLUG_PROJECT, config: { gates: [TESTS_GATE] } },
    );
    const id = await h.addTask(SLUG_TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    assert.equal((await h.store.get(id)).iterations, 1);

    const finished = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.length, 1);
    assert.equal(finished[0].passed, true);
    assert.deepEqual(finished[0].preExisting, ['release date is in the future']);
    assert.match(
      finished[0].summary,
      /3\/4 tests passing, 1 failing — 1 already failing at the task's base, unrelated to the task, not held against the task/,
    );

    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(
      report,
      /`release date is in the future` — \*\*pre-existing\*\* \(already failing at the task's base; not held against the task: it exercises only `test\/release\.test\.js`, none of which the task changed or names\)/,
    );
    assert.match(report, /## Decision: COMPLETE/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /Status: \*\*COMPLETE\*\* \(done\)/);
    assert.match(
      final,
      /## Pre-existing failures\nAlready failing at the task's base and still failing, the same tests: shown unrelated to the task \(or declared so by a person\), not held against it\.\n\n- \*\*tests\*\*: `release date is in the future` — it exercises only `test\/release\.test\.js`/,
    );
    assert.match(final, /All tests passing \(tests\): yes — 3\/4 tests passing, 1 failing — 1 already failing/);

    const status = await runCliInProcess(['status'], h.ws.dir);
    assert.match(
      status.stdout,
      new RegExp(
        `${id} tests: 1 pre-existing failure \\(already failing at the task's base, not held against it\\): \`release date is in the future\``,
      ),
    );
    const json = JSON.parse((await runCliInProcess(['status', '--json'], h.ws.dir)).stdout) as {
      verdicts: { taskId: string; gates: { preExisting?: string[] }[] }[];
    };
    assert.deepEqual(json.verdicts.find((v) => v.taskId === id)?.gates[0].preExisting, ['release date is in the future']);
  });

  it('does not land a fix that breaks a test that passed at the base: the test is named, the old failure marked as such', async () => {
    const breaking = "exports.slug = (text) => text.replace(/\\s+/g, '-');\n"; // no longer lowercases
    h = await projectHarness([writeStep('src/slug.js', breaking), completeStep('slugs collapse spaces')], {
      files: SLUG_PROJECT,
      config: { gates: [TESTS_GATE], loop: { maxIterations: 1 } },
    });
    const id = await h.addTask(SLUG_TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.passed, false);
    assert.deepEqual(finished.preExisting, ['release date is in the future']);
    assert.deepEqual(finished.tests?.failing.sort(), ['lowercases', 'release date is in the future']);
    const record = await fs.readFile(h.paths.state(id), 'utf8');
    assert.match(record, /failing test: lowercases/);
    assert.match(
      record,
      /pre-existing failure \(already failing at the task's base; not held against the task: it exercises only [^)]*\): release date is in the future/,
    );
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /## Decision: TIMEOUT\nmax iterations \(1\) reached/);
  });

  it("treats a failure the task names as the task's own: not forgiven", async () => {
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), completeStep()], {
      files: SLUG_PROJECT,
      config: { gates: [TESTS_GATE], loop: { maxIterations: 1 } },
    });
    await h.addTask({ ...SLUG_TASK, prompt: `${SLUG_TASK.prompt} Also fix test/release.test.js.` });
    assert.equal((await h.runner().run()).results[0].status, 'timeout');
    assert.equal(eventsOf(h.events, 'gate.finished')[0].passed, false);
  });

  it('forgives nothing with gates[].baseline false (all green only)', async () => {
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), completeStep()], {
      files: SLUG_PROJECT,
      config: { gates: [{ ...TESTS_GATE, baseline: false }], loop: { maxIterations: 1 } },
    });
    await h.addTask(SLUG_TASK);
    assert.equal((await h.runner().run()).results[0].status, 'timeout');
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.passed, false);
    assert.equal(finished.preExisting, undefined);
  });

  it('re-runs a gate whose test is flaky (gates[].rerunFailures) and reports the test as flaky, never silently green', async () => {
    // fails on every odd run of the suite, passes on the even ones (the count lives in an untracked file of the workspace)
    const flaky = `const test = require('node:test');
const fs = require('node:fs');
test('talks to the slow service', () => {
  const file = 'test/.runs';
  const runs = (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0) + 1;
  fs.writeFileSync(file, String(runs));
  if (runs % 2 === 1) throw new Error('ETIMEDOUT: the service did not answer in time');
});
`;
    const files = {
      ...SLUG_PROJECT,
      'test/release.test.js': flaky
        .replace('talks to the slow service', 'release date is in the future')
        .replace(/test\('release[^]*$/, "test('release date is in the future', () => {});\n"),
      'test/service.test.js': flaky,
      '.gitignore': 'test/.runs\n',
    };
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), writeStep('test/slug.test.js', SLUG_TEST_MORE), completeStep()], {
      files,
      config: { gates: [{ ...TESTS_GATE, rerunFailures: 2 }] },
    });
    const id = await h.addTask(SLUG_TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.passed, true);
    assert.deepEqual(finished.flaky, ['talks to the slow service']);
    assert.match(finished.summary, /1 flaky \(passed on a re-run\)/);
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /### Flaky tests\n- \*\*tests\*\*: `talks to the slow service` failed, then passed on a re-run \(1 re-run\)/);
    assert.match(await h.ws.read(`.ralph/reports/${id}/gates/iteration-1-tests-rerun1.log`), /# pass/);
  });

  it("runs a gate once more when only its runner's timeouts failed, without rerunFailures, and says so", async () => {
    // every other run of the suite is slow (a busy machine); the count lives in an ignored file
    const slow = `const test = require('node:test');
const fs = require('node:fs');
test('answers within its time', { timeout: 300 }, async () => {
  const file = 'test/.runs';
  const runs = (fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8')) : 0) + 1;
  fs.writeFileSync(file, String(runs));
  if (runs % 2 === 1) await new Promise((resolve) => setTimeout(resolve, 1500));
});
`;
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), writeStep('test/slug.test.js', SLUG_TEST_MORE), completeStep()], {
      files: {
        ...SLUG_PROJECT,
        'test/release.test.js': "require('node:test')('release date is in the future', () => {});\n",
        'test/service.test.js': slow,
        '.gitignore': 'test/.runs\n',
      },
      config: { gates: [TESTS_GATE] },
    });
    const id = await h.addTask(SLUG_TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const finished = eventsOf(h.events, 'gate.finished').find((e) => e.flaky?.length);
    assert.ok(finished, 'a gate run reported the timed-out test as flaky');
    assert.deepEqual(finished.flaky, ['answers within its time']);
    const logs = await fs.readdir(h.ws.path(`.ralph/reports/${id}/gates`), { recursive: true });
    assert.ok(
      logs.some((f) => String(f).endsWith('-rerun1.log')),
      logs.join(', '),
    );
  });

  it('lands the fix of a library that threw on import: its test file, red as a whole at the base, is its tests now', async () => {
    // node:test names a test file that could not load by its path, and no file for the tests that pass later
    const broken = `const table = JSON.parse('{"a": 1,}');\n${SLUG_JS}`;
    const task = {
      title: 'Slugs crash on start',
      prompt: 'Requiring src/slug.js throws a SyntaxError; make it load.',
      promise: 'src/slug.js loads and its tests pass',
    };
    // in your workspace (maxParallel 1) and in a task worktree through the merge queue (the default, 3)
    for (const maxParallel of [1, 3]) {
      h = await projectHarness([writeStep('src/slug.js', SLUG_JS), completeStep('it loads')], {
        files: { ...SLUG_PROJECT, 'src/slug.js': broken },
        config: { gates: [TESTS_GATE], loop: { maxParallel } },
      });
      await h.addTask(task);
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'done', `maxParallel ${maxParallel}: ${summary.results[0].reason}`);
      const [finished] = eventsOf(h.events, 'gate.finished');
      assert.equal(finished.integrity?.violations.length ?? 0, 0, JSON.stringify(finished.integrity));
      await h.cleanup();
    }
    // the same task with the test file deleted instead: its tests are gone, not done
    h = await projectHarness(
      [{ toolCalls: [{ name: 'run_command', arguments: { command: 'rm test/slug.test.js' } }] }, completeStep('it loads')],
      {
        files: { ...SLUG_PROJECT, 'src/slug.js': broken },
        config: { gates: [TESTS_GATE], loop: { maxIterations: 1 } },
      },
    );
    await h.addTask(task);
    const cheat = await h.runner().run();
    assert.notEqual(cheat.results[0].status, 'done');
    assert.match(JSON.stringify(eventsOf(h.events, 'gate.finished')[0].integrity), /test\/slug\.test\.js/);
  });

  it('forgives nothing where the runner gives no names, and the verdict says why and how to get them', async () => {
    const check =
      "const ok = require('./src/slug').slug('a  b') === 'a-b';\nconsole.log(ok ? '3 passed, 1 failed' : '2 passed, 2 failed');\nprocess.exit(1);\n";
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), completeStep()], {
      files: { ...SLUG_PROJECT, 'check.js': check },
      config: { gates: [{ name: 'check', command: 'node check.js', kind: 'tests', required: true }], loop: { maxIterations: 2 } },
    });
    await h.addTask(SLUG_TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.passed, false);
    assert.match(
      finished.baselineNote ?? '',
      /check failed at the task's base too, but its output does not name every failing test, so no failure can be told apart from one the task caused: nothing is forgiven\. Make the test runner name its failing tests \(see "Test names" in docs\/how-a-task-ends\.md/,
    );
    assert.match(requestAfter(h, 2), /check failed at the task's base too, but its output does not name every failing test/);
  });
});
