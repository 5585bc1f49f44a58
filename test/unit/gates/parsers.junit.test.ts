import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { RalphConfigSchema } from '../../../src/core/config/schema';
import type { GateConfig } from '../../../src/core/config/schema';
import { readJUnit } from '../../../src/core/gates/parsers/junit';
import type { TestCounts } from '../../../src/core/gates/parsers';
import { ProcessGateRunner, runGates } from '../../../src/core/gates/runGates';

/**
 * JUnit XML reports (issue 47) as each tool writes them: jest-junit 16, mocha-junit-reporter 2,
 * vitest 3 `--reporter=junit`, pytest 8 `--junitxml`, PHPUnit 11 `--log-junit`, go-junit-report 2
 * and Playwright 1.4x, each on a small suite with a pass, a failure and a skip; then the report
 * file's life in a gate's run: stale, missing, forged and malformed reports are never read.
 */
function counts(tests: TestCounts | undefined): number[] {
  assert.ok(tests, 'no test counts');
  return [tests.passed, tests.failed, tests.skipped, tests.total];
}

function read(xml: string, cwd = '/work'): TestCounts {
  const result = readJUnit(xml, cwd);
  assert.ok('tests' in result, 'error' in result ? result.error : '');
  return result.tests;
}

function names(tests: TestCounts): string[] {
  return (tests.names ?? []).map((t) => `${t.name}: ${t.status}${t.file ? ` @ ${t.file}` : ''}`);
}

const JEST_JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="jest tests" tests="4" failures="1" errors="0" time="1.234">
  <testsuite name="calc" errors="0" failures="1" skipped="1" timestamp="2026-12-05T01:00:00" time="0.912" tests="4">
    <testcase classname="calc adds" name="calc adds" time="0.002">
    </testcase>
    <testcase classname="calc subtracts" name="calc subtracts" time="0.004">
      <failure>Error: expect(received).toBe(expected) // Object.is equality

Expected: 1
Received: 3
    at Object.toBe (/work/test/calc.test.js:9:27)
    at Promise.then.completed (/work/node_modules/jest-circus/build/utils.js:298:28)</failure>
    </testcase>
    <testcase classname="calc later" name="calc later" time="0">
      <skipped/>
    </testcase>
    <testcase classname="calc nested multiplies" name="calc nested multiplies" time="0.001">
    </testcase>
  </testsuite>
</testsuites>
`;

const MOCHA_JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="Mocha Tests" time="0.0120" tests="3" failures="1" skipped="1">
  <testsuite name="Root Suite" timestamp="2026-12-05T01:00:00" tests="0" file="/work/test/calc.test.js" time="0.0000" failures="0">
  </testsuite>
  <testsuite name="calc" timestamp="2026-12-05T01:00:00" tests="3" file="/work/test/calc.test.js" time="0.0050" failures="1" skipped="1">
    <testcase name="calc adds" time="0.0010" classname="adds">
    </testcase>
    <testcase name="calc subtracts" time="0.0020" classname="subtracts">
      <failure message="expected 3 to equal 1" type="AssertionError"><![CDATA[AssertionError: expected 3 to equal 1
    at Context.<anonymous> (test/calc.test.js:9:12)
    at process.processImmediate (node:internal/timers:478:21)]]></failure>
    </testcase>
    <testcase name="calc later" time="0.0000" classname="later">
      <skipped/>
    </testcase>
  </testsuite>
  <testsuite name="calc nested" timestamp="2026-12-05T01:00:00" tests="1" file="/work/test/calc.test.js" time="0.0010" failures="0">
    <testcase name="calc nested multiplies" time="0.0010" classname="multiplies">
    </testcase>
  </testsuite>
</testsuites>
`;

const VITEST_JUNIT = `<?xml version="1.0" encoding="UTF-8" ?>
<testsuites name="vitest tests" tests="3" failures="1" errors="0" time="0.512">
    <testsuite name="test/calc.test.ts" timestamp="2026-12-05T01:00:00.000Z" hostname="box" tests="3" failures="1" errors="0" skipped="1" time="0.004">
        <testcase classname="test/calc.test.ts" name="calc &gt; adds" time="0.001">
        </testcase>
        <testcase classname="test/calc.test.ts" name="calc &gt; subtracts" time="0.002">
            <failure message="expected 3 to be 1 // Object.is equality" type="AssertionError">
AssertionError: expected 3 to be 1 // Object.is equality

- Expected
+ Received

- 1
+ 3

 ❯ test/calc.test.ts:9:22
            </failure>
        </testcase>
        <testcase classname="test/calc.test.ts" name="calc &gt; later" time="0">
            <skipped/>
        </testcase>
    </testsuite>
</testsuites>
`;

