import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { TestCounts } from '../../../src/core/gates/parsers';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { JEST_PROJECT, MOCHA_PROJECT, NODE_TEST_PROJECT, useToolProjects, VITEST_PROJECT } from './projects';
import { hasCommand, RUN_TIMEOUT_MS, runTool, skipBecause } from './toolchain';

/**
 * The test inventory the gate baseline keeps, read from real runners' output: every test by
 * name with its status (so "a test that ran at the base is gone, skipped or emptied" works for
 * them), and each failing test's file. Each fixture has the same four tests: adds, multiplies,
 * subtracts (failing), divides (skipped).
 */
function statuses(tests: TestCounts | undefined): string[] {
  assert.ok(tests?.names, `no inventory: ${JSON.stringify(tests)}`);
  return tests.names.map((t) => `${t.name}: ${t.status}`).sort();
}

describe('test names at the base, from real runners', function () {
  this.timeout(RUN_TIMEOUT_MS);
  const { tools, project } = useToolProjects();
  const extra: TempWorkspace[] = [];
  after(async () => {
    for (const w of extra) await w.cleanup();
  });

  it("node:test (TAP): every test, and the failing test's file", async () => {
    const p = await project(NODE_TEST_PROJECT);
    const tests = parseGateOutput('tests', (await runTool([process.execPath, '--test', '--test-reporter=tap'], p.dir)).output).tests;
    assert.deepEqual(statuses(tests), ['calc > adds: pass', 'calc > divides: skip', 'calc > multiplies: pass', 'calc > subtracts: fail']);
    assert.match(tests?.failures[0].file ?? '', /calc\.test\.js$/);
  });

  it('mocha (its default spec reporter): every test under its suites; no file, which the spec reporter never prints (the probe says it)', async () => {
    const p = await project(MOCHA_PROJECT);
    const tests = parseGateOutput('tests', (await runTool([...tools().bin('mocha'), 'test/calc.test.js'], p.dir)).output).tests;
    assert.deepEqual(statuses(tests), ['calc adds: pass', 'calc divides: skip', 'calc multiplies: pass', 'calc subtracts: fail']);
    assert.equal(tests?.failures[0].name, 'calc subtracts');
    // the failure's stack starts in the test file here, but in the library when the library throws: it is never read
    assert.equal(tests?.failures[0].file, undefined);
  });

  it('jest --verbose: every test with its file; without --verbose (two files) only the failures, with theirs', async () => {
    const p = await project(JEST_PROJECT);
    const verbose = parseGateOutput('tests', (await runTool([...tools().bin('jest'), '--ci', '--verbose'], p.dir)).output).tests;
    assert.deepEqual(statuses(verbose), ['adds: pass', 'calc › divides: skip', 'calc › subtracts: fail', 'multiplies: pass']);
    assert.ok(verbose?.names?.every((t) => t.file === 'calc.test.js' || t.file === 'more.test.js'));
    const plain = parseGateOutput('tests', (await runTool([...tools().bin('jest'), '--ci'], p.dir)).output).tests;
    assert.equal(plain?.names, undefined, 'a partial list is no inventory');
    assert.deepEqual(
      plain?.failures.map((f) => [f.name, f.file]),
      [['calc › subtracts', 'calc.test.js']],
    );
  });

  it('vitest --reporter=verbose: every test as `file > suite > test`', async () => {
    const p = await project(VITEST_PROJECT);
    const tests = parseGateOutput('tests', (await runTool([...tools().bin('vitest'), 'run', '--reporter=verbose'], p.dir)).output).tests;
    assert.deepEqual(statuses(tests), [
      'calc.test.js > calc > adds: pass',
      'calc.test.js > calc > divides: skip',
      'calc.test.js > calc > subtracts: fail',
      'more.test.js > multiplies: pass',
    ]);
    assert.equal(tests?.failures[0].file, 'calc.test.js');
  });

  it('pytest -v: every test by node id and file', async function () {
    if (!(await hasCommand(['python3', '-m', 'pytest', '--version']))) return skipBecause(this, '`python3 -m pytest` is not installed');
    const w = await makeTempWorkspace({
      prefix: 'ralph-gate-',
      files: {
        'tests/test_calc.py':
          'import pytest\ndef test_adds():\n    assert 1 + 2 == 3\nclass TestMore:\n    def test_multiplies(self):\n        assert 2 * 3 == 6\n    def test_subtracts(self):\n        assert 3 - 1 == 1\n@pytest.mark.skip(reason="later")\ndef test_divides():\n    pass\n',
      },
    });
    extra.push(w);
    const tests = parseGateOutput(
      'tests',
      (await runTool(['python3', '-m', 'pytest', '-p', 'no:cacheprovider', '-v'], w.dir)).output,
    ).tests;
    assert.deepEqual(statuses(tests), [
      'tests/test_calc.py::TestMore::test_multiplies: pass',
      'tests/test_calc.py::TestMore::test_subtracts: fail',
      'tests/test_calc.py::test_adds: pass',
      'tests/test_calc.py::test_divides: skip',
    ]);
    const dots = parseGateOutput('tests', (await runTool(['python3', '-m', 'pytest', '-p', 'no:cacheprovider'], w.dir)).output).tests;
    assert.equal(dots?.names, undefined);
    assert.deepEqual(
      dots?.failures.map((f) => f.file),
      ['tests/test_calc.py'],
    );
  });

  it('cargo test: every test of every binary; an integration test in the file cargo runs it from, never where it panicked', async function () {
    if (!(await hasCommand(['cargo', '--version']))) return skipBecause(this, '`cargo` is not installed');
    const w = await makeTempWorkspace({
      prefix: 'ralph-gate-',
      files: {
        'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n',
        'src/lib.rs':
          'pub fn sub(a: i32, b: i32) -> i32 { if a > 100 { panic!("too big") } a - b }\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn adds() { assert_eq!(1 + 2, 3); }\n    #[test]\n    fn subtracts() { assert_eq!(super::sub(3, 1), 1, "subtraction is off"); }\n    #[test]\n    #[ignore]\n    fn divides() {}\n}\n',
        'tests/big.rs': '#[test]\nfn big() { calc::sub(200, 1); }\n',
      },
    });
    extra.push(w);
    const env = { CARGO_TARGET_DIR: w.path('target'), CARGO_TERM_COLOR: 'never', RUST_BACKTRACE: '0' };
    const run = await runTool(['cargo', 'test', '--offline', '--no-fail-fast'], w.dir, { env });
    const tests = parseGateOutput('tests', run.output).tests;
    // `big` panics in src/lib.rs (the code under test): its file is the binary's, tests/big.rs; an inline test's file is not said
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file]),
      [
        ['tests::subtracts', undefined],
        ['big', 'tests/big.rs'],
      ],
      run.output,
    );
    assert.deepEqual(statuses(tests), ['big: fail', 'tests::adds: pass', 'tests::divides: skip', 'tests::subtracts: fail']);
    const quiet = parseGateOutput('tests', (await runTool(['cargo', 'test', '--offline', '-q'], w.dir, { env })).output).tests;
    assert.deepEqual(
      quiet?.failures.map((f) => [f.name, f.file]),
      [['tests::subtracts', undefined]],
    );
  });
});
