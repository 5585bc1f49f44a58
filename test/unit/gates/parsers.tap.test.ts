import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { TestCounts } from '../../../src/core/gates/parsers';
import { timeoutsOnly } from '../../../src/core/gates/rerun';
import type { GateOutcome } from '../../../src/core/gates/types';

/**
 * The TAP runners: tape, node-tap and flat TAP (ava `--tap`, mocha's tap reporter), each read
 * only from the TAP it wrote. The outputs are real runs, trimmed: tape 5.10 under nyc from
 * minimist's suite (realrepos case minimist-63b8fee), node-tap 16 from node-semver's
 * (node-semver-e583226), node-tap 21, ava 4 and mocha 11 on small projects whose library throws.
 */
function counts(tests: TestCounts | undefined): number[] {
  assert.ok(tests, 'no test counts');
  return [tests.passed, tests.failed, tests.skipped, tests.total];
}

function names(tests: TestCounts | undefined): string[] | undefined {
  return tests?.names?.map((t) => `${t.name}: ${t.status}${t.file ? ` @ ${t.file}` : ''}`);
}

const TAPE_NYC = `
> minimist@0.2.2 tests-only
> nyc tape 'test/**/*.js'

TAP version 13
# flag boolean true (default all --args to boolean)
ok 1 should be deeply equivalent
ok 2 should be deeply equivalent
# boolean groups
ok 3 should be deeply equivalent
# -
ok 4 should be deeply equivalent
not ok 5 should be deeply equivalent
  ---
    operator: deepEqual
    expected: |-
      { nnn: '-', _: [] }
    actual: |-
      { _: [ '-' ], nnn: true }
    at: Test.<anonymous> (/tmp/rr/minimist-63b8fee/test/dash.js:9:4)
    stack: |-
      Error: should be deeply equivalent
          at Test.assert [as _assert] (/tmp/rr/minimist-63b8fee/node_modules/tape/lib/test.js:548:48)
          at Test.<anonymous> (/tmp/rr/minimist-63b8fee/test/dash.js:9:4)
  ...
ok 6 should be deeply equivalent
# boolean groups
ok 7 should be strictly equal
# TODO not yet
not ok 8 later # TODO
  ---
    operator: ok
    expected: true
    actual:   false
  ...
# whitespace should be whitespace
ok 9 should be strictly equal

1..9
# tests 9
# pass  8
# fail  1


=============================== Coverage summary ===============================
Statements   : 95.87% ( 116/121 )
================================================================================
`;

/** tape 5.10: a test whose library call throws ends tape's process; node prints the error, no summary follows. */
const TAPE_THROWN = `TAP version 13
# splits
ok 1 should be deeply equivalent
# throws from source
/work/lib.js:2
  if (typeof s !== 'string') throw new TypeError('parse wants a string');
                             ^

TypeError: parse wants a string
    at parse (/work/lib.js:2:36)
    at Test.<anonymous> (/work/test/a.js:9:49)
    at Test.run (/work/node_modules/tape/lib/test.js:151:28)

Node.js v20.20.2
`;

describe('gate output parsers: tape', () => {
  it('names tests (not assertions) by their `# name`, a repeated name made distinct; a test fails when one of its assertions did', () => {
    const tests = parseGateOutput('tests', TAPE_NYC).tests;
    assert.deepEqual(counts(tests), [4, 1, 1, 6], 'tests, not tape\u2019s 9 assertions; nyc\u2019s table is no runner');
    assert.deepEqual(names(tests), [
      'flag boolean true (default all --args to boolean): pass',
      'boolean groups: pass',
      '-: fail',
      'boolean groups (2): pass',
      'not yet: skip',
      'whitespace should be whitespace: pass',
    ]);
    assert.deepEqual(tests?.failures, [
      { name: '-', message: "should be deeply equivalent\nexpected: { nnn: '-', _: [] }\nactual: { _: [ '-' ], nnn: true }" },
    ]);
  });

  it('a test whose library threw: that test fails with the error, no file from the stack, and no inventory (the rest never ran)', () => {
    const tests = parseGateOutput('tests', TAPE_THROWN).tests;
    assert.deepEqual(counts(tests), [1, 1, 0, 2]);
    assert.deepEqual(tests?.failures, [{ name: 'throws from source', message: 'TypeError: parse wants a string' }]);
    assert.equal(tests?.names, undefined);
  });

  it('is not read by node:test (its `# tests`/`# pass` lines look alike): one count, not two', () => {
    const tests = parseGateOutput('tests', TAPE_NYC + NODE_TEST_TAP).tests;
    assert.deepEqual(counts(tests), [4 + 1, 1 + 1, 1, 6 + 2]);
    assert.equal(tests?.names?.length, 8);
  });
});

