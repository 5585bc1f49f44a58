import type { TestCounts } from '../types';
import { errorMessage, hasOmission } from '../text';
import { DistinctNames, type ReadTest, tally } from './names';
import { Parser, type Result } from 'tap-parser';
import { type TapDocument, tapDocuments } from './tap';

/**
 * tape (`tape 'test/**\/*.js'`, `nyc tape …`, `node test.js`): TAP whose assertions are grouped
 * under a `# name` line per test. A test is named as tape prints it (subtests too: tape prints
 * them flat, without their parent); a repeated name is made distinct (`DistinctNames`), so
 * adding an assertion never renames a test. A test fails when any of its assertions failed
 * (`# TODO` ones excepted); a `# TODO name` test counts as skipped (tape prints no line at all
 * for a `test.skip`). Counts are tests, not tape's assertion totals. A run that ended without
 * its summary (an error thrown in a test ends tape's process) fails the test it was in; its
 * inventory is then left out, since the tests after the crash never ran. The output never says
 * where a test is defined (`at:` is where an assertion failed): the test probe says it.
 */
export function parseTape(lines: readonly string[]): TestCounts | undefined {
  const docs = tapDocuments(lines).filter((d) => d.dialect === 'tape');
  if (docs.length === 0) return undefined;
  const tests: ReadTest[] = [];
  let complete = true;
  for (const doc of docs) {
    const run = tapeRun(doc);
    complete &&= run.complete && !hasOmission(doc.lines);
    tests.push(...run.tests);
  }
  return tally(tests, complete);
}

/** `# name`, with tape's `SKIP `/`TODO ` before a skipped or todo test's name (trailing blanks trimmed by hand: no backtracking). */
const HEAD = /^# (?:(SKIP|TODO) )?(.*\S)/;

/**
 * A document's tests, from `tap-parser` (its test points, their directives and YAML diagnostics;
 * `# name` lines are its comments, what the process printed besides TAP its `extra` lines).
 */
function tapeRun(doc: TapDocument): { tests: ReadTest[]; complete: boolean } {
  const tests: ReadTest[] = [];
  const distinct = new DistinctNames();
  let current: ReadTest | undefined;
  let after: string[] = [];
  for (const [type, data] of Parser.parse(`${doc.lines.join('\n')}\n`)) {
    if (type === 'extra') {
      after.push(...String(data).split('\n'));
      continue;
    }
    // not a test: node-tap's `# Subtest:`, or what tap-parser says of a stream without its plan
    const head =
      type === 'comment' && !/^# (?:Subtest: |test count\(\d+\) != plan\()/.test(String(data)) ? HEAD.exec(String(data).trimEnd()) : null;
    if (head) {
      current = { name: distinct.name(head[2]), status: head[1] ? 'skip' : 'pass' };
      tests.push(current);
      after = [];
      continue;
    }
    if (type !== 'assert') continue;
    after = [];
    const point = data as Result;
    if (!current || point.ok || point.skip || point.todo || current.status === 'skip') continue;
    if (current.status !== 'fail') current.message = assertionMessage(point.name, point.diag);
    current.status = 'fail';
  }
  if (doc.summary) return { tests, complete: true };
  // cut short: what the process printed after the last TAP line is why
  if (current && current.status !== 'fail') {
    current.status = 'fail';
    current.message = crashMessage(after);
  }
  return { tests, complete: false };
}

/** The assertion and, from its YAML, what was expected and what came. */
function assertionMessage(description: string, diag: Result['diag']): string {
  const parts = [description || 'assertion failed'];
  for (const key of ['expected', 'actual']) {
    const value = diag?.[key];
    if (value !== undefined) parts.push(`${key}: ${typeof value === 'string' ? value.trim() : JSON.stringify(value)}`);
  }
  return parts.join('\n');
}

/** Node's report of an uncaught error: the `TypeError: …` line when there is one. */
function crashMessage(lines: readonly string[]): string {
  const error = lines.find((l) => /^\s*(?:[A-Z]\w*)?(?:Error|Exception)\b.*:/.test(l));
  return error?.trim() ?? errorMessage(lines) ?? 'the test ended the process before it finished';
}
