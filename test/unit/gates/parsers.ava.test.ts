import assert from 'node:assert/strict';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { TestCounts } from '../../../src/core/gates/parsers';

/**
 * ava's default reporter, from real runs, trimmed: ava 4.3 on camelcase's suite (realrepos case
 * camelcase-e7dccc9) with a second test file whose call into the library throws, and ava 6.4 on a
 * small project. A failure's file is the source line ava prints under its title, which ava takes
 * from the first frame in the test file: never the library, even when the library threw.
 */
function names(tests: TestCounts | undefined): string[] | undefined {
  return tests?.names?.map((t) => `${t.name}: ${t.status}${t.file ? ` @ ${t.file}` : ''}`);
}

const AVA_4 = `
  - test › throws › skipped one
  - test › throws › todo one
  ✖ test › throws › throws from source Error thrown in test
  ✔ test › throws › passes
  ✔ test › throws › known failing
  ✖ test › camelCase 
  ✔ test › invalid input
  ─

  test › throws › throws from source

  test/throws.js:5

   4: test('throws from source', t => {
   5:   t.is(camelCase(1), 'x');       
   6: });                              

  Error thrown in test:

  TypeError {
    message: 'Expected the input to be \`string | string[]\`',
  }

  › camelCase (file://index.js:58:9)
  › file://test/throws.js:5:7



  test › camelCase

  test.js:5

   4: test('camelCase', t => {                                                
   5:   t.is(camelCase('b2b_registration_request'), 'b2bRegistrationRequest');

  Difference:

  - 'b2BRegistrationRequest'
  + 'b2bRegistrationRequest'

  › file://test.js:5:4

  ─

  2 tests failed
  1 known failure
  1 test skipped
  1 test todo
`;

const AVA_6 = `
  - [skip] a › skipped
  - [todo] a › later
  ✔ b › b passes
  ✔ a › splits
  ✘ [fail]: a › throws from source Error thrown in test
  ✘ [fail]: a › bad assertion
  ✔ [expected fail] a › known
  ─

  a › throws from source

  Error thrown in test:

  TypeError {
    message: 'parse wants a string',
  }

  TypeError: parse wants a string
      at parse (/work/lib.js:2:36)
      at /work/test/ava/a.test.js:4:49
      at Test.callFn (file:///work/node_modules/ava/lib/test.js:525:26)



  a › bad assertion

  test/ava/a.test.js:5

   4: test('throws from source', (t) => { t.deepEqual(parse(1), []); });
   5: test('bad assertion', (t) => { t.is(1, 2); });                    

  Difference (- actual, + expected):

  - 1
  + 2

  › test/ava/a.test.js:5:34

  ─

  2 tests failed
  1 known failure
  1 test skipped
  1 test todo
`;

describe('gate output parsers: ava', () => {
  it('ava 4: every test by its printed title; a failure thrown from the library is located in its test file', () => {
    const tests = parseGateOutput('tests', AVA_4).tests;
    assert.deepEqual(names(tests), [
      'test › throws › skipped one: skip',
      'test › throws › todo one: skip',
      'test › throws › throws from source: fail @ test/throws.js',
      'test › throws › passes: pass',
      'test › throws › known failing: pass',
      'test › camelCase: fail @ test.js',
      'test › invalid input: pass',
    ]);
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file, f.message?.split('\n')[0]]),
      [
        ['test › throws › throws from source', 'test/throws.js', 'Error thrown in test:'],
        ['test › camelCase', 'test.js', 'Difference:'],
      ],
    );
    assert.deepEqual([tests?.passed, tests?.failed, tests?.skipped, tests?.total], [3, 2, 2, 7]);
  });

  it('ava 6: `✘ [fail]:` lines; with no frame in the test file ava prints no source line, and the file stays unsaid', () => {
    const tests = parseGateOutput('tests', AVA_6).tests;
    assert.deepEqual(names(tests), [
      'a › skipped: skip',
      'a › later: skip',
      'b › b passes: pass',
      'a › splits: pass',
      'a › throws from source: fail',
      'a › bad assertion: fail @ test/ava/a.test.js',
      'a › known: pass',
    ]);
    assert.equal(tests?.failures[0].file, undefined, 'never the library ava\u2019s stack starts in');
    assert.match(tests?.failures[0].message ?? '', /parse wants a string/);
  });

  it('a single file run (no `file ›` prefix) still locates its failures', () => {
    const single = AVA_4.replace(/test › (throws › )?/g, '');
    const tests = parseGateOutput('tests', single).tests;
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file]),
      [
        ['throws from source', 'test/throws.js'],
        ['camelCase', 'test.js'],
      ],
    );
  });

  it('after a mocha run in the same output (a monorepo), reads only its own lines', () => {
    const mocha = '\n  ✔ a root test of mocha\n  - a pending one\n\n  1 passing (3ms)\n  1 pending\n';
    const tests = parseGateOutput('tests', mocha + AVA_6).tests;
    assert.deepEqual([tests?.passed, tests?.failed, tests?.skipped, tests?.total], [1 + 3, 2, 1 + 2, 2 + 7]);
    assert.equal(tests?.names?.length, 9);
  });

  it("keeps no inventory when a test's own output makes the lines disagree with ava's counts", () => {
    const noisy = AVA_6.replace('  ✔ a › splits\n', '  ✔ a › splits\n  - a line a test printed\n');
    const tests = parseGateOutput('tests', noisy).tests;
    assert.equal(tests?.names, undefined);
    assert.equal(tests?.failures.length, 2);
  });
});