const NODE_TEST_TAP = `TAP version 13
# Subtest: adds
ok 1 - adds
  ---
  duration_ms: 0.5
  type: 'test'
  ...
# Subtest: subtracts
not ok 2 - subtracts
  ---
  duration_ms: 0.7
  type: 'test'
  location: '/work/calc.test.js:5:3'
  failureType: 'testCodeFailure'
  error: 'subtraction is off'
  ...
1..2
# tests 2
# suites 0
# pass 1
# fail 1
# cancelled 0
# skipped 0
# todo 0
# duration_ms 61.2
`;

/** node-tap 16 (node-semver's suite, its TAP when not on a terminal): each file a top-level subtest. */
const NODE_TAP_16 = `TAP version 13
# Subtest: test/index.js
    ok 1 - just a normal value property
    1..1
    # time=5.711ms
ok 1 - test/index.js # time=5.711ms

# Subtest: test/classes/range.js
    # Subtest: range parsing
        # Subtest: 1.2.x >=1.2.0 <1.3.0-0 undefined
            ok 1 - 1.2.x => >=1.2.0 <1.3.0-0
            ok 2 - parsing both yields same result
            1..2
        ok 1 - 1.2.x >=1.2.0 <1.3.0-0 undefined # time=0.305ms

        # Subtest: 1.x.5 null undefined
            not ok 1 - invalid range: 1.x.5
              ---
              at:
                line: 25
                column: 11
                file: test/classes/range.js
                type: Test
              stack: |
                Test.<anonymous> (test/classes/range.js:25:11)
                Object.<anonymous> (test/classes/range.js:20:1)
              ...

            1..1
            # failed 1 test
        not ok 2 - 1.x.5 null undefined # time=23.76ms

        # Subtest: 1.x.5 null undefined
            ok 1 - parsing both yields same result
            1..1
        ok 3 - 1.x.5 null undefined # time=0.2ms

        1..3
        # failed 1 of 3 tests
    not ok 1 - range parsing # time=420.402ms

    # Subtest: skipped later
    ok 2 - skipped later # SKIP

    1..2
    # failed 1 of 2 tests
    # time=608.046ms
not ok 2 - test/classes/range.js # time=608.046ms
  ---
  env:
    NYC_CONFIG_OVERRIDE: '{"include":"classes/range.js"}'
  file: test/classes/range.js
  timeout: 30000
  exitCode: 1
  ...

1..2
# failed 1 of 2 tests
# time=22921.578ms
`;

/** node-tap 21 (TAP 14): the library throws; tap's own \`at:\` of that assertion is the library's file. */
const NODE_TAP_21 = `TAP version 14
1..1
# Subtest: test/tap/a.test.js
    # Subtest: throws from source
        not ok 1 - parse wants a string
          ---
          stack: |
            parse (lib.js:2:36)
            Test.<anonymous> (test/tap/a.test.js:4:46)
          at:
            fileName: lib.js
            lineNumber: 2
            columnNumber: 36
            functionName: parse
          type: TypeError
          tapCaught: testFunctionThrow
          ...

        1..1
    not ok 1 - throws from source # time=25.769ms
      ---
      at:
        fileName: test/tap/a.test.js
        lineNumber: 4
      ...

    # Subtest: group
        # Subtest: inner bad
            not ok 1 - should be equal
              ---
              compare: ===
              diff: |
                --- expected
                +++ actual
                @@ -1,1 +1,1 @@
                -2
                +1
              ...

            1..1
        not ok 1 - inner bad # time=9.033ms

        1..1
    not ok 2 - group # time=14.018ms

    ok 3 - top-level assertion
    1..3
    # time=143.684ms
not ok 1 - test/tap/a.test.js # time=143.684ms

# { total: 3, pass: 1, fail: 2 }
# time=4282.294ms
`;

