import assert from 'node:assert/strict';
import { judgeAgainstBase, TASK_BASE } from '../../../src/core/gates/baseVerdict';
import type { FailureJudge } from '../../../src/core/gates/verdictEvidence';
import { definitionParts } from '../../../src/core/gates/definitions';
import { judgeProof, proofKind } from '../../../src/core/gates/proof';
import { findRenames, locateTest, sameButRenamed } from '../../../src/core/gates/renames';
import { runAgain, timeoutsOnly, withFlaky } from '../../../src/core/gates/rerun';
import { testFileMatcher } from '../../../src/core/gates/testFiles';
import type { GateOutcome } from '../../../src/core/gates/types';
import { parseConfig } from '../../../src/core/config/load';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import { usdText } from '../../../src/core/util/money';
import { panelUsd } from '../../../src/protocol/money';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** A tests gate's outcome with these failing tests (`?` for each unnamed one) out of `total`. */
function outcome(failing: string[], total = 4, extra: Partial<GateOutcome> = {}): GateOutcome {
  const named = failing.filter((n) => n !== '?');
  return {
    name: 'tests',
    kind: 'tests',
    required: true,
    passed: failing.length === 0,
    summary: `${total - failing.length}/${total} tests passing${failing.length ? `, ${failing.length} failing` : ''}`,
    exitCode: failing.length ? 1 : 0,
    timedOut: false,
    durationMs: 5,
    parsed: {
      tests: {
        passed: total - failing.length,
        failed: failing.length,
        skipped: 0,
        total,
        failures: named.map((name) => ({ name, message: `${name} broke` })),
      },
    },
    fixItems: named.map((name) => ({ gate: 'tests', kind: 'tests', level: 'error', text: `failing test: ${name}\n    ${name} broke` })),
    ...extra,
  };
}
const base = (failing: string[], unnamed = 0) => ({
  passed: failing.length + unnamed === 0,
  failing: failing.map((name) => ({ name })),
  unnamed,
  counted: true,
});