const PYTEST_JUNIT = `<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="0" failures="1" skipped="1" tests="4" time="0.045" timestamp="2026-12-05T01:00:00.000000+00:00" hostname="box"><testcase classname="tests.test_calc" name="test_adds" time="0.001" /><testcase classname="tests.test_calc.TestSub" name="test_subtracts" time="0.001"><failure message="assert 3 == 1&#10; +  where 3 = sub(2, 1)">self = &lt;tests.test_calc.TestSub object at 0x7f&gt;

    def test_subtracts(self):
&gt;       assert sub(2, 1) == 1
E       assert 3 == 1

tests/test_calc.py:9: AssertionError</failure></testcase><testcase classname="tests.test_calc" name="test_later" time="0.000"><skipped type="pytest.skip" message="not yet">tests/test_calc.py:12: not yet</skipped></testcase><testcase classname="tests.test_calc.TestAdd" name="test_subtracts" time="0.001" /></testsuite></testsuites>`;

const PHPUNIT_JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="Unit" tests="3" assertions="2" errors="0" failures="1" skipped="1" time="0.012">
    <testsuite name="Tests\\CalcTest" file="/work/tests/CalcTest.php" tests="3" assertions="2" errors="0" failures="1" skipped="1" time="0.012">
      <testcase name="testAdds" file="/work/tests/CalcTest.php" line="9" class="Tests\\CalcTest" classname="Tests.CalcTest" assertions="1" time="0.001"/>
      <testcase name="testSubtracts" file="/work/tests/CalcTest.php" line="14" class="Tests\\CalcTest" classname="Tests.CalcTest" assertions="1" time="0.002">
        <failure type="PHPUnit\\Framework\\ExpectationFailedException">Tests\\CalcTest::testSubtracts
Failed asserting that 3 is identical to 1.

/work/tests/CalcTest.php:16</failure>
      </testcase>
      <testcase name="testLater" file="/work/tests/CalcTest.php" line="20" class="Tests\\CalcTest" classname="Tests.CalcTest" assertions="0" time="0.000">
        <skipped/>
      </testcase>
    </testsuite>
  </testsuite>
</testsuites>
`;

const GO_JUNIT = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="4" failures="1" skipped="1">
	<testsuite name="example.com/calc" tests="4" failures="1" errors="0" id="0" hostname="box" skipped="1" time="0.002" timestamp="2026-12-05T01:00:00Z">
		<properties>
			<property name="go.version" value="go1.22.5 linux/amd64"></property>
		</properties>
		<testcase name="TestAdd" classname="example.com/calc" time="0.000"></testcase>
		<testcase name="TestSub" classname="example.com/calc" time="0.000">
			<failure message="Failed"><![CDATA[    calc_test.go:12: got 3, want 1]]></failure>
		</testcase>
		<testcase name="TestSub/negative" classname="example.com/calc" time="0.000"></testcase>
		<testcase name="TestLater" classname="example.com/calc" time="0.000">
			<skipped message="Skipped"><![CDATA[    calc_test.go:20: not yet]]></skipped>
		</testcase>
	</testsuite>
</testsuites>
`;

const PLAYWRIGHT_JUNIT = `<testsuites id="" name="" tests="4" failures="1" skipped="0" errors="0" time="3.214">
<testsuite name="example.spec.ts" timestamp="2026-12-05T01:00:00.000Z" hostname="chromium" tests="2" failures="1" skipped="0" time="2.1" errors="0">
<testcase name="home › has title" classname="example.spec.ts" time="1.2">
</testcase>
<testcase name="home › get started link" classname="example.spec.ts" time="0.9">
<failure message="example.spec.ts:10:3 get started link" type="FAILURE">
<![CDATA[  [chromium] › example.spec.ts:10:3 › home › get started link ────────────────

    Error: Timed out 5000ms waiting for expect(locator).toBeVisible()

    Locator: getByRole('heading', { name: 'Installation' })
]]>
</failure>
</testcase>
</testsuite>
<testsuite name="example.spec.ts" timestamp="2026-12-05T01:00:00.000Z" hostname="firefox" tests="2" failures="0" skipped="0" time="1.1" errors="0">
<testcase name="home › has title" classname="example.spec.ts" time="0.6">
</testcase>
<testcase name="home › get started link" classname="example.spec.ts" time="0.5">
</testcase>
</testsuite>
</testsuites>`;

