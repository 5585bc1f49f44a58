/**
 * What the scenarios do to each real case, and what its failing test looks like, written from the
 * runners' real output at the base (see README.md beside this file). An edit is text replaced
 * exactly once in a file as the task starts from it; the agent sends the resulting file whole.
 */
import type { RealCase } from './cases';

export interface Edit {
  file: string;
  from: string;
  to: string;
}

export interface CaseData {
  /** A wrong edit of the code under test: the task's test stays red, every other test as it was. */
  wrongEdit: Edit[];
  /** The failing tests skipped with the runner's own skip (absent: the case has no such scenario). */
  skip?: Edit[];
  /** Iteration 2's context must hold one of these (the failing test's name as the runner reports it)… */
  testNamed: string[];
  /** …and one of these (its error). */
  errorShown: string[];
  /** A new red test file in the runner's format at the base, importing nothing of the library (plus the runner setup that picks it up). */
  legacy?: Record<string, string>;
  /** The legacy test's name, as its runner reports it. */
  legacyName?: string;
  /**
   * The only runs of the case (`scenario/config`), where it is there for one question: issue 47's
   * cases, whose runner is read only as TAP or not at all, run its four behaviours.
   */
  runs?: string[];
  /**
   * How Ralph reads the runner (issue 47's cases): `tap`, every tests gate's run read for its
   * test counts through the TAP no dialect claims; `not read`, none read, the summary saying so.
   */
  reads?: 'tap' | 'not read';
  /**
   * A longer timeout in the runner's own config, written beside the fix (an agent's way round a
   * slow test): edits of package.json or a whole config file, and the part of the gate's
   * definition the refusal names. Cases without it skip that scenario.
   */
  runnerConfig?: { manifest?: Edit[]; files?: Record<string, string>; key: string };
  /**
   * A break, written beside the fix, of a module that the test file `through` reaches only through
   * another module (issue 34: the import graph's part follows it; the whole suite at COMPLETE
   * refuses it). Cases whose tests all import one entry module skip that scenario.
   */
  transitive?: { files: Record<string, string>; through: string };
  /**
   * The tests gate's command when it is not case.json's `test`, and why: a suite's own extra work
   * that no verdict reads (the same test points at the base and fixed, the same runner output).
   */
  gate?: { command: string; why: string };
}

const RELEASE = 'release date is in the future';
const RELEASE_FAILS = "new Date('2020-01-01') > new Date()";

const vitestLegacy = `import { expect, test } from "vitest";

// written when the release was still ahead; nobody fixed it since
test("${RELEASE}", () => {
  expect(${RELEASE_FAILS}, "the release date has passed").toBe(true);
});
`;