describe('verdicts against the base: the pure parts', () => {
  describe('failures that failed at the base too', () => {
    /** A judge from a table of verdicts: the evidence itself is `verdictEvidence.test.ts`'s. */
    const judge =
      (held: Record<string, string> = {}): FailureJudge =>
      async (f) =>
        f.name in held
          ? { name: f.name, held: true, why: held[f.name] }
          : { name: f.name, held: false, why: 'it exercises only `lib/old.js`' };

    it('forgives a failure the evidence shows unrelated, says why, and keeps a new failure blocking', async () => {
      const forgiven = await judgeAgainstBase(outcome(['old date test']), base(['old date test']), TASK_BASE, { judge: judge() });
      assert.equal(forgiven.passed, true);
      assert.deepEqual(forgiven.preExisting, ['old date test']);
      assert.deepEqual(forgiven.baseFailures, [{ name: 'old date test', held: false, why: 'it exercises only `lib/old.js`' }]);
      assert.match(forgiven.summary, /1 already failing at the task's base, unrelated to the task, not held against the task/);
      assert.equal(forgiven.fixItems[0].level, 'observation');
      assert.match(
        forgiven.fixItems[0].text,
        /^pre-existing failure \(already failing at the task's base; not held against the task: it exercises only `lib\/old\.js`\): old date test/,
      );

      const mixed = await judgeAgainstBase(outcome(['old date test', 'login works']), base(['old date test']), TASK_BASE, {
        judge: judge(),
      });
      assert.equal(mixed.passed, false, 'a test that passed at the base and fails now blocks');
      assert.deepEqual(mixed.preExisting, ['old date test']);
      assert.deepEqual(
        mixed.fixItems.map((f) => f.level),
        ['observation', 'error'],
      );
    });

    it('holds a failure the evidence does not show unrelated against the task, with the evidence in its feedback', async () => {
      const held = await judgeAgainstBase(outcome(['parses dates']), base(['parses dates']), TASK_BASE, {
        judge: judge({ 'parses dates': '`test/date.test.js` imports `src/date.js`, which the task changed' }),
      });
      assert.equal(held.passed, false);
      assert.equal(held.preExisting, undefined);
      assert.deepEqual(
        held.baseFailures?.map((v) => v.held),
        [true],
      );
      assert.match(held.summary, /1 failing at the task's base too, held against the task/);
      assert.equal(held.fixItems[0].level, 'error');
      assert.match(
        held.fixItems[0].text,
        /failing test: parses dates\n[\s\S]*\(it failed at the task's base too and is yours to fix: `test\/date\.test\.js` imports `src\/date\.js`, which the task changed\)/,
      );
    });

    it('forgives nothing where the runner does not name every failure, and says why and what to do', async () => {
      const unnamed = await judgeAgainstBase(outcome(['?']), base([], 1), TASK_BASE, { judge: judge() });
      assert.equal(unnamed.passed, false);
      assert.match(
        unnamed.baselineNote ?? '',
        /tests failed at the task's base too, but its output does not name every failing test, so no failure can be told apart .*: nothing is forgiven\. Make the test runner name its failing tests \(see "Test names" in docs\/how-a-task-ends\.md/,
      );
      const noCounts = await judgeAgainstBase(
        { ...outcome([]), passed: false, parsed: {}, exitCode: 1 },
        { passed: false, failing: [], unnamed: 0, counted: false },
        TASK_BASE,
        { judge: judge() },
      );
      assert.match(noCounts.baselineNote ?? '', /its output gives no test names/);
    });

    it('leaves a green base and an opted-out gate alone', async () => {
      assert.equal((await judgeAgainstBase(outcome(['x']), base([]), TASK_BASE, { judge: judge() })).passed, false, 'green at the base');
      const off = await judgeAgainstBase(outcome(['x']), base(['x']), TASK_BASE, { enabled: false, judge: judge() });
      assert.equal(off.passed, false, 'baseline: false');
    });
  });

  it('reports a test that failed then passed on a re-run as flaky, never silently green', () => {
    const last = outcome([]);
    const flaky = withFlaky(last, [outcome(['sometimes times out'])], 1);
    assert.equal(flaky.passed, true);
    assert.deepEqual(flaky.flaky, ['sometimes times out']);
    assert.match(flaky.summary, /1 flaky \(passed on a re-run\)/);
    assert.match(
      flaky.fixItems.at(-1)?.text ?? '',
      /flaky: `sometimes times out` failed, then passed when the gate ran again \(1 re-run, gates\[\]\.rerunFailures\)/,
    );
  });

  it("runs again once a run whose every failure is its runner's timeout (tap, mocha, jest, vitest, node:test), not one failing otherwise", () => {
    const failing = (...messages: string[]) => {
      const o = outcome(messages.map((_, i) => `t${i}`));
      o.parsed.tests!.failures = messages.map((message, i) => ({ name: `t${i}`, message }));
      return o;
    };
    for (const message of [
      'timed out: tap stopped it at its timeout (30000 ms)',
      'timeout!',
      'Timeout of 2000ms exceeded. For async tests and hooks, ensure "done()" is called',
      'thrown: "Exceeded timeout of 5000 ms for a test.',
      'Error: Test timed out in 5000ms.',
      'test timed out after 300ms',
    ])
      assert.ok(timeoutsOnly(failing(message)), message);
    assert.ok(!timeoutsOnly(failing('timed out', 'expected 1 to equal 2')), 'one failure is not a timeout');
    assert.ok(!timeoutsOnly(failing('ETIMEDOUT: the service did not answer in time')), 'a network error is the code under test');
    assert.ok(!timeoutsOnly({ ...failing('timeout!'), timedOut: true }), "the gate's own timeout is not the runner's");
    assert.ok(runAgain(undefined, failing('timeout!'), 0) && !runAgain(undefined, failing('timeout!'), 1), 'once');
    assert.ok(!runAgain(undefined, failing('expected 1 to equal 2'), 0));
    assert.ok(runAgain(2, failing('expected 1 to equal 2'), 1) && !runAgain(2, failing('expected 1 to equal 2'), 2), 'rerunFailures');
  });

  describe('renamed tests', () => {
    const before =
      "const { formatDate } = require('../src/date');\ntest('formats a date', () => {\n  const d = formatDate(new Date(0));\n  assert.equal(d, '1970-01-01');\n});\n";
    const renamed =
      "const { renderDate } = require('../src/date');\ntest('renders a date', () => {\n  const d = renderDate(new Date(0));\n  assert.equal(d, '1970-01-01');\n});\n";
    const weakened =
      "const { renderDate } = require('../src/date');\ntest('renders a date', () => {\n  const d = renderDate(new Date(0));\n  assert.ok(d);\n});\n";

    it('accepts a test whose body is the same but for renamed identifiers, in the same file', () => {
      assert.ok(sameButRenamed(locateTest('dates > formats a date', before), locateTest('dates > renders a date', renamed)));
      assert.deepEqual(
        findRenames([{ name: 'formats a date' }], [{ name: 'renders a date' }], [{ file: 'test/date.test.js', before, after: renamed }]),
        [{ from: 'formats a date', to: 'renders a date', file: 'test/date.test.js' }],
      );
    });

    it('refuses a body that changed otherwise, and a test moved to another file', () => {
      assert.ok(!sameButRenamed(locateTest('formats a date', before), locateTest('renders a date', weakened)), 'the assertion changed');
      assert.deepEqual(
        findRenames(
          [{ name: 'formats a date', file: 'test/date.test.js' }],
          [{ name: 'renders a date', file: 'test/other.test.js' }],
          [{ file: 'test/date.test.js', before, after: "test('x', () => {});\n" }],
        ),
        [],
      );
    });

    it('finds python and go tests by their function', () => {
      const py = 'def test_parse_header():\n    assert parse_header("a: b") == ("a", "b")\n\ndef test_other():\n    pass\n';
      const pyRenamed = 'def test_read_header():\n    assert read_header("a: b") == ("a", "b")\n\ndef test_other():\n    pass\n';
      assert.ok(
        sameButRenamed(locateTest('tests/test_h.py::test_parse_header', py), locateTest('tests/test_h.py::test_read_header', pyRenamed)),
      );
      const go = 'func TestParse(t *testing.T) {\n\tif Parse("1") != 1 { t.Fatal("x") }\n}\n';
      assert.ok(sameButRenamed(locateTest('TestParse', go), locateTest('TestRead', go.replace(/Parse/g, 'Read'))));
    });
  });

  describe('what defines a gate', () => {
    let ws: TempWorkspace;
    afterEach(async () => ws?.cleanup());

    it('takes the scripts and configs a command names, not the source file it checks', async () => {
      ws = await makeTempWorkspace({
        files: {
          'src/x.js': 'module.exports = 1;\n',
          'scripts/check.sh': 'exit 0\n',
          'tools/verify.js': '',
          'ci.json': '{}',
          'test/x.test.js': '',
          'pytest.ini': '',
        },
      });
      const keys = async (command: string) =>
        (await definitionParts({ name: 'g', command, kind: 'custom', required: true }, ws.dir)).map((p) => p.key);
      assert.deepEqual(await keys(`node -e "require('./src/x.js')"`), []);
      assert.deepEqual(await keys('node --test test/x.test.js'), []);
      assert.deepEqual(await keys('bash scripts/check.sh && node tools/verify.js --config ci.json'), [
        'scripts/check.sh',
        'tools/verify.js',
        'ci.json',
      ]);
      assert.deepEqual(await keys('node src/x.js'), ['src/x.js'], 'the script a gate runs defines it');
      assert.deepEqual(await keys('python -m pytest -c pytest.ini src/x.js'), ['pytest.ini']);
      assert.deepEqual(await keys(`sh -c "bash scripts/check.sh"`), ['scripts/check.sh']);
    });

    it("tells test files apart by convention, runner config and the task's own globs", async () => {
      ws = await makeTempWorkspace({
        files: {
          'package.json': JSON.stringify({ jest: { testMatch: ['**/checks/**/*.js'] } }),
          '.mocharc.yml': 'spec:\n  - verify/*.js\n',
          'pytest.ini': '[pytest]\npython_files = check_*.py\n',
        },
      });
      const isTest = await testFileMatcher(ws.dir, { config: ['qa/**'] });
      for (const file of [
        'test/a.js',
        'src/a.test.ts',
        'lib/__tests__/a.js',
        'tests/test_a.py',
        'a_test.go',
        'checks/deep/a.js',
        'verify/a.js',
        'check_a.py',
        'qa/x.txt',
      ])
        assert.ok(isTest(file), file);
      for (const file of ['src/a.js', 'README.md', 'lib/testing.js']) assert.ok(!isTest(file), file);
      const own = await testFileMatcher(ws.dir, { task: ['regress/**'] });
      assert.ok(own('regress/a.js') && !own('test/a.js'), 'a task that names its test files gets only those');
    });
  });

  describe('fail-to-pass proof', () => {
    const config = parseConfig({});
    it('is due for bugfix by default, per type in proof.types, and per task', () => {
      assert.equal(proofKind({ type: 'bugfix' }, config), 'fail-to-pass');
      assert.equal(proofKind({ type: 'feature' }, config), 'none');
      assert.equal(proofKind({ type: 'feature' }, parseConfig({ proof: { types: { feature: 'fail-to-pass' } } })), 'fail-to-pass');
      assert.equal(proofKind({ type: 'bugfix', proof: 'none' }, config), 'none');
    });

    it('holds when a test of the task fails on the base code and passes on the result; a test passing on both is named', () => {
      const scratch = outcome(['header › parses folded lines'], 3);
      scratch.parsed.tests!.failures[0].file = 'test/header.test.js';
      scratch.parsed.tests!.names = [
        { name: 'header › parses folded lines', status: 'fail', file: 'test/header.test.js' },
        { name: 'header › returns a value', status: 'pass', file: 'test/header.test.js' },
        { name: 'old', status: 'pass', file: 'test/old.test.js' },
      ];
      const result = outcome([], 3);
      result.parsed.tests!.names = [
        { name: 'header › parses folded lines', status: 'pass', file: 'test/header.test.js' },
        { name: 'header › returns a value', status: 'pass', file: 'test/header.test.js' },
        { name: 'old', status: 'pass', file: 'test/old.test.js' },
      ];
      const proof = judgeProof(['test/header.test.js'], [{ gate: 'tests', scratch, result, base: base([]) }]);
      assert.equal(proof.status, 'proven');
      assert.deepEqual(proof.tests, [{ name: 'header › parses folded lines', baseFailure: 'header › parses folded lines broke' }]);
      assert.deepEqual(proof.passingOnBase, ['header › returns a value']);

      const nothing = judgeProof(
        ['test/header.test.js'],
        [{ gate: 'tests', scratch: outcome([], 3, { parsed: { tests: { ...result.parsed.tests! } } }), result, base: base([]) }],
      );
      assert.equal(nothing.status, 'not-proven');
      assert.match(
        nothing.reason,
        /the tests in `test\/header\.test\.js` pass on the base code too: `header › parses folded lines`, `header › returns a value` pass without your change: they do not prove the fix/,
      );
      assert.match(judgeProof([], []).reason, /no test file was added or changed/);
    });

    it('does not count a failure that was already there at the base', () => {
      const scratch = outcome(['old date test'], 3);
      assert.equal(
        judgeProof(['test/a.test.js'], [{ gate: 'tests', scratch, result: outcome([], 3), base: base(['old date test']) }]).status,
        'not-proven',
      );
    });
  });

  it('reads go test -v names (go is not installed here: its documented -v output) and none without -v', () => {
    const verbose = [
      '=== RUN   TestAdds',
      '--- PASS: TestAdds (0.00s)',
      '=== RUN   TestSubtracts',
      '    calc_test.go:9: subtraction is off',
      '--- FAIL: TestSubtracts (0.00s)',
      '=== RUN   TestDivides',
      '    calc_test.go:12: later',
      '--- SKIP: TestDivides (0.00s)',
      'FAIL',
      'FAIL\texample.com/calc\t0.002s',
      '',
    ].join('\n');
    const tests = parseGateOutput('tests', verbose).tests;
    assert.deepEqual(
      tests?.names?.map((t) => `${t.name}: ${t.status}`),
      ['TestAdds: pass', 'TestSubtracts: fail', 'TestDivides: skip'],
    );
    const quiet = parseGateOutput(
      'tests',
      ['--- FAIL: TestSubtracts (0.00s)', '    calc_test.go:9: subtraction is off', 'FAIL', 'FAIL\texample.com/calc\t0.002s'].join('\n'),
    ).tests;
    assert.equal(quiet?.names, undefined, 'without -v go names only its failures: no inventory');
  });

  it('keeps three significant digits of money below a dollar', () => {
    assert.equal(usdText(0.0692), '$0.0692');
    assert.equal(usdText(0.0042), '$0.00420');
    assert.equal(usdText(0.5), '$0.500');
    assert.equal(usdText(0.99951), '$1.00');
    assert.equal(usdText(12.345), '$12.35');
    assert.equal(usdText(0), '$0.00');
    for (const value of [0.0692, 0.0042, 0.5, 0.99951, 12.345, 0])
      assert.equal(panelUsd(value), usdText(value), 'the panel reads money as the reports do');
  });
});
