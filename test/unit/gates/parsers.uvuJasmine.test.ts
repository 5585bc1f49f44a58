import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import type { TestCounts } from '../../../src/core/gates/parsers';
import { outputLines } from '../../../src/core/gates/parsers/text';
import { parseAva, parseFlatTap } from '../../../src/core/gates/parsers/testRunners/ava';
import { parseCargoTest } from '../../../src/core/gates/parsers/testRunners/cargo';
import { parseGoTest } from '../../../src/core/gates/parsers/testRunners/go';
import { parseJasmine } from '../../../src/core/gates/parsers/testRunners/jasmine';
import { parseJest, parseVitest } from '../../../src/core/gates/parsers/testRunners/jestVitest';
import { parseMocha } from '../../../src/core/gates/parsers/testRunners/mocha';
import { parseNodeTap } from '../../../src/core/gates/parsers/testRunners/nodeTap';
import { parseNodeTest } from '../../../src/core/gates/parsers/testRunners/nodeTestRunner';
import { parsePlainCounts } from '../../../src/core/gates/parsers/testRunners/plainCounts';
import { parsePytest } from '../../../src/core/gates/parsers/testRunners/pytest';
import { parseTape } from '../../../src/core/gates/parsers/testRunners/tape';
import { parseUvu } from '../../../src/core/gates/parsers/testRunners/uvu';

/**
 * uvu 0.5.6 and jasmine 7.0 (jasmine-core 6) default reporters, real runs on a small project
 * (`test/fixtures/gates/uvu.*.txt`, `jasmine.*.txt`; the project's folder renamed `/work/proj`):
 * a library `lib/math.js` with `parse` that throws on a number, suites with passing, failing
 * (an assertion, an error thrown from the library) and skipped tests, a second file that passes,
 * a library that throws on import, and for jasmine suite errors (a `beforeAll`, a `describe`
 * body and a global `afterAll` that throw) and `fit`. uvu's output is coloured even when piped
 * (`uvu.cli.txt` keeps the escapes); `jasmine.color.txt` is `jasmine --color`.
 */
function fixture(name: string): string {
  // Compiled tests run from out/test/unit/gates; the fixtures stay in test/fixtures/gates.
  const root = __dirname.split(path.sep).includes('out') ? path.resolve(__dirname, '../../../..') : path.resolve(__dirname, '../../..');
  return fs.readFileSync(path.join(root, 'test', 'fixtures', 'gates', name), 'utf8');
}

function counts(tests: TestCounts | undefined): number[] {
  assert.ok(tests, 'no test counts');
  return [tests.passed, tests.failed, tests.skipped, tests.total];
}

const FAMILIES = {
  parseMocha,
  parseJest,
  parseVitest,
  parseNodeTest,
  parseTape,
  parseNodeTap,
  parseAva,
  parseFlatTap,
  parseUvu,
  parseJasmine,
  parsePytest,
  parseGoTest,
  parseCargoTest,
  parsePlainCounts,
};

/** The families that read anything in the output. */
function readers(output: string): string[] {
  const lines = outputLines(output);
  return Object.entries(FAMILIES).flatMap(([name, family]) => (family(lines) ? [name] : []));
}

describe('gate output parsers: uvu', () => {
  it('the CLI: counts from its closing block, failing tests by suite and title, the file from the test function’s frame', () => {
    const tests = parseGateOutput('tests', fixture('uvu.cli.txt')).tests;
    // Total 7 run, Passed 4, Skipped 1 (skipped tests are not in uvu's Total)
    assert.deepEqual(counts(tests), [4, 3, 1, 8]);
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.file, f.message?.split('\n')[0]]),
      [
        ['adds wrongly', '/work/proj/tests/math.js', 'Expected values to be strictly equal:  (is)'],
        ['throws from source', '/work/proj/tests/math.js', 'parse wants a string'],
        ['parse > deep equal fails', '/work/proj/tests/math.js', 'Expected values to be deeply equal:  (equal)'],
      ],
    );
    assert.equal(tests?.names, undefined, 'uvu prints no passing test: no inventory');
  });

  it('never takes the library the error was thrown in for the test’s file, nor a frame for a test', () => {
    const tests = parseGateOutput('tests', fixture('uvu.cli.txt')).tests;
    assert.ok(tests?.failures.every((f) => !f.file?.includes('/lib/')));
    assert.ok(tests?.failures.every((f) => !/^\s*at /.test(f.message ?? '')));
    // a test function with a name of its own: no `Object.handler` frame, the file stays unsaid
    const named = fixture('uvu.cli.txt').replace(/Object\.handler/g, 'Object.addsWrongly');
    assert.ok(parseGateOutput('tests', named).tests?.failures.every((f) => f.file === undefined));
  });

  it('a test file run with node (no CLI, no file header) reads the same', () => {
    const tests = parseGateOutput('tests', fixture('uvu.node.txt')).tests;
    assert.deepEqual(counts(tests), [2, 3, 1, 6]);
    assert.deepEqual(
      tests?.failures.map((f) => f.name),
      ['adds wrongly', 'throws from source', 'parse > deep equal fails'],
    );
  });

  it('a passing run; a library that throws on import stops the CLI before any summary: nothing is read', () => {
    assert.deepEqual(counts(parseGateOutput('tests', fixture('uvu.pass.txt')).tests), [2, 0, 0, 2]);
    assert.equal(parseGateOutput('tests', fixture('uvu.importError.txt')).tests, undefined);
  });

  it('two runs in one output (a monorepo) are summed', () => {
    const tests = parseGateOutput('tests', fixture('uvu.cli.txt') + fixture('uvu.pass.txt')).tests;
    assert.deepEqual(counts(tests), [6, 3, 1, 10]);
    assert.equal(tests?.failures.length, 3);
  });
});

