import assert from 'node:assert/strict';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { eventsOf, type LoopHarness, requestText } from '../helpers/loopHarness';
import {
  completeStep,
  projectHarness,
  requestAfter,
  SLUG_FIXED_JS,
  SLUG_PROJECT,
  SLUG_TASK,
  SLUG_TEST,
  TESTS_GATE,
  writeStep,
} from '../helpers/verdictProjects';

const BUGFIX = { ...SLUG_TASK, type: 'bugfix' as const, title: 'Runs of spaces make double dashes' };
/** A regression test that proves nothing: it passes on the old code too. */
const WEAK_TEST = `${SLUG_TEST}test('slug returns a string', () => assert.equal(typeof slug('a  b'), 'string'));\n`;
/** One that reproduces the bug: it fails on the old code. */
const REAL_TEST = `${SLUG_TEST}test('collapses runs of spaces', () => assert.equal(slug('a  b'), 'a-b'));\n`;

describe('the fail-to-pass proof and the task check (real git, node:test, the scripted model)', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('a bugfix whose new test passes on the base code too is not done, and the test is named', async () => {
    h = await projectHarness(
      [writeStep('src/slug.js', SLUG_FIXED_JS), writeStep('test/slug.test.js', WEAK_TEST), completeStep('fixed, with a regression test')],
      { files: SLUG_PROJECT, config: { gates: [TESTS_GATE], loop: { maxIterations: 1 } } },
    );
    const id = await h.addTask(BUGFIX);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    assert.equal(eventsOf(h.events, 'gate.finished')[0].passed, true, 'the gates alone would have let it through');
    const [proof] = eventsOf(h.events, 'proof');
    assert.equal(proof.status, 'not-proven');
    assert.deepEqual(proof.files, ['test/slug.test.js']);
    assert.ok(proof.passingOnBase.includes('slug returns a string'), JSON.stringify(proof));
    const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
    assert.match(report, /## Fail-to-pass proof\n\*\*Not proven\*\* — the tests in `test\/slug\.test\.js` pass on the base code too/);
    assert.match(report, /- `slug returns a string` passes without your change: it does not prove the fix/);
    assert.match(report, /## Decision: TIMEOUT/);
    assert.ok(!h.ws.exists(`.ralph/worktrees/_proof-${id}`), 'the scratch worktree is gone');
    assert.equal(h.ws.git('worktree', 'list').split('\n').length, 1);
  });

  it('a real fail-to-pass fix is done in one iteration; the proof is in the reports, the completion event and ralph status', async () => {
    h = await projectHarness(
      [writeStep('src/slug.js', SLUG_FIXED_JS), writeStep('test/slug.test.js', REAL_TEST), completeStep('fixed, with a regression test')],
      { files: SLUG_PROJECT, config: { gates: [TESTS_GATE] } },
    );
    const id = await h.addTask(BUGFIX);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    assert.equal((await h.store.get(id)).iterations, 1);
    const [proof] = eventsOf(h.events, 'proof');
    assert.equal(proof.status, 'proven');
    assert.deepEqual(
      proof.tests.map((t) => t.name),
      ['collapses runs of spaces'],
    );
    assert.match(proof.tests[0].baseFailure ?? '', /Expected values to be strictly equal|a--b/);
    const [finished] = eventsOf(h.events, 'task.finished');
    assert.match(finished.proof ?? '', /^fail-to-pass proven: collapses runs of spaces \(on the base: /);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /## Fail-to-pass proof\n\*\*Proven\*\* — 1 test of the task fails on the base code and passes on the result\./);
    assert.match((await runCli(['status'], h.ws.dir)).stdout, new RegExp(`${id} proof: fail-to-pass proven: collapses runs of spaces`));
  });

  it('a task can name its test files (proofTests): only those count', async () => {
    const files = { ...SLUG_PROJECT, 'checks/slug.check.js': SLUG_TEST.replace("'../src/slug'", "'../src/slug'") };
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), writeStep('checks/slug.check.js', REAL_TEST), completeStep()], {
      files,
      config: { gates: [{ ...TESTS_GATE, command: 'node --test test/slug.test.js test/release.test.js checks/slug.check.js' }] },
    });
    await h.addTask({ ...BUGFIX, proofTests: ['checks/**'] });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    assert.deepEqual(eventsOf(h.events, 'proof')[0].files, ['checks/slug.check.js']);
  });

  it('a bugfix with no tests gate to prove it with asks a person (needs_help) instead of looping', async () => {
    h = await projectHarness([writeStep('src/slug.js', SLUG_FIXED_JS), completeStep()], {
      files: SLUG_PROJECT,
      config: { loop: { maxIterations: 5 } },
    });
    const id = await h.addTask(BUGFIX);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'needs_help');
    assert.equal((await h.store.get(id)).iterations, 1);
    assert.match(
      summary.results[0].reason,
      new RegExp(
        `${id} needs a fail-to-pass proof \\(a bugfix\\), but no required gate of kind "tests" is configured to run the task's tests\\. .*\`ralph task edit ${id} --proof none\``,
      ),
    );
  });

  it('a task check fails, is fed back, then passes: done; the check names a source file the fix may change', async () => {
    const check = `node -e "process.exit(require('./src/slug').slug('a  b') === 'a-b' ? 0 : 1)"`;
    h = await projectHarness([completeStep('claimed early'), writeStep('src/slug.js', SLUG_FIXED_JS), completeStep('fixed')], {
      files: SLUG_PROJECT,
      config: { gates: [TESTS_GATE] },
    });
    const id = await h.addTask({ ...SLUG_TASK, check });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    assert.equal((await h.store.get(id)).iterations, 2);
    const checks = eventsOf(h.events, 'gate.finished').filter((g) => g.gate === 'check');
    assert.deepEqual(
      checks.map((g) => [g.iteration, g.passed]),
      [
        [1, false],
        [2, true],
      ],
    );
    assert.equal(checks[1].integrity, undefined, 'src/slug.js is the code it checks, not part of the gate');
    // iteration 1 changed nothing: the old red test is held too (nothing shows it unrelated), and the claim is refused for it
    assert.match(requestAfter(h, 1), /you have changed no file of the workspace since the task's base/);
    assert.match(requestAfter(h, 1), /required quality gates failed: tests \(.*held against the task\)\), check \(exit code 1[ )]/);
    const final = await h.ws.read(`.ralph/reports/${id}/final.md`);
    assert.match(final, /\*\*Check\*\* \(a required gate of this task\): `node -e/);
    assert.match(final, /check passes \(check\): yes — passed/);
  });

  it('ralph task add --check keeps the command in .ralph/tasks.json; edit can change and remove it', async () => {
    h = await projectHarness([], { files: SLUG_PROJECT });
    const add = await runCliInProcess(
      [
        'task',
        'add',
        'Fix slugs',
        '--prompt',
        'p',
        '--promise',
        'q',
        '--type',
        'bugfix',
        '--check',
        'npm test -- test/slug.test.js',
        '--proof-test',
        'test/**',
      ],
      h.ws.dir,
    );
    assert.equal(add.code, 0, add.stderr);
    const id = add.stdout.trim();
    let task = await h.store.get(id);
    assert.equal(task.check, 'npm test -- test/slug.test.js');
    assert.deepEqual(task.proofTests, ['test/**']);
    assert.match(await h.ws.read('.ralph/tasks.json'), /"check": "npm test -- test\/slug\.test\.js"/);
    assert.equal(
      (await runCli(['task', 'edit', id, '--check', 'node check.js', '--proof', 'none', '--allow-gate-changes', 'tests'], h.ws.dir)).code,
      0,
    );
    task = await h.store.get(id);
    assert.deepEqual([task.check, task.proof, task.allowGateChanges], ['node check.js', 'none', ['tests']]);
    assert.equal((await runCli(['task', 'edit', id, '--check', ''], h.ws.dir)).code, 0);
    assert.equal((await h.store.get(id)).check, undefined);
    const bad = await runCliInProcess(['task', 'add', 'x', '--prompt', 'p', '--promise', 'q', '--proof', 'maybe'], h.ws.dir);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--proof must be one of fail-to-pass, none/);
  });
});

/** The same verdicts in the default configuration: three agents in worktrees, the merge queue. */
describe('pre-existing failures and the fail-to-pass proof in a parallel run (worktrees, merge queue)', function () {
  this.timeout(180000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('a bugfix proven in its worktree and a feature both land, the old red test forgiven in the worktrees and on main', async () => {
    // each task's agent by its prompt: WRITE <file> <<content>> steps, then COMPLETE
    const agent: Step = (request: RecordedRequest) => {
      const text = requestText(request);
      const writes = [...text.matchAll(/WRITE (\S+) <<<(.*?)>>>/gs)].map((m) => ({ path: m[1], content: m[2].replace(/\\n/g, '\n') }));
      const done = (request.body?.messages ?? []).filter((m) => m.role === 'tool').length;
      return done < writes.length
        ? { toolCalls: [{ name: 'write_file', arguments: writes[done] }] }
        : { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'npm test' } }] };
    };
    h = await projectHarness(
      Array.from({ length: 12 }, () => agent),
      { files: SLUG_PROJECT, config: { gates: [TESTS_GATE], loop: { maxParallel: 3, maxIterations: 2 } } },
    );
    const esc = (s: string) => s.replace(/\n/g, '\\n');
    await h.addTask({
      ...BUGFIX,
      id: 'FIX',
      prompt: `${BUGFIX.prompt} WRITE src/slug.js <<<${esc(SLUG_FIXED_JS)}>>> WRITE test/slug.test.js <<<${esc(REAL_TEST)}>>>`,
    });
    await h.addTask({
      id: 'DOC',
      // a documentation task: its documents are its source, so the old red test is shown unrelated to it
      type: 'docs',
      title: 'Document slugs',
      prompt: 'WRITE docs/slug.md <<<slug(text) makes a URL part>>>',
      promise: 'docs/slug.md explains slug',
    });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => `${r.taskId}:${r.status}`).sort(),
      ['DOC:done', 'FIX:done'],
      JSON.stringify(summary.results),
    );
    const [proof] = eventsOf(h.events, 'proof');
    assert.equal(proof.taskId, 'FIX');
    assert.equal(proof.status, 'proven', proof.reason);
    const merges = eventsOf(h.events, 'merge').filter((m) => m.state === 'merged');
    assert.equal(merges.length, 2);
    assert.match(merges.find((m) => m.taskId === 'FIX')?.proof ?? '', /^fail-to-pass proven: collapses runs of spaces/);
    const mergedChecks = eventsOf(h.events, 'gate.finished').filter((g) => g.iteration === undefined);
    assert.ok(
      mergedChecks.every((g) => g.passed && g.preExisting?.includes('release date is in the future')),
      JSON.stringify(mergedChecks),
    );
    assert.equal(h.ws.git('worktree', 'list').split('\n').length, 1, 'no task worktree and no proof scratch is left');
  });
});