describe('gate output parsers: JUnit XML reports', () => {
  it('jest-junit: counts from the test cases, the title once (its classname repeats it), the failure without its stack', () => {
    const tests = read(JEST_JUNIT);
    assert.deepEqual(counts(tests), [2, 1, 1, 4]);
    assert.deepEqual(names(tests), ['calc adds: pass', 'calc subtracts: fail', 'calc later: skip', 'calc nested multiplies: pass']);
    assert.deepEqual(tests.failures, [
      { name: 'calc subtracts', message: 'Error: expect(received).toBe(expected) // Object.is equality\nExpected: 1\nReceived: 3' },
    ]);
  });

  it('mocha-junit-reporter: flat suites, the file from the suite, relative to the gate’s folder; the empty root suite adds nothing', () => {
    const tests = read(MOCHA_JUNIT);
    assert.deepEqual(counts(tests), [2, 1, 1, 4]);
    assert.deepEqual(names(tests), [
      'test/calc.test.js > calc adds: pass @ test/calc.test.js',
      'test/calc.test.js > calc subtracts: fail @ test/calc.test.js',
      'test/calc.test.js > calc later: skip @ test/calc.test.js',
      'test/calc.test.js > calc nested multiplies: pass @ test/calc.test.js',
    ]);
    assert.equal(tests.failures[0].message, 'expected 3 to equal 1');
  });

  it('vitest: the suite named by its file is the file, said once: `file > suite > test`', () => {
    const tests = read(VITEST_JUNIT);
    assert.deepEqual(counts(tests), [1, 1, 1, 3]);
    assert.deepEqual(names(tests), [
      'test/calc.test.ts > calc > adds: pass @ test/calc.test.ts',
      'test/calc.test.ts > calc > subtracts: fail @ test/calc.test.ts',
      'test/calc.test.ts > calc > later: skip @ test/calc.test.ts',
    ]);
    assert.equal(tests.failures[0].message, 'expected 3 to be 1 // Object.is equality\n- Expected\n+ Received\n- 1');
  });

  it('pytest: the class keeps two tests of one name apart; `&#10;` in a message is a line break', () => {
    const tests = read(PYTEST_JUNIT);
    assert.deepEqual(counts(tests), [2, 1, 1, 4]);
    assert.deepEqual(names(tests), [
      'pytest > tests.test_calc > test_adds: pass',
      'pytest > tests.test_calc.TestSub > test_subtracts: fail',
      'pytest > tests.test_calc > test_later: skip',
      'pytest > tests.test_calc.TestAdd > test_subtracts: pass',
    ]);
    assert.match(tests.failures[0].message ?? '', /^assert 3 == 1\n\+ {2}where 3 = sub\(2, 1\)\n/);
  });

  it('PHPUnit: nested suites; the class suite that is the file is said once', () => {
    const tests = read(PHPUNIT_JUNIT);
    assert.deepEqual(counts(tests), [1, 1, 1, 3]);
    assert.deepEqual(names(tests), [
      'tests/CalcTest.php > Unit > testAdds: pass @ tests/CalcTest.php',
      'tests/CalcTest.php > Unit > testSubtracts: fail @ tests/CalcTest.php',
      'tests/CalcTest.php > Unit > testLater: skip @ tests/CalcTest.php',
    ]);
    assert.match(tests.failures[0].message ?? '', /Failed asserting that 3 is identical to 1\./);
  });

  it('go-junit-report: the package once; a bare "Failed" message gets the line that says why', () => {
    const tests = read(GO_JUNIT);
    assert.deepEqual(counts(tests), [2, 1, 1, 4]);
    assert.deepEqual(names(tests).slice(0, 3), [
      'example.com/calc > TestAdd: pass',
      'example.com/calc > TestSub: fail',
      'example.com/calc > TestSub/negative: pass',
    ]);
    assert.deepEqual(tests.failures, [{ name: 'example.com/calc > TestSub', message: 'Failed\ncalc_test.go:12: got 3, want 1' }]);
  });

  it('Playwright: the same test in two projects is two tests, made distinct', () => {
    const tests = read(PLAYWRIGHT_JUNIT);
    assert.deepEqual(counts(tests), [3, 1, 0, 4]);
    assert.deepEqual(names(tests), [
      'example.spec.ts > home › has title: pass @ example.spec.ts',
      'example.spec.ts > home › get started link: fail @ example.spec.ts',
      'example.spec.ts > home › has title (2): pass @ example.spec.ts',
      'example.spec.ts > home › get started link (2): pass @ example.spec.ts',
    ]);
    assert.match(tests.failures[0].message ?? '', /Error: Timed out 5000ms waiting for expect\(locator\)\.toBeVisible\(\)/);
  });

  it('a bare <testsuite>, an <error> and a suite that failed outside its cases (a file that did not load) all fail', () => {
    const tests = read(`<?xml version="1.0"?>
<testsuite name="checks" tests="2" failures="0" errors="2">
  <testcase classname="checks/a.js" name="loads config"><error message="ENOENT: no such file" type="Error"/></testcase>
  <testcase classname="checks/a.js" name="greets"/>
</testsuite>`);
    assert.deepEqual(counts(tests), [1, 2, 0, 3]);
    assert.deepEqual(names(tests), [
      'checks/a.js > checks > loads config: fail @ checks/a.js',
      'checks/a.js > checks > greets: pass @ checks/a.js',
      'checks (suite error): fail',
    ]);
    assert.equal(tests.failures[0].message, 'ENOENT: no such file');
  });

  it('an empty run is read as no tests; a truncated, non-XML or foreign document is not read', () => {
    assert.deepEqual(counts(read('<testsuites tests="0"/>')), [0, 0, 0, 0]);
    const truncated = readJUnit(MOCHA_JUNIT.slice(0, MOCHA_JUNIT.indexOf('calc later')));
    assert.ok('error' in truncated && /not well-formed XML/.test(truncated.error), JSON.stringify(truncated));
    assert.ok('error' in readJUnit(''));
    assert.ok('error' in readJUnit('3 passed, 0 failed'));
    const html = readJUnit('<html><body>report</body></html>');
    assert.ok('error' in html && /no <testsuites> or <testsuite>/.test(html.error));
  });
});