export const CASE_DATA: Record<string, CaseData> = {
  'camelcase-e7dccc9': {
    wrongEdit: [
      {
        file: 'index.js',
        from: '\tSEPARATORS_AND_IDENTIFIER.lastIndex = 0;\n\tNUMBERS_AND_IDENTIFIER.lastIndex = 0;\n',
        to: '\tNUMBERS_AND_IDENTIFIER.lastIndex = 0;\n\tSEPARATORS_AND_IDENTIFIER.lastIndex = 0;\n',
      },
    ],
    skip: [
      { file: 'test.js', from: "test('camelCase', t => {", to: "test.skip('camelCase', t => {" },
      {
        file: 'test.js',
        from: "test('camelCase with pascalCase option', t => {",
        to: "test.skip('camelCase with pascalCase option', t => {",
      },
    ],
    testNamed: ['camelCase with pascalCase option', 'camelCase'],
    errorShown: ['b2BRegistrationRequest', 'B2BRegistrationRequest'],
    legacy: {
      'legacy.test.js': `import test from 'ava';\n\n// written when the release was still ahead; nobody fixed it since\ntest('${RELEASE}', t => {\n\tt.true(${RELEASE_FAILS}, 'the release date has passed');\n});\n`,
    },
    legacyName: RELEASE,
  },
  'content-type-3817c1a': {
    wrongEdit: [
      {
        file: 'src/index.ts',
        from: 'const TEXT_REGEXP = /^[\\u000b\\u0020-\\u007e\\u0080-\\u00ff]*$/;',
        to: 'const TEXT_REGEXP = /^[\\u000b\\u000c\\u0020-\\u007e\\u0080-\\u00ff]*$/;',
      },
    ],
    skip: [
      {
        file: 'src/format.spec.ts',
        from: 'it("should quote parameter value containing HTAB"',
        to: 'it.skip("should quote parameter value containing HTAB"',
      },
      {
        file: 'src/format.spec.ts',
        from: 'it("should reject parameter value containing vertical tab"',
        to: 'it.skip("should reject parameter value containing vertical tab"',
      },
    ],
    testNamed: ['should quote parameter value containing HTAB', 'should reject parameter value containing vertical tab'],
    errorShown: ['Invalid parameter value', 'to throw an error'],
    legacy: { 'src/legacy.spec.ts': vitestLegacy },
    legacyName: RELEASE,
  },
  'minimist-63b8fee': {
    wrongEdit: [
      {
        file: 'index.js',
        from: '&& !(/^-/).test(next)\n\t\t\t\t&& !flags.bools[key]',
        to: "&& next.charAt(0) !== '-'\n\t\t\t\t&& !flags.bools[key]",
      },
    ],
    skip: [
      { file: 'test/dash.js', from: "test('-', function (t) {", to: "test.skip('-', function (t) {" },
      { file: 'test/dash.js', from: "test('--- option value', function (t) {", to: "test.skip('--- option value', function (t) {" },
    ],
    testNamed: ['--- option value', 'should be deeply equivalent'],
    errorShown: ["nnn: '-'", "nnn: '---'", 'nnn: true'],
    legacy: {
      'test/legacy.js': `'use strict';\n\nvar test = require('tape');\n\n// written when the release was still ahead; nobody fixed it since\ntest('${RELEASE}', function (t) {\n\tt.plan(1);\n\tt.ok(${RELEASE_FAILS}, 'the release date has passed');\n});\n`,
    },
    legacyName: RELEASE,
  },
  'ms-2669f23': {
    wrongEdit: [{ file: 'index.js', from: 'var match = /^((?:\\d+)?\\-?\\d?\\.?\\d+) *', to: 'var match = /^((?:\\d+)?-?\\d?\\.?\\d+) *' }],
    skip: [
      {
        file: 'tests.js',
        from: "it('should work with negative decimals', function() {\n    expect(ms('-1.5h'))",
        to: "it.skip('should work with negative decimals', function() {\n    expect(ms('-1.5h'))",
      },
    ],
    testNamed: ['should work with negative decimals'],
    errorShown: ['expected undefined to equal -37800000'],
    legacy: {
      // `npx mocha tests.js` runs one file: mocha 4 adds the specs of test/mocha.opts, as a repository's setup would
      'test/mocha.opts': 'test/legacy.test.js\n',
      'test/legacy.test.js': `var assert = require('assert');\n\n// written when the release was still ahead; nobody fixed it since\ndescribe('release', function() {\n  it('date is in the future', function() {\n    assert.ok(${RELEASE_FAILS}, 'the release date has passed');\n  });\n});\n`,
    },
    legacyName: 'date is in the future',
    // mocha 4 reads test/mocha.opts
    runnerConfig: { files: { 'test/mocha.opts': '--timeout 10000\n' }, key: 'test/mocha.opts' },
  },
  'node-semver-e583226': {
    wrongEdit: [
      {
        file: 'classes/range.js',
        from: "const isX = id => !id || id.toLowerCase() === 'x' || id === '*'",
        to: "const isX = id => !id || id === '*' || id.toLowerCase() === 'x'",
      },
    ],
    skip: [
      { file: 'test/classes/range.js', from: "test('range parsing', t => {", to: "test('range parsing', { skip: true }, t => {" },
      { file: 'test/ranges/valid.js', from: "test('valid range test', (t) => {", to: "test('valid range test', { skip: true }, (t) => {" },
    ],
    testNamed: ['invalid range: 1.x.5', 'validRange(1.x.5)', 'range parsing', 'valid range test'],
    errorShown: ['invalid range: 1.x.5', 'expected to throw', 'should be equal', 'TypeError'],
    legacy: {
      // test/map.js checks that every test file maps to a source file, except in test/integration/ (and fixtures)
      'test/integration/legacy.js': `'use strict'\n\nconst { test } = require('tap')\n\n// written when the release was still ahead; nobody fixed it since\ntest('${RELEASE}', t => {\n  t.ok(${RELEASE_FAILS}, 'the release date has passed')\n  t.end()\n})\n`,
    },
    legacyName: RELEASE,
    gate: {
      command: 'npx tap --no-coverage',
      why:
        'tap 16 instruments every file for its coverage check by default (nyc): 43.6 CPU-s and 23.6 s a suite on 2 cores, ' +
        'against 18.1 and 10.0 without it; the same 9,151 test points, read the same way (issue 45)',
    },
    // node-tap reads its options from package.json's "tap"
    runnerConfig: { manifest: [{ file: 'package.json', from: '"timeout": 30,', to: '"timeout": 120,' }], key: 'package.json tap' },
    // compare's operands swapped: test/functions/gt.js requires functions/gt.js, which requires compare.js
    transitive: {
      files: {
        'functions/compare.js':
          "'use strict'\n\nconst SemVer = require('../classes/semver')\nconst compare = (a, b, loose) =>\n  new SemVer(b, loose).compare(new SemVer(a, loose))\n\nmodule.exports = compare\n",
      },
      through: 'test/functions/gt.js',
    },
  },
  'ufo-7959de5': {
    wrongEdit: [
      {
        file: 'src/parse.ts',
        from: 'export function parseFilename(input = "", { strict }): string | undefined {',
        to: 'export function parseFilename(input = "", { strict }: { strict?: boolean }): string | undefined {',
      },
    ],
    skip: [{ file: 'test/parse.test.ts', from: 'test("works", () => {', to: 'test.skip("works", () => {' }],
    testNamed: ['parseFilename > works', 'works'],
    errorShown: ["Cannot destructure property 'strict'"],
    legacy: { 'test/legacy.test.ts': vitestLegacy },
    legacyName: RELEASE,
  },
  'ufo-eb29945': {
    wrongEdit: [
      {
        file: 'src/utils.ts',
        from: '  const _base = withoutTrailingSlash(base);\n  if (input.startsWith(_base)) {\n    return input;',
        to: '  const _base = withoutTrailingSlash(base);\n  if (input.indexOf(_base) === 0) {\n    return input;',
      },
    ],
    skip: [
      { file: 'test/base.test.ts', from: 'describe("withBase", () => {', to: 'describe.skip("withBase", () => {' },
      { file: 'test/base.test.ts', from: 'describe("withoutBase", () => {', to: 'describe.skip("withoutBase", () => {' },
    ],
    testNamed: ['"/admin/" + "/admin-dashboard"', '"/admin-dashboard"-"/admin/"', 'withBase', 'withoutBase'],
    errorShown: ["expected '/admin-dashboard' to be '/admin/admin-dashboard'", "expected '/-dashboard' to be '/admin-dashboard'"],
    legacy: { 'test/legacy.test.ts': vitestLegacy },
    legacyName: RELEASE,
  },
};

