import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { hasCommand, RUN_TIMEOUT_MS, runTool, skipBecause } from './toolchain';

/**
 * pytest, go test and cargo test run only where their toolchain is installed; elsewhere the
 * case is skipped and says why. Each project has the same shape as the JS ones: two passing
 * tests, one failing (`subtracts`), one skipped.
 */
describe('gate output parsers: pytest, go test, cargo test (real tools where installed)', function () {
  // Real tools start slowly on a busy machine; the unit suite's default 20 s is too tight.
  this.timeout(RUN_TIMEOUT_MS);
  const workspaces: TempWorkspace[] = [];
  const project = async (files: Record<string, string>) => {
    const w = await makeTempWorkspace({ prefix: 'ralph-gate-', files });
    workspaces.push(w);
    return w;
  };
  after(async () => {
    for (const w of workspaces) await w.cleanup();
  });

  it('reads pytest: the `=== 1 failed, 2 passed, 1 skipped in 0.1s ===` line and FAILED lines', async function () {
    if (!(await hasCommand(['python3', '-m', 'pytest', '--version']))) return skipBecause(this, '`python3 -m pytest` is not installed');
    const p = await project({
      'test_calc.py': `import pytest
def sub(a, b):
    return a - b
def test_adds():
    assert 1 + 2 == 3
def test_multiplies():
    assert 2 * 3 == 6
def test_subtracts():
    assert sub(3, 1) == 1, "subtraction is off"
@pytest.mark.skip(reason="not now")
def test_divides():
    pass
`,
    });
    for (const args of [[], ['-q'], ['--color=yes']]) {
      const run = await runTool(['python3', '-m', 'pytest', '-p', 'no:cacheprovider', ...args], p.dir);
      assert.equal(run.exitCode, 1, run.output);
      const tests = parseGateOutput('tests', run.output).tests;
      assert.deepEqual(
        tests,
        {
          passed: 2,
          failed: 1,
          skipped: 1,
          total: 4,
          failures: [{ name: 'test_calc.py::test_subtracts', message: 'AssertionError: subtraction is off', file: 'test_calc.py' }],
        },
        args.join(' '),
      );
    }
  });

  it('reads go test -v (`--- PASS/FAIL/SKIP`) and a package that does not build', async function () {
    if (!(await hasCommand(['go', 'version']))) return skipBecause(this, '`go` is not installed');
    const p = await project({
      'go.mod': 'module example.com/calc\n\ngo 1.20\n',
      'calc.go': 'package calc\n\nfunc Sub(a, b int) int { return a - b }\n',
      'calc_test.go': `package calc

import "testing"

func TestAdds(t *testing.T) { if 1+2 != 3 { t.Fatal("add") } }
func TestMultiplies(t *testing.T) { if 2*3 != 6 { t.Fatal("mul") } }
func TestSubtracts(t *testing.T) {
	if got := Sub(3, 1); got != 1 {
		t.Errorf("subtraction is off: got %d, want 1", got)
	}
}
func TestDivides(t *testing.T) { t.Skip("not now") }
`,
      'broken/broken_test.go': 'package broken\n\nimport "testing"\n\nfunc TestBroken(t *testing.T) { undefinedThing() }\n',
    });
    const env = { GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' };
    const verbose = await runTool(['go', 'test', '-v', '.'], p.dir, { env });
    assert.equal(verbose.exitCode, 1, verbose.output);
    const tests = parseGateOutput('tests', verbose.output).tests;
    assert.ok(tests, verbose.output);
    assert.deepEqual([tests.passed, tests.failed, tests.skipped, tests.total], [2, 1, 1, 4]);
    assert.equal(tests.failures[0].name, 'TestSubtracts');
    assert.match(tests.failures[0].message ?? '', /subtraction is off: got 2, want 1/);

    const quiet = await runTool(['go', 'test', './...'], p.dir, { env });
    const all = parseGateOutput('tests', quiet.output).tests;
    assert.ok(all, quiet.output);
    assert.deepEqual(all.failures.map((f) => f.name).sort(), ['TestSubtracts', 'example.com/calc/broken']);
    assert.match(all.failures.find((f) => f.name === 'example.com/calc/broken')?.message ?? '', /undefined: undefinedThing/);
  });

  it('reads cargo test: `test result:` lines summed and the panic message of each failure', async function () {
    if (!(await hasCommand(['cargo', '--version']))) return skipBecause(this, '`cargo` is not installed');
    const p = await project({
      'Cargo.toml': '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n',
      'src/lib.rs': `pub fn sub(a: i32, b: i32) -> i32 { a - b }

#[cfg(test)]
mod tests {
    use super::*;
    #[test] fn adds() { assert_eq!(1 + 2, 3); }
    #[test] fn subtracts() { assert_eq!(sub(3, 1), 1, "subtraction is off"); }
    #[test] #[ignore] fn divides() {}
}
`,
      'tests/more.rs': '#[test]\nfn multiplies() { assert_eq!(2 * 3, 6); }\n',
    });
    // --no-fail-fast runs every test binary, so there are several `test result:` lines to sum.
    const run = await runTool(['cargo', 'test', '--offline', '--no-fail-fast'], p.dir, {
      env: { CARGO_TARGET_DIR: p.path('target'), CARGO_TERM_COLOR: 'always' },
    });
    assert.equal(run.exitCode, 101, run.output);
    assert.ok((run.output.match(/test result:/g) ?? []).length >= 2, run.output);
    const tests = parseGateOutput('tests', run.output).tests;
    assert.ok(tests, run.output);
    assert.deepEqual([tests.passed, tests.failed, tests.skipped, tests.total], [2, 1, 1, 4]);
    assert.equal(tests.failures.length, 1);
    assert.equal(tests.failures[0].name, 'tests::subtracts');
    assert.match(tests.failures[0].message ?? '', /subtraction is off/);
  });
});