describe('a gate with a JUnit report: only the file this run wrote is read', function () {
  this.timeout(30000);
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-junit-'));
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

  const PASSING = '<testsuites><testsuite name="checks"><testcase classname="checks.js" name="adds"/></testsuite></testsuites>';
  const FAILING =
    '<testsuites><testsuite name="checks"><testcase classname="checks.js" name="adds"><failure message="2 + 3 is -1"/></testcase></testsuite></testsuites>';
  const gate = (command: string, report = 'reports/junit.xml'): GateConfig => ({
    name: 'tests',
    command,
    kind: 'tests',
    required: true,
    report: { junit: report },
  });
  const run = async (g: GateConfig) =>
    (await runGates({ gates: [g], runner: new ProcessGateRunner(new NodeCommandRunner()), cwd: dir, reuse: 'any' })).outcomes[0];
  /** A command that writes `xml` to the report, then prints nothing a console parser reads. */
  const writes = (xml: string, exit = 0) =>
    `node -e "require('fs').mkdirSync('reports',{recursive:true});require('fs').writeFileSync('reports/junit.xml',process.argv[1]);console.log('checks done');process.exitCode=${exit}" '${xml}'`;

  it('the report the run wrote decides: its failing test fails the gate though the exit code is 0', async () => {
    const outcome = await run(gate(writes(FAILING)));
    assert.equal(outcome.passed, false);
    assert.equal(outcome.summary, '0/1 tests passing, 1 failing');
    assert.deepEqual(outcome.parsed.tests?.failures, [{ name: 'checks.js > adds', message: '2 + 3 is -1', file: 'checks.js' }]);
  });

  it('a stale or forged report (there before the run, which writes none) is removed and never read: not read, the exit code alone', async () => {
    await fs.mkdir(path.join(dir, 'reports'));
    await fs.writeFile(path.join(dir, 'reports/junit.xml'), PASSING);
    const outcome = await run(gate('node -e "console.log(\'3 passed, 0 failed\')"'));
    assert.equal(outcome.parsed.tests, undefined, 'neither the forged file nor the console line');
    assert.equal(
      outcome.summary,
      "passed (JUnit report not read: the run wrote no `reports/junit.xml` (check the runner's reporter flag and its output path))",
    );
    assert.ok(outcome.fixItems.some((f) => f.level === 'observation' && /JUnit report not read/.test(f.text)));
    await assert.rejects(fs.stat(path.join(dir, 'reports/junit.xml')), 'the stale file was removed before the run');
  });

  it('a malformed (truncated) report is not read, never a pass of its own: a red exit code fails the gate', async () => {
    const outcome = await run(gate(writes(FAILING.slice(0, 80), 1)));
    assert.equal(outcome.passed, false);
    assert.equal(outcome.parsed.tests, undefined);
    assert.match(
      outcome.summary,
      /^failed with exit code 1 \(JUnit report not read: `reports\/junit\.xml`: the report is not well-formed XML/,
    );
  });

  it('a report that cannot be removed before the run (a folder in its place) is not read', async () => {
    await fs.mkdir(path.join(dir, 'reports/junit.xml'), { recursive: true });
    const outcome = await run(gate('true'));
    assert.equal(outcome.parsed.tests, undefined);
    assert.match(outcome.summary, /JUnit report not read: `reports\/junit\.xml` could not be removed before the run/);
  });

  it('the setting: a path inside the task’s folder', () => {
    const parse = (junit: string) =>
      RalphConfigSchema.safeParse({ gates: [{ name: 't', command: 'x', kind: 'tests', report: { junit } }] }).success;
    assert.equal(parse('reports/junit.xml'), true);
    assert.equal(parse('../junit.xml'), false);
    assert.equal(parse('/tmp/junit.xml'), false);
    assert.equal(parse(''), false);
  });
});