/** Issue 47's four behaviours in the default configuration, and the upstream fix with maxParallel 1 too. */
const ISSUE_47_RUNS = [
  'upstream-fix/parallel',
  'upstream-fix/serial',
  'no-change/parallel',
  'wrong-edit/parallel',
  'assertions-deleted/parallel',
];

/** This repository's own cases (`cases/`): a runner read only as TAP (brittle), and a script whose output is not read. */
const OWN_CASES: Record<string, CaseData> = {
  'fast-fifo-4b05a4b': {
    // half of the fix: isEmpty() by the length, peek() still blind to the next block
    wrongEdit: [{ file: 'index.js', from: '    return this.head.isEmpty()', to: '    return this.length === 0' }],
    testNamed: ['peek edgecase'],
    errorShown: ['expected: e', 'actual: undefined'],
    runs: ISSUE_47_RUNS,
    reads: 'tap',
  },
  'node-jsonpointer-027457f': {
    // __proto__ refused at any depth, constructor.prototype still only at the top
    wrongEdit: [
      {
        file: 'jsonpointer.js',
        from: "  if (pointer[1] === '__proto__') return obj",
        to: "  if (pointer.indexOf('__proto__') !== -1) return obj",
      },
    ],
    // no test names: the first failed assert's place and Node's report of it
    testNamed: ['test.js:141'],
    errorShown: ['AssertionError', 'should not boo'],
    runs: ISSUE_47_RUNS,
    reads: 'not read',
  },
};

export function dataOf(c: RealCase): CaseData {
  const data = CASE_DATA[c.id] ?? OWN_CASES[c.id];
  if (!data)
    throw new Error(
      `no scenario data for the case ${c.id}: add its edits and its failing test's name and error to test/realrepos/caseData.ts`,
    );
  return data;
}

/** `content` with each edit of `file` applied; an edit whose text is not there exactly once is an error. */
export function applyEdits(file: string, content: string, edits: Edit[]): string {
  let out = content;
  for (const edit of edits.filter((e) => e.file === file)) {
    const at = out.indexOf(edit.from);
    if (at < 0 || out.indexOf(edit.from, at + 1) >= 0) throw new Error(`${file}: the edit's text is not there exactly once: ${edit.from}`);
    out = out.slice(0, at) + edit.to + out.slice(at + edit.from.length);
  }
  return out;
}
