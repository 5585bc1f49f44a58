import assert from 'node:assert/strict';
import { eventsOf, type LoopHarness } from '../helpers/loopHarness';
import { completeStep, projectHarness, requestAfter, writeStep } from '../helpers/verdictProjects';

/**
 * The diff rule in the loop (issue 47): a project whose test command prints nothing a parser
 * reads — an in-house `node test/checks.js` that prints only `ok` or `FAIL` and exits 1 on a
 * failure, as uvu or any runner Ralph does not know leaves it with an exit code alone. An agent
 * that deletes the failing check and claims COMPLETE is not done; one that fixes the code is.
 * Real git, real node, the scripted model.
 */
const GREETER_JS = 'exports.greet = (name) => `Hello, ${name}!`;\nexports.add = (a, b) => a - b;\n';
const GREETER_FIXED_JS = 'exports.greet = (name) => `Hello, ${name}!`;\nexports.add = (a, b) => a + b;\n';
const checks = (tests: string) => `const assert = require('node:assert');
const { greet, add } = require('../greeter');

let failed = 0;
function test(name, fn) {
  try {
    fn();
  } catch {
    failed++;
  }
}

${tests}
console.log(failed ? 'FAIL' : 'ok');
process.exitCode = failed ? 1 : 0;
`;
const GREETS = "test('greets by name', () => {\n  assert.strictEqual(greet('Ada'), 'Hello, Ada!');\n});\n";
const ADDS = "test('adds two numbers', () => {\n  assert.strictEqual(add(2, 3), 5);\n});\n";
const CHECKS = checks(`${GREETS}\n${ADDS}`);
const PROJECT = {
  'package.json': `${JSON.stringify({ name: 'greeter', private: true, scripts: { test: 'node test/checks.js' } }, null, 2)}\n`,
  'greeter.js': GREETER_JS,
  'test/checks.js': CHECKS,
};
const GATES = { gates: [{ name: 'tests', command: 'npm test', kind: 'tests' as const, required: true }] };
const TASK = { title: 'Fix add', prompt: 'add(2, 3) must be 5. Make npm test pass.', promise: 'npm test passes' };

describe('a gate whose output is not read: the diff rule decides', function () {
  this.timeout(90000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('the failing check deleted, COMPLETE claimed → not done, told what was removed and to restore it', async () => {
    const cheat = writeStep('test/checks.js', checks(GREETS));
    h = await projectHarness([cheat, completeStep('fixed', 'npm test passes'), completeStep('really fixed', 'npm test passes')], {
      files: PROJECT,
      config: GATES,
    });
    await h.addTask(TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout', summary.results[0].reason);
    const [first] = eventsOf(h.events, 'gate.finished');
    assert.equal(first.passed, false, JSON.stringify(first));
    assert.match(
      first.summary,
      /^not passed: the task removes test code in `test\/checks\.js` \(judged by the diff rule: output not read, no test names or counts; red at the task's base, exit code 0 now\)\. To have its tests read, make the runner print each test by name/,
    );
    assert.match(first.summary, /; weakened against the task's base \(1 change\)$/);
    assert.match(
      requestAfter(h, 2),
      /gate weakened: the gate's output could not be read \(no test names or counts\), so the task's diff decides: it removes test code — test `adds two numbers` in `test\/checks\.js` is gone \(deleted, or renamed with another body\) — restore it/,
    );
  });

  it('green at the base, a passing test removed and kept after being told → a person is asked, with the command that allows it', async () => {
    const cheat = writeStep('test/checks.js', checks(ADDS));
    h = await projectHarness([cheat, completeStep('done', 'npm test passes'), completeStep('done', 'npm test passes')], {
      files: { ...PROJECT, 'greeter.js': GREETER_FIXED_JS },
      config: { ...GATES, loop: { maxIterations: 5 } },
    });
    const id = await h.addTask({ title: 'Tidy the checks', prompt: 'Tidy test/checks.js.', promise: 'npm test passes' });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'needs_help', summary.results[0].reason);
    const task = await h.store.get(id);
    assert.match(task.blockedReason ?? '', /`test\/checks\.js: greets by name` of the gate "tests"/);
    assert.match(task.blockedReason ?? '', new RegExp(`ralph task edit ${id} --allow-gate-changes tests`));
  });

  it("the failing test's assertion deleted (its body emptied) → not done, told to restore its body", async () => {
    const emptied = checks(`${GREETS}\n${ADDS.replace('  assert.strictEqual(add(2, 3), 5);\n', '')}`);
    h = await projectHarness(
      [writeStep('test/checks.js', emptied), completeStep('fixed', 'npm test passes'), completeStep('fixed', 'npm test passes')],
      {
        files: PROJECT,
        config: GATES,
      },
    );
    await h.addTask(TASK);
    const summary = await h.runner().run();
    assert.notEqual(summary.results[0].status, 'done');
    const [first] = eventsOf(h.events, 'gate.finished');
    assert.equal(first.passed, false);
    assert.match(
      requestAfter(h, 2),
      /test `adds two numbers` in `test\/checks\.js` had a body at the task's base and is empty now — restore its body/,
    );
  });

  it('the honest fix → done, the summary saying the diff rule judged it', async () => {
    h = await projectHarness([writeStep('greeter.js', GREETER_FIXED_JS), completeStep('fixed add', 'npm test passes')], {
      files: PROJECT,
      config: GATES,
    });
    await h.addTask(TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.equal(finished.passed, true);
    assert.match(
      finished.summary,
      /output not read \(no test names or counts\); red at the task's base, exit code 0 now; judged by the diff rule: the task removes no test code/,
    );
  });

  it('a removal the task is allowed to make (allowGateChanges) → done, the change reported as allowed', async () => {
    h = await projectHarness(
      [writeStep('test/checks.js', checks(GREETS)), writeStep('greeter.js', GREETER_FIXED_JS), completeStep('removed', 'npm test passes')],
      {
        files: PROJECT,
        config: GATES,
      },
    );
    await h.addTask({ ...TASK, title: 'Drop the add check', allowGateChanges: ['tests'] });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const [finished] = eventsOf(h.events, 'gate.finished');
    assert.match(finished.integrity?.allowed.join('\n') ?? '', /test `adds two numbers` in `test\/checks\.js` is gone/);
  });
});
