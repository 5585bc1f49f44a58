import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventsOf, type LoopHarness } from '../helpers/loopHarness';
import { completeStep, projectHarness, TESTS_GATE, writeStep } from '../helpers/verdictProjects';
import type { Step } from '../../fixtures/scriptedServer';
import { hasCommand, skipBecause } from '../gates/toolchain';

/**
 * Affected tests per iteration (issue 34) on real git, real npm and node:test, the scripted
 * model: an iteration that does not claim COMPLETE runs the test files its changes reach
 * (through imports, transitively), the whole suite decides COMPLETE, and what the import graph
 * cannot see (a data file a test reads) is caught by that whole run.
 */
const TEST_HEAD = "const test = require('node:test');\nconst assert = require('node:assert/strict');\n";
const PROJECT: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'words', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
  'src/upper.js': 'exports.upper = (s) => s.toUpperCase();\n',
  'src/trim.js': 'exports.trim = (s) => s.trim();\n',
  // clean.js reaches trim.js: test/clean.test.js exercises trim.js only through it
  'src/clean.js': "const { trim } = require('./trim');\nexports.clean = (s) => trim(s).toLowerCase();\n",
  'data/words.txt': 'alpha\nbeta\n',
  'test/upper.test.js': `${TEST_HEAD}const { upper } = require('../src/upper');\ntest('upper', () => assert.equal(upper('a'), 'A'));\n`,
  'test/clean.test.js': `${TEST_HEAD}const { clean } = require('../src/clean');\ntest('clean', () => assert.equal(clean(' A '), 'a'));\n`,
  // reads a data file: no import the graph could follow
  'test/words.test.js': `${TEST_HEAD}const fs = require('node:fs');\ntest('two words', () => assert.equal(fs.readFileSync(require('node:path').join(__dirname, '../data/words.txt'), 'utf8').trim().split('\\n').length, 2));\n`,
};
const TASK = { title: 'Shout', prompt: 'upper() adds an exclamation mark.', promise: 'upper("a") is "A!" and its test says so' };
const UPPER_TEST = `${TEST_HEAD}const { upper } = require('../src/upper');\ntest('upper', () => assert.equal(upper('a'), 'A!'));\n`;
const say = (content: string): Step => ({ content });

function iterationGates(h: LoopHarness) {
  return eventsOf(h.events, 'gate.finished').filter((e) => e.iteration !== undefined);
}
function iterationStarts(h: LoopHarness) {
  return eventsOf(h.events, 'gate.started').filter((e) => e.iteration !== undefined);
}

/** Adds the task, runs it to done, and gives its iteration gates' starts and results. */
async function runToDone(h: LoopHarness) {
  const id = await h.addTask(TASK);
  const summary = await h.runner().run();
  assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
  return { id, starts: iterationStarts(h), finished: iterationGates(h) };
}