describe('gate output parsers: node-tap', () => {
  it('tap 16: tests are the subtests holding assertions, named from the file down; the file is the top-level subtest', () => {
    const tests = parseGateOutput('tests', NODE_TAP_16).tests;
    assert.deepEqual(names(tests), [
      'test/index.js: pass @ test/index.js',
      'test/classes/range.js > range parsing > 1.2.x >=1.2.0 <1.3.0-0 undefined: pass @ test/classes/range.js',
      'test/classes/range.js > range parsing > 1.x.5 null undefined: fail @ test/classes/range.js',
      'test/classes/range.js > range parsing > 1.x.5 null undefined (2): pass @ test/classes/range.js',
      'test/classes/range.js > skipped later: skip @ test/classes/range.js',
    ]);
    assert.deepEqual(counts(tests), [3, 1, 1, 5]);
    assert.deepEqual(tests?.failures, [
      {
        name: 'test/classes/range.js > range parsing > 1.x.5 null undefined',
        message: 'invalid range: 1.x.5',
        file: 'test/classes/range.js',
      },
    ]);
  });

  it('tap 16: a file stopped at its timeout in the middle of a subtest — that subtest did not finish because of the timeout, and says so', () => {
    const output = `TAP version 13
# Subtest: test/bin/semver.js
    # Subtest: sorting and filtering
        ok 1 - should be equal
not ok 1 - test/bin/semver.js # time=30013ms
  ---
  file: test/bin/semver.js
  timeout: 30000
  signal: SIGTERM
  ...

1..1
`;
    const tests = parseGateOutput('tests', output).tests;
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.message]),
      [
        ['test/bin/semver.js', 'timed out: tap stopped it at its timeout (30000 ms)'],
        ['test/bin/semver.js > sorting and filtering', 'did not finish: the test around it timed out (tap stopped it at 30000 ms)'],
      ],
    );
    // what `timeoutsOnly` reads of a gate's outcome: failed, not stopped by Ralph, these tests
    const outcome = { passed: false, timedOut: false, parsed: { tests } } as GateOutcome;
    assert.equal(timeoutsOnly(outcome), true, "only the runner's timeout failed: the run gets its one more run, the timeout lifted");
  });

  it('tap 21: an error thrown in the library names the test file (the top-level subtest), never the library', () => {
    const tests = parseGateOutput('tests', NODE_TAP_21).tests;
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file, f.message]),
      [
        ['test/tap/a.test.js > throws from source', 'test/tap/a.test.js', 'parse wants a string'],
        ['test/tap/a.test.js > group > inner bad', 'test/tap/a.test.js', 'should be equal\n-2\n+1'],
      ],
    );
    assert.deepEqual(counts(tests), [1, 2, 0, 3], 'the file holds an assertion of its own: it is a test too');
  });

  it('output cut in the middle by the command runner (its 400,000-character cap) keeps no inventory', () => {
    const lines = NODE_TAP_16.split('\n');
    const cut = [...lines.slice(0, 12), '… [224082 characters omitted] …', ...lines.slice(30)].join('\n');
    const tests = parseGateOutput('tests', cut).tests;
    assert.equal(tests?.names, undefined);
    const tape = TAPE_NYC.split('\n');
    assert.equal(
      parseGateOutput('tests', [...tape.slice(0, 9), '… [5 characters omitted] …', ...tape.slice(12)].join('\n')).tests?.names,
      undefined,
    );
  });

  it('a run cut short (no top-level plan) counts what it saw and keeps no inventory', () => {
    const cut = NODE_TAP_16.slice(0, NODE_TAP_16.indexOf('    # Subtest: skipped later'));
    const tests = parseGateOutput('tests', cut).tests;
    assert.equal(tests?.names, undefined);
    assert.equal(tests?.failed, 1);
  });
});

/** ava 4 --tap, two files: the thrown error's `at:` starts in the library (index.js). */
const AVA_TAP = `TAP version 13
ok 1 - test › throws › skipped one # SKIP
not ok 2 - test › throws › todo one # TODO
not ok 3 - test › throws › throws from source
  ---
    name: AssertionError
    message: Error thrown in test
    values:
      'Error thrown in test:': |-
        TypeError {
          message: 'Expected the input to be \`string | string[]\`',
        }
    at: |-
      camelCase (file://index.js:58:9)
      file://test/throws.js:5:7
  ...
ok 4 - test › camelCase with locale option

1..4
# tests 3
# pass 1
# skip 1
# fail 2
`;

/** mocha 11 \`--reporter tap\`: no header, the error indented under its point. */
const MOCHA_TAP = `ok 1 esm suite splits
not ok 2 esm suite throws from source
  parse wants a string
  TypeError: parse wants a string
      at Object.parse (lib.js:2:36)
      at Context.<anonymous> (file:///work/test/mocha/a.test.mjs:5:38)
ok 3 esm suite later # SKIP -
# tests 2
# pass 1
# fail 1
1..3
`;

describe('gate output parsers: flat TAP (ava --tap, mocha --reporter tap)', () => {
  it('ava --tap: every test by title; no file, since its `at:` is a stack into the library', () => {
    const tests = parseGateOutput('tests', AVA_TAP).tests;
    assert.deepEqual(names(tests), [
      'test › throws › skipped one: skip',
      'test › throws › todo one: skip',
      'test › throws › throws from source: fail',
      'test › camelCase with locale option: pass',
    ]);
    assert.deepEqual(tests?.failures, [{ name: 'test › throws › throws from source', message: 'Error thrown in test' }]);
  });

  it("mocha's tap reporter: names as mocha's full titles, the error's first lines", () => {
    const tests = parseGateOutput('tests', MOCHA_TAP).tests;
    assert.deepEqual(counts(tests), [1, 1, 1, 3]);
    assert.deepEqual(tests?.failures, [
      { name: 'esm suite throws from source', message: 'parse wants a string\nTypeError: parse wants a string' },
    ]);
  });
});
