import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import { withTestLocations } from '../../../src/core/gates/testLocations';

/**
 * A test whose library throws: the failure's stack starts in the library's own source, and the
 * test's file must still be the test file (or unsaid) — never the code under test, which gate
 * integrity would then guard as if it were the test (issue 33). Real outputs, trimmed: vitest 3
 * on content-type's suite (realrepos case content-type-3817c1a), jest 29, mocha 11 and cargo on
 * small projects. ava, tape and node-tap: parsers.ava.test.ts and parsers.tap.test.ts.
 */
const VITEST = `
 RUN  v3.2.7 /work/content-type

 ❯ src/format.spec.ts (3 tests | 1 failed) 12ms
   ✓ format(obj) > should format basic type 1ms
   × format(obj) > should quote parameter value containing HTAB 4ms
     → Invalid parameter value: bar	baz
   ✓ format(obj) > should reject invalid type 1ms
 ✓ src/parse.spec.ts (34 tests) 11ms

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/format.spec.ts > format(obj) > should quote parameter value containing HTAB
TypeError: Invalid parameter value: bar	baz
 ❯ qstring src/index.ts:209:9
    207|   if (TEXT_REGEXP.test(str)) return \`"\${str.replace(QUOTE_REGEXP, "\\\\$…
    208| 
    209|   throw new TypeError(\`Invalid parameter value: \${str}\`);
       |         ^
 ❯ format src/index.ts:60:31
 ❯ src/format.spec.ts:68:17

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯


 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 36 passed (37)
`;

const JEST = `FAIL ./parse.test.js
  ● parse › rejects a number

    TypeError: parse wants a string

      1 | exports.parse = (s) => {
    > 2 |   if (typeof s !== 'string') throw new TypeError('parse wants a string');
        |                                    ^
      3 |   return s.split(',');

      at Object.<anonymous>.exports.parse (lib.js:2:36)
      at Object.parse (parse.test.js:4:41)

PASS ./more.test.js

Test Suites: 1 failed, 1 passed, 2 total
Tests:       1 failed, 2 passed, 3 total
Snapshots:   0 total
`;

const MOCHA = `

  esm
    1) throws from the library

  parse
    ✔ splits
    2) rejects a number


  1 passing (10ms)
  2 failing

  1) esm
       throws from the library:
     TypeError: parse wants a string
      at exports.parse (lib.js:2:36)
      at Context.<anonymous> (file:///work/test/esm.test.mjs:4:66)
      at process.processImmediate (node:internal/timers:483:21)

  2) parse
       rejects a number:
     TypeError: parse wants a string
      at exports.parse (lib.js:2:36)
      at Context.<anonymous> (test/parse.test.js:5:55)
      at process.processImmediate (node:internal/timers:483:21)

`;

const CARGO = `     Running unittests src/lib.rs (target/debug/deps/calc-c6626fb655a8d231)

running 1 test
test tests::adds ... ok

test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s

     Running tests/more.rs (target/debug/deps/more-610f748fa03030a4)

running 2 tests
test big ... FAILED
test fine ... ok

failures:

---- big stdout ----

thread 'big' (28887) panicked at src/lib.rs:1:50:
too big
note: run with \`RUST_BACKTRACE=1\` environment variable to display a backtrace


failures:
    big

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
`;

describe('gate output parsers: a failure thrown from the library names the test file, never the library', () => {
  it('vitest: the file of `file > suite > test`', () => {
    const tests = parseGateOutput('tests', VITEST).tests;
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file]),
      [['src/format.spec.ts > format(obj) > should quote parameter value containing HTAB', 'src/format.spec.ts']],
    );
  });

  it('jest: the file of the `FAIL` header the failure is under', () => {
    const tests = parseGateOutput('tests', JEST).tests;
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file]),
      [['parse › rejects a number', 'parse.test.js']],
    );
  });

  it('mocha: no file from its spec output (the stack says lib.js); the probe\u2019s locations give the test files', () => {
    const tests = parseGateOutput('tests', MOCHA).tests;
    assert.ok(tests);
    assert.deepEqual(
      tests.failures.map((f) => [f.name, f.file]),
      [
        ['esm throws from the library', undefined],
        ['parse rejects a number', undefined],
      ],
    );
    const located = withTestLocations(tests, [
      { name: 'esm throws from the library', file: 'test/esm.test.mjs' },
      { name: 'parse rejects a number', file: 'test/parse.test.js' },
      { name: 'parse splits', file: 'test/parse.test.js' },
    ]);
    assert.deepEqual(
      located.names?.map((t) => [t.name, t.status, t.file]),
      [
        ['esm throws from the library', 'fail', 'test/esm.test.mjs'],
        ['parse splits', 'pass', 'test/parse.test.js'],
        ['parse rejects a number', 'fail', 'test/parse.test.js'],
      ],
    );
  });

  it('cargo: the integration binary\u2019s file, not the panic\u2019s place in the library', () => {
    const tests = parseGateOutput('tests', CARGO).tests;
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file, f.message]),
      [['big', 'tests/more.rs', "thread 'big' (28887) panicked at src/lib.rs:1:50:\ntoo big"]],
    );
    assert.equal(tests?.names?.find((t) => t.name === 'tests::adds')?.file, undefined, 'an inline test may live in any module file');
  });
});