describe('gate output parsers: jasmine', () => {
  it('counts, and each failing spec by its full name as printed, with the message and no file', () => {
    const tests = parseGateOutput('tests', fixture('jasmine.failing.txt')).tests;
    // 9 specs, 2 failures, 3 pending specs
    assert.deepEqual(counts(tests), [4, 2, 3, 9]);
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.message, f.file]),
      [
        ['math adds wrongly', 'Expected 3 to be 4.', undefined],
        ['math parse throws from source', 'TypeError: parse wants a string', undefined],
      ],
    );
    assert.equal(tests?.names, undefined, 'jasmine prints no passing spec: no inventory');
  });

  it('the pending list is not failures; colours are read through', () => {
    const tests = parseGateOutput('tests', fixture('jasmine.color.txt')).tests;
    assert.deepEqual(counts(tests), [4, 2, 3, 9]);
    assert.deepEqual(tests?.failures.map((f) => f.name).sort(), ['math adds wrongly', 'math parse throws from source']);
  });

  it('suite errors are failures (jasmine counts them) but not specs: the total stays the spec count', () => {
    const tests = parseGateOutput('tests', fixture('jasmine.suiteErrors.txt')).tests;
    // 11 specs, 6 failures, 3 pending specs: 3 failing specs and 3 suite errors
    assert.deepEqual(counts(tests), [5, 6, 3, 11]);
    assert.deepEqual(
      tests?.failures.map((f) => [f.name, f.message]),
      [
        ['math parse throws from source', 'TypeError: parse wants a string'],
        ['math adds wrongly', 'Expected 3 to be 4.'],
        [
          'suite with hook error first under broken hook',
          'Not run because a beforeAll function failed. The beforeAll failure will be reported on the suite that caused it.',
        ],
        ['Suite error: suite with hook error', 'Error: beforeAll blew up'],
        ['Suite error: describe body throws', 'Error: describe body blew up'],
        ['Suite error: top suite', 'Error: global afterAll blew up'],
      ],
    );
  });

  it('specs left out by `fit` count as skipped; a passing run; a library that throws on import: nothing is read', () => {
    assert.deepEqual(counts(parseGateOutput('tests', fixture('jasmine.focused.txt')).tests), [1, 0, 9, 10]);
    assert.deepEqual(counts(parseGateOutput('tests', fixture('jasmine.pass.txt')).tests), [2, 0, 0, 2]);
    assert.equal(parseGateOutput('tests', fixture('jasmine.importError.txt')).tests, undefined);
  });
});

describe('gate output parsers: uvu and jasmine beside the other runners', () => {
  it('each output is read by its own family only', () => {
    for (const name of ['uvu.cli.txt', 'uvu.node.txt', 'uvu.pass.txt']) assert.deepEqual(readers(fixture(name)), ['parseUvu'], name);
    for (const name of ['jasmine.failing.txt', 'jasmine.color.txt', 'jasmine.suiteErrors.txt', 'jasmine.focused.txt', 'jasmine.pass.txt'])
      assert.deepEqual(readers(fixture(name)), ['parseJasmine'], name);
  });

  it('a mocha run and a uvu run in one output: each counted once', () => {
    const mocha = '\n  suite\n    ✔ a mocha test\n\n  1 passing (3ms)\n';
    const tests = parseGateOutput('tests', mocha + fixture('uvu.pass.txt') + fixture('jasmine.pass.txt')).tests;
    assert.deepEqual(counts(tests), [5, 0, 0, 5]);
    assert.equal(tests?.names, undefined, 'a runner that names no tests leaves the sum without an inventory');
  });
});
