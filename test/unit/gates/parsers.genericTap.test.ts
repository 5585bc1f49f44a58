import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { TestCounts } from '../../../src/core/gates/parsers';

/**
 * TAP as the universal channel (issue 47): a TAP document that no runner's dialect claims is read
 * through tap-parser — names, counts, failures with what was expected and what came. The outputs
 * are real runs of brittle 3.19 (Holepunch's runner), trimmed: fast-fifo's suite at the base of
 * the realrepos case fast-fifo-4b05a4b (its failing `peek edgecase`), and a file of brittle's
 * subtests, skips, todos and repeated names.
 */
function counts(tests: TestCounts | undefined): number[] {
  assert.ok(tests, 'no test counts');
  return [tests.passed, tests.failed, tests.skipped, tests.total];
}

function names(tests: TestCounts | undefined): string[] | undefined {
  return tests?.names?.map((t) => `${t.name}: ${t.status}`);
}

const BRITTLE_RED = `
> fast-fifo@1.3.0 test
> brittle test.js

TAP version 13

# basic
    ok 1 - should be equal
    ok 2 - expected truthy value
    ok 3 - should be equal
ok 1 - basic # time = 2.055646ms

# long length
    ok 1 - should be equal
    ok 2 - should be equal
    ok 3 - should be equal
ok 2 - long length # time = 1.578086ms

# clear
    ok 1 - should be equal
    ok 2 - should be equal
    ok 3 - should be equal
ok 3 - clear # time = 0.171686ms

# basic length
    ok 1 - should be equal
    ok 2 - should be equal
    ok 3 - should be equal
ok 4 - basic length # time = 0.066199ms

# peek
    ok 1 - should be equal
    ok 2 - should be equal
    ok 3 - should be equal
ok 5 - peek # time = 0.120619ms

# peek edgecase
    ok 1 - should be equal
    ok 2 - should be equal
    ok 3 - should be equal
    not ok 5 - should be equal
      ---
      actual: undefined
      expected: e
      operator: is
      source: |
          t.is(q.peek(), q.shift())
          t.is(q.peek(), q.shift())
        ----^
          t.is(q.peek(), q.shift())
        })
      stack: |
        ./test.js:133:5
        process.processTicksAndRejections (node:internal/process/task_queues:95:5)
      ...
not ok 6 - peek edgecase # time = 2.754896ms

# invalid hwm
    ok 1 - should throw
ok 7 - invalid hwm # time = 0.215871ms

1..7
# tests = 6/7 pass
# asserts = 79/80 pass
# time = 15.158188ms

# not ok
`;

const BRITTLE_SHAPES = `TAP version 13

# outer
    ok 1 - expected truthy value
    not ok 2 - (inner a) - should be equal
      ---
      actual: 1
      expected: 2
      operator: is
      source: |
          t.ok(true)
          await t.test('inner a', function (t) { t.is(1, 2) })
        -------------------------------------------^
          await t.test('inner b', function (t) { t.ok(true) })
        })
      stack: |
        ./x.test.js:4:44
        ./x.test.js:4:11
        process.processTicksAndRejections (node:internal/process/task_queues:95:5)
      ...
    ok 3 - (inner b) - expected truthy value
not ok 1 - outer # time = 5.022127ms

# skipped one
ok 2 - skipped one # SKIP

# todo one
ok 3 - todo one # TODO

# suite
    ok 1 - (x) - expected truthy value
ok 4 - suite # time = 0.166468ms

# same
    ok 1 - expected truthy value
ok 5 - same # time = 0.087419ms

# same
    ok 1 - expected truthy value
ok 6 - same # time = 0.030856ms

1..6
# tests = 5/6 pass
# asserts = 5/6 pass
# time = 20.670364ms

# not ok
`;

describe('gate output parsers: TAP of a runner no dialect names (brittle)', () => {
  it('names each test by its point (its indented assertions are not tests), the failing one with its expected and actual values', () => {
    const tests = parseGateOutput('tests', BRITTLE_RED).tests;
    assert.deepEqual(counts(tests), [6, 1, 0, 7]);
    assert.deepEqual(names(tests), [
      'basic: pass',
      'long length: pass',
      'clear: pass',
      'basic length: pass',
      'peek: pass',
      'peek edgecase: fail',
      'invalid hwm: pass',
    ]);
    assert.deepEqual(tests?.failures, [{ name: 'peek edgecase', message: 'should be equal\nexpected: e\nactual: undefined' }]);
  });

  it('a green run: every test passes, none is read as tape cut short', () => {
    const green = BRITTLE_RED.replace(/not ok 5 - should be equal\n(?:.*\n)*?\s+\.\.\.\n/, 'ok 5 - should be equal\n')
      .replace('not ok 6 - peek edgecase', 'ok 6 - peek edgecase')
      .replace('# tests = 6/7 pass', '# tests = 7/7 pass')
      .replace('# not ok', '# ok');
    const tests = parseGateOutput('tests', green).tests;
    assert.deepEqual(counts(tests), [7, 0, 0, 7]);
    assert.deepEqual(tests?.failures, []);
  });

  it('subtests fail the test that holds them; SKIP and TODO are skipped; a repeated name is made distinct', () => {
    const tests = parseGateOutput('tests', BRITTLE_SHAPES).tests;
    assert.deepEqual(counts(tests), [3, 1, 2, 6]);
    assert.deepEqual(names(tests), ['outer: fail', 'skipped one: skip', 'todo one: skip', 'suite: pass', 'same: pass', 'same (2): pass']);
    assert.equal(tests?.failures[0].message, '(inner a) - should be equal\nexpected: 2\nactual: 1');
  });

  it('a run cut short (no plan): its counts, but no inventory (the tests after it never ran)', () => {
    const cut = BRITTLE_RED.slice(0, BRITTLE_RED.indexOf('# invalid hwm'));
    const tests = parseGateOutput('tests', cut).tests;
    assert.deepEqual(counts(tests), [5, 1, 0, 6]);
    assert.equal(tests?.names, undefined);
  });

  it("tape's flat TAP, cut short, stays tape's (a test per `# name`), whatever its tests print", () => {
    const tape =
      'TAP version 13\n# adds\nok 1 should be equal\n  ok, that was quick\nok 2 should be equal\n# subtracts\nnot ok 3 should be equal\n';
    const tests = parseGateOutput('tests', tape).tests;
    assert.deepEqual(counts(tests), [1, 1, 0, 2]);
    assert.equal(tests?.failures[0].name, 'subtracts');
  });

  it('flat TAP with a plan and no `# name` lines (any TAP producer): each point is a test', () => {
    const tests = parseGateOutput(
      'tests',
      'TAP version 13\nok 1 - adds\nnot ok 2 - subtracts\n  ---\n  expected: 1\n  actual: 2\n  ...\nok 3 - skipped # SKIP\n1..3\n',
    ).tests;
    assert.deepEqual(counts(tests), [1, 1, 1, 3]);
    assert.deepEqual(tests?.failures, [{ name: 'subtracts', message: 'subtracts\nexpected: 1\nactual: 2' }]);
  });
});
