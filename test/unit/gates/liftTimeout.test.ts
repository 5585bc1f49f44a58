import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import type { RunnerSetting } from '../../../src/core/gates/affectedCommand';
import { liftedTimeout } from '../../../src/core/gates/liftTimeout';
import { readRunnerSetting } from '../../../src/core/gates/runnerSetting';
import { ProcessGateRunner, runGates } from '../../../src/core/gates/runGates';
import type { GateOutcome } from '../../../src/core/gates/types';

const setting = (scripts: Record<string, string> = {}): RunnerSetting => ({ scripts, rootFiles: new Set() });

/** A failed outcome whose failures say `messages`. */
const failed = (...messages: string[]): GateOutcome => ({
  name: 'tests',
  kind: 'tests',
  required: true,
  passed: false,
  exitCode: 1,
  timedOut: false,
  durationMs: 1,
  summary: '',
  fixItems: [],
  parsed: {
    tests: {
      passed: 0,
      skipped: 0,
      failed: messages.length,
      total: messages.length,
      failures: messages.map((message, i) => ({ name: `t${i}`, message })),
    },
  },
});

describe("gates: a run that failed on its runner's timeouts only runs again with the timeout lifted", () => {
  it("lifts each known runner's timeout four times what tripped (or its default), through npm's `--` where the script runs it", () => {
    const cases: [string, string, Record<string, string>, GateOutcome, string | undefined][] = [
      ['npx tap', 'npx tap', {}, failed('timed out: tap stopped it at its timeout (30000 ms)'), 'npx tap --timeout=120'],
      ['npm test', 'npm test', { test: 'tap' }, failed('timed out: tap stopped it at its timeout (3000 ms)'), 'npm test -- --timeout=12'],
      // a part's narrowed command has npm's `--` already
      [
        'npm test',
        'npm test -- test/a.js --no-coverage',
        { test: 'tap' },
        failed('timeout!'),
        'npm test -- test/a.js --no-coverage --timeout=120',
      ],
      ['npx mocha', 'npx mocha', {}, failed('Timeout of 2000ms exceeded. For async tests'), 'npx mocha --timeout=8000'],
      ['npx mocha', 'npx mocha', {}, failed('Timeout of 15000ms exceeded.'), 'npx mocha --timeout=60000'],
      ['npx jest', 'npx jest', {}, failed('thrown: "Exceeded timeout of 5000 ms for a test.'), 'npx jest --testTimeout=20000'],
      ['npm test', 'npm test', { test: 'vitest run' }, failed('Error: Test timed out in 5000ms.'), 'npm test -- --testTimeout=20000'],
      ['npx ava', 'npx ava', {}, failed('Timed out while running tests'), 'npx ava --timeout=40s'],
      // node:test has no default timeout to lift (a test's own option wins), pytest none of its own; unknown runners are left alone
      ['node --test', 'node --test', {}, failed('test timed out after 100ms'), undefined],
      ['npx pytest', 'npx pytest', {}, failed('Timeout'), undefined],
      ['make test', 'make test', {}, failed('timed out'), undefined],
      ['npm test', 'npm test', { test: 'tap && eslint .' }, failed('timeout!'), undefined],
    ];
    for (const [gateCommand, command, scripts, outcome, expected] of cases)
      assert.equal(liftedTimeout(gateCommand, command, outcome, setting(scripts))?.command, expected, `${gateCommand} / ${command}`);
  });

  it("never lifts past half an hour, whatever a failure's message says", () => {
    const lifted = liftedTimeout('npx mocha', 'npx mocha', failed('Timeout of 99999999ms exceeded.'), setting());
    assert.equal(lifted?.ms, 30 * 60_000);
  });

  describe('on a real suite whose test is slower than mocha allows by default', () => {
    let dir: string;
    const mocha = path.resolve('node_modules/.bin/mocha');

    before(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-lift-'));
      await fs.mkdir(path.join(dir, 'test'));
      await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'lift', scripts: { test: `${mocha}` } }));
      await fs.writeFile(
        path.join(dir, 'test', 'slow.test.js'),
        "it('waits on a slow machine', (done) => { setTimeout(done, 2600); });\nit('is quick', () => {});\n",
      );
    });
    after(() => fs.rm(dir, { recursive: true, force: true }));

    it("runs it again with the timeout lifted, passes it and says so: the first run's timeout is flaky, not the task's", async function () {
      this.timeout(60_000);
      const report = await runGates({
        gates: [{ name: 'tests', command: 'npm test', kind: 'tests', required: true }],
        runner: new ProcessGateRunner(new NodeCommandRunner()),
        cwd: dir,
      });
      const [outcome] = report.outcomes;
      assert.equal(outcome.passed, true, outcome.summary);
      assert.equal(outcome.reruns, 1);
      assert.deepEqual(outcome.flaky, ['waits on a slow machine']);
      const note = outcome.fixItems.find((f) => f.level === 'observation' && /flaky/.test(f.text))?.text ?? '';
      assert.match(note, /the runner's timeout lifted to 8 s \(`npm test -- --timeout=8000`\)/);
    });

    it('a test that hangs still fails with the timeout lifted', async function () {
      this.timeout(60_000);
      await fs.writeFile(path.join(dir, 'test', 'hang.test.js'), "it('hangs', (done) => { setTimeout(done, 600000).unref(); });\n");
      const report = await runGates({
        gates: [{ name: 'tests', command: 'npm test', kind: 'tests', required: true }],
        runner: new ProcessGateRunner(new NodeCommandRunner()),
        cwd: dir,
      });
      const [outcome] = report.outcomes;
      assert.equal(outcome.passed, false);
      assert.equal(outcome.reruns, 1);
      assert.deepEqual(
        outcome.parsed.tests?.failures.map((f) => f.name),
        ['hangs'],
      );
      await fs.rm(path.join(dir, 'test', 'hang.test.js'));
    });

    it('reads the runner setting of the workspace', async () => {
      const read = await readRunnerSetting(dir);
      assert.equal(read.scripts.test, mocha);
      assert.ok(read.rootFiles.has('package.json'));
    });
  });
});