describe('affected tests each iteration, the whole suite at COMPLETE (issue 34)', function () {
  this.timeout(120000);
  let h: LoopHarness | undefined;
  afterEach(async () => h?.cleanup());

  for (const maxParallel of [1, 3]) {
    it(`runs the tests a change reaches after an iteration, and the whole suite when the agent claims COMPLETE (maxParallel ${maxParallel})`, async () => {
      h = await projectHarness(
        [
          // iteration 1: writes the task's test
          writeStep('test/upper.test.js', UPPER_TEST),
          say('test written; the code next'),
          // iteration 2: changes trim.js, reached by clean.test.js through clean.js, and upper.js
          writeStep('src/trim.js', 'exports.trim = (s) => s.trim();\n// trims both ends\n'),
          writeStep('src/upper.js', 'exports.upper = (s) => `${s.toUpperCase()}!`;\n'),
          say('both changed'),
          // iteration 3: COMPLETE: the whole suite
          completeStep('upper shouts'),
        ],
        { files: PROJECT, config: { gates: [TESTS_GATE], loop: { maxIterations: 3, maxParallel } } },
      );
      const { id, starts, finished } = await runToDone(h);
      assert.deepEqual(
        starts.map((s) => s.iteration),
        [1, 2, 3],
      );
      // iteration 1 runs the test the task changed: with one agent the base's run comes first in the workspace; in a
      // worktree it goes on beside the conversation, and while it is still going the part is picked from the tree's test
      // files (its size unknown yet) instead of waiting for it
      assert.equal(starts[0].command, 'npm test -- test/upper.test.js');
      assert.equal(starts[1].scope, 'affected', JSON.stringify(finished[1].scope));
      // upper.test.js failed in iteration 1 and reaches upper.js; clean.test.js reaches trim.js; words.test.js nothing
      assert.equal(starts[1].command, 'npm test -- test/clean.test.js test/upper.test.js');
      assert.equal(starts[2].command, 'npm test');
      const { of, ...first } = finished[0].scope as { of?: number };
      assert.deepEqual(first, { kind: 'affected', files: 1 });
      if (maxParallel === 1 || of !== undefined) assert.equal(of, 3, 'the suite at the base is known: the part names its size');
      assert.equal(finished[0].passed, false);
      assert.deepEqual(finished[1].scope, { kind: 'affected', files: 2, of: 3 });
      assert.match(finished[1].summary, /^affected: 2 of 3 tests, 2\/2 tests passing/);
      assert.equal(finished[1].tests?.total, 2);
      assert.deepEqual(finished[2].scope, { kind: 'full', why: 'the agent claims COMPLETE: the whole suite decides' });
      assert.equal(finished[2].tests?.total, 3);
      // the agent was told it saw a part, and that the whole suite decides
      const record = await h.store.get(id);
      assert.equal(record.status, 'done');
      const report = await h.ws.read(`.ralph/reports/${id}/iteration-2.md`);
      assert.match(report, /affected: 2 of 3 tests/);
    });
  }

  it('a break the import graph cannot see (a data file) passes the part and is caught by the whole suite at COMPLETE: not done', async () => {
    h = await projectHarness(
      [
        writeStep('test/upper.test.js', UPPER_TEST),
        say('test first'),
        writeStep('src/upper.js', 'exports.upper = (s) => `${s.toUpperCase()}!`;\n'),
        writeStep('data/words.txt', 'alpha\n'),
        say('done with upper'),
        completeStep('upper shouts'),
      ],
      { files: PROJECT, config: { gates: [TESTS_GATE], loop: { maxIterations: 3 } } },
    );
    await h.addTask(TASK);
    const summary = await h.runner().run();
    assert.notEqual(summary.results[0].status, 'done', summary.results[0].reason);
    const finished = iterationGates(h);
    assert.equal(finished[1].scope?.kind, 'affected', JSON.stringify(finished[1].scope));
    assert.equal(finished[1].passed, true, finished[1].summary);
    assert.equal(finished[2].scope?.kind, 'full');
    assert.equal(finished[2].passed, false);
    assert.deepEqual(finished[2].tests?.failing, ['two words']);
  });

  it('runs the pytest files a change reaches (python imports followed), the whole suite at COMPLETE', async function () {
    if (!(await hasCommand(['python3', '-m', 'pytest', '--version']))) skipBecause(this, 'pytest is not installed');
    const files = {
      'pyproject.toml': '[project]\nname = "words"\nversion = "0"\n',
      'words/__init__.py': '',
      'words/upper.py': 'def upper(s):\n    return s.upper()\n',
      'words/trim.py': 'def trim(s):\n    return s.strip()\n',
      'tests/test_upper.py': 'from words.upper import upper\n\ndef test_upper():\n    assert upper("a") == "A"\n',
      'tests/test_trim.py': 'from words.trim import trim\n\ndef test_trim():\n    assert trim(" a ") == "a"\n',
      '.gitignore': '__pycache__/\n.pytest_cache/\n',
    };
    const gate = { name: 'tests', command: 'python3 -m pytest -v', kind: 'tests' as const, required: true };
    h = await projectHarness(
      [writeStep('words/trim.py', 'def trim(s):\n    return s.strip(" ")\n'), say('trim changed'), completeStep('trimmed')],
      { files, config: { gates: [gate], loop: { maxIterations: 2, maxParallel: 1 } } },
    );
    await h.addTask({ title: 'Trim spaces only', prompt: 'trim() strips spaces only.', promise: 'trim keeps tabs' });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const starts = iterationStarts(h);
    assert.deepEqual(
      starts.map((s) => s.command),
      ['python3 -m pytest -v tests/test_trim.py', 'python3 -m pytest -v'],
    );
    assert.deepEqual(iterationGates(h)[0].scope, { kind: 'affected', files: 1, of: 2 });
  });

  it('runs the whole suite after a change of package.json, says why; scope "full" runs it every time', async () => {
    h = await projectHarness(
      [
        writeStep('test/upper.test.js', UPPER_TEST),
        say('test first'),
        writeStep(
          'package.json',
          `${JSON.stringify({ name: 'words', private: true, version: '1.0.1', scripts: { test: 'node --test' } }, null, 2)}\n`,
        ),
        say('bumped'),
      ],
      { files: PROJECT, config: { gates: [TESTS_GATE], loop: { maxIterations: 2 } } },
    );
    await h.addTask(TASK);
    await h.runner().run();
    const finished = iterationGates(h);
    assert.equal(finished[1].scope?.kind, 'full');
    assert.match(
      finished[1].scope?.kind === 'full' ? finished[1].scope.why : '',
      /`package\.json` changed since the gate's last whole green run/,
    );
    await h.cleanup();

    h = await projectHarness(
      [writeStep('test/upper.test.js', UPPER_TEST), say('test first'), writeStep('src/upper.js', 'exports.upper = (s) => s;\n'), say('x')],
      { files: PROJECT, config: { gates: [{ ...TESTS_GATE, scope: 'full' }], loop: { maxIterations: 2 } } },
    );
    await h.addTask(TASK);
    await h.runner().run();
    const starts = iterationStarts(h);
    assert.deepEqual(
      starts.map((s) => [s.command, s.scope]),
      [
        ['npm test', undefined],
        ['npm test', undefined],
      ],
    );
    assert.equal(iterationGates(h)[1].scope, undefined);
  });

  it("a test file the task adds counts as a test though its proofTests name another: the task's globs add, they do not narrow", async () => {
    const shout = `${TEST_HEAD}const { upper } = require('../src/upper');\ntest('shouts', () => assert.ok(upper('a').endsWith('!')));\n`;
    h = await projectHarness(
      [writeStep('test/upper.test.js', UPPER_TEST), say('test first'), writeStep('test/shout.test.js', shout), say('another test')],
      { files: PROJECT, config: { gates: [TESTS_GATE], loop: { maxIterations: 2, maxParallel: 1 } } },
    );
    await h.addTask({ ...TASK, proofTests: ['test/upper.test.js'] });
    await h.runner().run();
    const finished = iterationGates(h);
    assert.equal(iterationStarts(h)[0].command, 'npm test -- test/upper.test.js');
    // the new file is no test of the base's suite: the whole suite tells what it holds
    assert.equal(finished[1].scope?.kind, 'full', JSON.stringify(finished[1].scope));
    assert.match(finished[1].scope?.kind === 'full' ? finished[1].scope.why : '', /the task added test files .*`test\/shout\.test\.js`/);
    assert.equal(finished[1].tests?.total, 4);
  });

  it('a part beside a test red at the base and unrelated to the task: the part shows it, the whole suite forgives it at COMPLETE', async () => {
    const legacy = `${TEST_HEAD}test('release date is in the future', () => assert.ok(new Date('2001-01-01') > new Date()));\n`;
    h = await projectHarness(
      [
        writeStep('test/upper.test.js', UPPER_TEST),
        writeStep('src/upper.js', 'exports.upper = (s) => `${s.toUpperCase()}!`;\n'),
        say('upper shouts; its test says so'),
        completeStep('upper shouts'),
      ],
      {
        files: { ...PROJECT, 'test/release.test.js': legacy },
        config: { gates: [TESTS_GATE], loop: { maxIterations: 2, maxParallel: 1 } },
      },
    );
    const id = await h.addTask(TASK);
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const starts = iterationStarts(h);
    const finished = iterationGates(h);
    // the base's red test is iteration 1's last failure: the part runs it beside the task's test
    assert.equal(starts[0].command, 'npm test -- test/release.test.js test/upper.test.js');
    assert.equal(finished[0].scope?.kind, 'affected');
    assert.deepEqual(finished[0].tests?.failing, ['release date is in the future']);
    // and tells the agent so, instead of sending it after a test that is not its task's
    assert.match(
      await h.ws.read(`.ralph/reports/${id}/iteration-1.md`),
      /`release date is in the future` failed at the task's base too; the whole suite at COMPLETE judges/,
    );
    assert.equal(finished[1].scope?.kind, 'full');
    assert.equal(finished[1].passed, true, finished[1].summary);
    assert.deepEqual(finished[1].preExisting, ['release date is in the future']);
  });
  it('a base run still going as iteration 1 ends (a worktree): the part comes from the tree’s test files, helpers left out, unjudged; COMPLETE waits for the base', async () => {
    const hold = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-slow-base-'));
    const release = JSON.stringify(path.join(hold, 'release'));
    const held = JSON.stringify(hold);
    try {
      const files = {
        ...PROJECT,
        // a helper beside the tests that reaches upper.js: not a test file of the runner's
        'test/helpers/shout.js': "const { upper } = require('../../src/upper');\nexports.shout = (s) => upper(s);\n",
        // at the base (upper without "!") it waits for the release iteration 2 gives, or the test's end (its hold folder
        // gone); not for a fixed time, which a loaded machine can spend on iteration 1 (the 10-minute bound only keeps no orphan)
        'test/slow.test.js': `${TEST_HEAD}const fs = require('node:fs');\nconst { upper } = require('../src/upper');\ntest('slow at the base', () => {\n  const until = Date.now() + 600000;\n  while (upper('a') === 'A' && !fs.existsSync(${release}) && fs.existsSync(${held}) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);\n});\n`,
      };
      h = await projectHarness(
        [
          writeStep('src/upper.js', 'exports.upper = (s) => `${s.toUpperCase()}!`;\n'),
          say('upper shouts; its test next'),
          writeStep('test/upper.test.js', UPPER_TEST),
          completeStep('upper shouts'),
        ],
        {
          files,
          config: { gates: [TESTS_GATE], loop: { maxIterations: 3, maxParallel: 3, maxConcurrentGates: 3 }, commands: { sandbox: 'off' } },
        },
      );
      h.bus.subscribe((event) => {
        if (event.type === 'iteration.started' && event.iteration === 2) void fs.writeFile(path.join(hold, 'release'), '');
      });
      const { id, starts, finished } = await runToDone(h);
      assert.deepEqual(
        starts.map((s) => s.command),
        ['npm test -- test/slow.test.js test/upper.test.js', 'npm test'],
        'iteration 1: the test files that reach upper.js, not the helper',
      );
      assert.deepEqual(finished[0].scope, { kind: 'affected', files: 2 }, 'the suite’s size is not known yet');
      assert.equal(finished[0].passed, false);
      assert.deepEqual(finished[0].tests?.failing, ['upper']);
      const report = await h.ws.read(`.ralph/reports/${id}/iteration-1.md`);
      assert.match(report, /not compared with the base yet/);
      assert.deepEqual(finished[1].scope, { kind: 'full', why: 'the agent claims COMPLETE: the whole suite decides' });
      assert.equal(
        eventsOf(h.events, 'integrity.baseline').find((b) => b.taskId === id)?.gates[0].tests?.total,
        5,
        'the base run, to its end (node --test runs every file under test/, the helper too: 1 of its 5)',
      );
    } finally {
      await fs.rm(hold, { recursive: true, force: true });
    }
  });
});
