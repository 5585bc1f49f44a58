import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { TestCounts } from '../../../src/core/gates/parsers';
import type { TempWorkspace } from '../helpers/tempWorkspace';
import { EXPECTED, JEST_PROJECT, MOCHA_PROJECT, NODE_TEST_PROJECT, useToolProjects, VITEST_PROJECT } from './projects';
import { RUN_TIMEOUT_MS, runTool, type ToolRun } from './toolchain';

/** The counts every fixture suite must produce, and the one failure it names. */
function assertCalcCounts(tests: TestCounts | undefined, failureName: RegExp, message: RegExp): void {
  assert.ok(tests, 'no test counts parsed');
  const { failures, names: _names, ...counts } = tests; // names: checked where the runner gives them
  assert.deepEqual(counts, EXPECTED);
  assert.equal(failures.length, 1, JSON.stringify(failures));
  assert.match(failures[0].name, failureName);
  assert.match(failures[0].message ?? '', message);
}

describe('gate output parsers: JS test runners (real tools)', function () {
  // Real tools start slowly on a busy machine; the unit suite's default 20 s is too tight.
  this.timeout(RUN_TIMEOUT_MS);
  const { tools: toolchain, project: makeProject } = useToolProjects();
  // A fixture project and a plain run of a tool in it are made once per file: the coloured-output test compares
  // against the same runs (same project, same argv) the tests before it read, not a second run of each tool.
  const projects = new Map<Record<string, string>, Promise<TempWorkspace>>();
  const project = (files: Record<string, string>): Promise<TempWorkspace> => {
    const made = projects.get(files) ?? makeProject(files);
    projects.set(files, made);
    return made;
  };
  const plainRuns = new Map<string, Promise<ToolRun>>();
  const runPlain = (argv: string[], dir: string): Promise<ToolRun> => {
    const key = JSON.stringify([dir, argv]);
    const run = plainRuns.get(key) ?? runTool(argv, dir);
    plainRuns.set(key, run);
    return run;
  };

  it('reads mocha spec output: counts, numbered failures with the assertion message', async () => {
    const p = await project(MOCHA_PROJECT);
    const run = await runTool([...toolchain().bin('mocha'), 'test/calc.test.js'], p.dir);
    assert.equal(run.exitCode, 1, run.output);
    assertCalcCounts(parseGateOutput('tests', run.output).tests, /^calc subtracts$/, /subtraction is off/);
  });

  it('reads jest output: the Tests line and the ● failure block', async () => {
    const p = await project(JEST_PROJECT);
    const run = await runPlain([...toolchain().bin('jest'), '--ci'], p.dir);
    assert.equal(run.exitCode, 1, run.output);
    assertCalcCounts(parseGateOutput('tests', run.output).tests, /^calc › subtracts$/, /Expected: 1\nReceived: 2/);
  });

  it('reads jest --verbose output, counts a test file that fails to load, and reads the failures once when jest repeats them', async () => {
    // summaryThreshold 0 makes jest re-print every failure under "Summary of all failing tests" (by default past 20 files).
    const jestConfig = { reporters: [['default', { summaryThreshold: 0 }]] };
    const p = await project({
      ...JEST_PROJECT,
      'package.json': JSON.stringify({ name: 'j', private: true, jest: jestConfig }),
      'broken.test.js': "test('x', () => { syntax error",
    });
    const run = await runTool([...toolchain().bin('jest'), '--ci', '--verbose'], p.dir);
    assert.match(run.output, /Summary of all failing tests/);
    const tests = parseGateOutput('tests', run.output).tests;
    assert.ok(tests, run.output);
    assert.deepEqual([tests.passed, tests.failed, tests.skipped, tests.total], [2, 2, 1, 5]);
    assert.deepEqual(tests.failures.map((f) => f.name).sort(), ['./broken.test.js', 'calc › subtracts']);
    assert.match(
      tests.failures.find((f) => f.name === './broken.test.js')?.message ?? '',
      /^SyntaxError: .*broken\.test\.js: Missing semicolon/,
    );
  });

  it('reads vitest output: `Tests  1 failed | 2 passed | 1 skipped (4)` and the FAIL blocks', async () => {
    const p = await project(VITEST_PROJECT);
    const run = await runPlain([...toolchain().bin('vitest'), 'run'], p.dir);
    assert.equal(run.exitCode, 1, run.output);
    assertCalcCounts(parseGateOutput('tests', run.output).tests, /^calc\.test\.js > calc > subtracts$/, /expected 2 to be 1/);
  });

  it('counts a vitest file that fails to load as a failure', async () => {
    const p = await project({ ...VITEST_PROJECT, 'broken.test.js': "import { test } from 'vitest'; test('x', () => { syntax error" });
    const run = await runTool([...toolchain().bin('vitest'), 'run'], p.dir);
    const tests = parseGateOutput('tests', run.output).tests;
    assert.ok(tests, run.output);
    assert.deepEqual([tests.passed, tests.failed, tests.skipped, tests.total], [2, 2, 1, 5]);
    assert.ok(
      tests.failures.some((f) => f.name === 'broken.test.js'),
      JSON.stringify(tests.failures),
    );
  });

  it('reads node --test in its default TAP form (suites that fail only through a test are not failures)', async () => {
    const p = await project(NODE_TEST_PROJECT);
    const run = await runTool([process.execPath, '--test', '--test-reporter=tap'], p.dir);
    assert.equal(run.exitCode, 1, run.output);
    const tests = parseGateOutput('tests', run.output).tests;
    assertCalcCounts(tests, /^subtracts$/, /subtraction is off/);
    // every test by name with its suite and outcome (the gate-integrity inventory); the suite itself is not a test
    assert.deepEqual(
      tests?.names?.map((t) => [t.name, t.status]),
      [
        ['calc > adds', 'pass'],
        ['calc > multiplies', 'pass'],
        ['calc > subtracts', 'fail'],
        ['calc > divides', 'skip'],
      ],
    );
    assert.match(tests?.names?.[2].file ?? '', /calc\.test\.js$/);
  });

  it('reads node --test with the spec reporter (`ℹ pass N`, the failing tests section)', async () => {
    const p = await project(NODE_TEST_PROJECT);
    const run = await runPlain([process.execPath, '--test', '--test-reporter=spec'], p.dir);
    assert.equal(run.exitCode, 1, run.output);
    assert.match(run.output, /ℹ pass 2/);
    const tests = parseGateOutput('tests', run.output).tests;
    assertCalcCounts(tests, /^subtracts$/, /subtraction is off/);
    // the same inventory as from TAP, read off the spec tree; the failing test's file from its `test at` line
    assert.deepEqual(
      tests?.names?.map((t) => [t.name, t.status]),
      [
        ['calc > adds', 'pass'],
        ['calc > multiplies', 'pass'],
        ['calc > subtracts', 'fail'],
        ['calc > divides', 'skip'],
      ],
    );
    assert.match(tests?.names?.[2].file ?? '', /calc\.test\.js$/);
  });

  it('sums every runner of an npm workspaces monorepo (`npm test --workspaces`)', async () => {
    const files: Record<string, string> = { 'package.json': JSON.stringify({ name: 'mono', private: true, workspaces: ['packages/*'] }) };
    const packages = { mocha: MOCHA_PROJECT, jest: JEST_PROJECT, vitest: VITEST_PROJECT, node: NODE_TEST_PROJECT };
    for (const [name, pkg] of Object.entries(packages)) {
      for (const [rel, content] of Object.entries(pkg)) files[`packages/${name}/${rel}`] = content;
    }
    const p = await project(files);
    const run = await runTool(['npm', 'test', '--workspaces'], p.dir);
    assert.notEqual(run.exitCode, 0, run.output);
    const tests = parseGateOutput('tests', run.output).tests;
    assert.ok(tests, run.output);
    assert.deepEqual([tests.passed, tests.failed, tests.skipped, tests.total], [8, 4, 4, 16]);
    assert.equal(tests.failures.length, 4, JSON.stringify(tests.failures));
  });

  it('parses coloured output the same as plain output', async () => {
    const mocha = await project(MOCHA_PROJECT);
    const jest = await project(JEST_PROJECT);
    const vitest = await project(VITEST_PROJECT);
    const node = await project(NODE_TEST_PROJECT);
    const cases: [string, TempWorkspace, string[]][] = [
      ['mocha', mocha, [...toolchain().bin('mocha'), '--color', 'test/calc.test.js']],
      ['jest', jest, [...toolchain().bin('jest'), '--ci', '--colors']],
      ['vitest', vitest, [...toolchain().bin('vitest'), 'run']],
      ['node --test', node, [process.execPath, '--test', '--test-reporter=spec']],
    ];
    for (const [label, p, argv] of cases) {
      const plain = await runPlain(argv, p.dir);
      const coloured = await runTool(argv, p.dir, { color: true });
      // eslint-disable-next-line no-control-regex -- looking for the colour escape itself
      assert.match(coloured.output, /\u001b\[\d+m/, `${label} printed no colours`);
      const a = parseGateOutput('tests', plain.output).tests;
      const b = parseGateOutput('tests', coloured.output).tests;
      assert.ok(a && b, `${label}: ${coloured.output}`);
      assert.deepEqual({ ...b, failures: b.failures.map((f) => f.name) }, { ...a, failures: a.failures.map((f) => f.name) }, label);
      assert.equal(b.failed, 1, label);
    }
  });

  it('reads the plain `N passed, N failed` line of a home-made runner, with or without skipped and a label', async () => {
    const p = await project({
      'run.js':
        "console.log('checking...');\nconsole.log('Results: 3 passed, 1 failed, 2 skipped');\nconsole.log('4 passed, 0 failed');\nprocess.exit(1);\n",
    });
    const run = await runTool([process.execPath, 'run.js'], p.dir);
    const tests = parseGateOutput('tests', run.output).tests;
    assert.deepEqual(tests, { passed: 7, failed: 1, skipped: 2, total: 10, failures: [] });
    assert.equal(parseGateOutput('tests', 'all good').tests, undefined);
  });
});
