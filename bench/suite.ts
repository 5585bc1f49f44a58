/**
 * The parallel bench's project (issue 37): a six-file node:test suite run by `npm test`, as a
 * small JavaScript project has it — the required `tests` gate, and what each task's agent runs
 * itself before it claims COMPLETE. One file checks the files the tasks write; the others test a
 * little module of the project's own.
 */

export const SUITE_COMMAND = 'npm test';

export const SUITE_GATE = { name: 'tests', kind: 'tests', command: SUITE_COMMAND, required: true };

const LIB = `exports.slug = (s) => s.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
exports.sum = (xs) => xs.reduce((a, b) => a + b, 0);
exports.chunk = (xs, n) => Array.from({ length: Math.ceil(xs.length / n) }, (_, i) => xs.slice(i * n, i * n + n));
exports.parseDuration = (s) => { const m = /^(\\d+)(ms|s|m)$/.exec(s); if (!m) throw new Error('bad duration ' + s); return Number(m[1]) * { ms: 1, s: 1000, m: 60000 }[m[2]]; };
exports.unique = (xs) => [...new Set(xs)];
`;

function testFile(name: string, body: string): string {
  return `const test = require('node:test');
const assert = require('node:assert/strict');
const lib = require('../lib');
test.describe('${name}', () => {
${body}
});
`;
}

/** The files of the project, committed before the run. */
export const SUITE_FILES: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'bench-project', version: '1.0.0', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
  'lib.js': LIB,
  'test/slug.test.js': testFile(
    'slug',
    `  test('lowercases', () => assert.equal(lib.slug('Hello World'), 'hello-world'));
  test('trims separators', () => assert.equal(lib.slug('  --a b--  '), 'a-b'));`,
  ),
  'test/sum.test.js': testFile(
    'sum',
    `  test('adds', () => assert.equal(lib.sum([1, 2, 3]), 6));
  test('empty is zero', () => assert.equal(lib.sum([]), 0));`,
  ),
  'test/chunk.test.js': testFile(
    'chunk',
    `  test('splits', () => assert.deepEqual(lib.chunk([1, 2, 3], 2), [[1, 2], [3]]));
  test('empty', () => assert.deepEqual(lib.chunk([], 2), []));`,
  ),
  'test/duration.test.js': testFile(
    'parseDuration',
    `  test('seconds', () => assert.equal(lib.parseDuration('2s'), 2000));
  test('rejects garbage', () => assert.throws(() => lib.parseDuration('soon')));`,
  ),
  'test/unique.test.js': testFile('unique', `  test('keeps the first of each', () => assert.deepEqual(lib.unique([1, 1, 2]), [1, 2]));`),
  'test/files.test.js': testFile(
    'the files the tasks write',
    `  const fs = require('node:fs');
  test('each holds its own name', () => {
    for (const f of fs.readdirSync('.').filter((f) => /^f\\d+\\.txt$/.test(f))) assert.equal(fs.readFileSync(f, 'utf8'), f + '\\n');
  });`,
  ),
};
