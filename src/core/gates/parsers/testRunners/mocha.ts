import type { TestCounts, TestName } from '../types';
import { errorMessage } from '../text';
import { completeNames, indentedTree } from './names';

const PASSING = /^\s*(\d+) passing\b/;
const PENDING = /^\s*(\d+) pending\s*$/;
const FAILING = /^\s*(\d+) failing\s*$/;
const HEADER = /^\s*(\d+)\) (.*)$/;

/**
 * Mocha's spec reporter (also what `c8 mocha` and `npm test --workspaces` print): one
 * `N passing / N pending / N failing` summary per run, then the numbered failures
 * (`1) suite` … `title:` and the error). Several runs are summed. The tree above each summary
 * names every test (`suite nested title`, as mocha names failures). The spec reporter never
 * says where a test is defined (a failure's stack points wherever the error was thrown, often
 * the code under test): the test probe's records say it (`probe/`).
 */
export function parseMocha(lines: readonly string[]): TestCounts | undefined {
  let found = false;
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  const names: TestName[] = [];
  let treeFrom = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m = PASSING.exec(line);
    if (m) {
      names.push(...specTree(lines.slice(treeFrom, i)));
      found = true;
      counts.passed += Number(m[1]);
      continue;
    }
    if (!found) continue;
    if ((m = PENDING.exec(line))) counts.skipped += Number(m[1]);
    else if ((m = FAILING.exec(line))) {
      const failing = Number(m[1]);
      counts.failed += failing;
      i = readFailures(lines, i + 1, failing, counts.failures) - 1;
      treeFrom = i + 1;
    }
  }
  if (!found) return undefined;
  counts.total = counts.passed + counts.failed + counts.skipped;
  return completeNames(counts, names);
}

const SPEC_TEST = /^(\s+)(?:[✔✓√]|(\d+)\)|-) (.+?)(?: \(\d+ms\))?\s*$/;

/**
 * The spec reporter's tree: a suite is an indented line without a mark, its tests are indented
 * two more and marked `✔` (passed), `N)` (failed) or `-` (pending). Lines at the margin
 * (console output of the tests) are not part of it.
 */
function specTree(lines: readonly string[]): TestName[] {
  return indentedTree(
    lines.filter((line) => /^ {2,}\S/.test(line)),
    (line) => {
      const t = SPEC_TEST.exec(line);
      return t ? { title: t[3], status: t[2] ? 'fail' : line.trimStart().startsWith('-') ? 'skip' : 'pass' } : undefined;
    },
    ' ',
  );
}

/**
 * Reads exactly `expected` numbered failures (so the test list of a following run, whose
 * failing tests are numbered too, is not taken for more of them). Returns the next line.
 */
function readFailures(lines: readonly string[], from: number, expected: number, out: TestCounts['failures']): number {
  let i = from;
  for (let n = 1; n <= expected && i < lines.length; n++) {
    while (i < lines.length && !isHeader(lines[i], n)) {
      if (PASSING.test(lines[i])) return i;
      i++;
    }
    if (i >= lines.length) return i;
    // The title spans lines (one per suite level) and ends with a colon.
    const parts = [HEADER.exec(lines[i])![2].trim()];
    while (!parts[parts.length - 1].endsWith(':') && i + 1 < lines.length && lines[i + 1].trim()) parts.push(lines[++i].trim());
    const name = parts.join(' ').replace(/:$/, '');
    const body: string[] = [];
    i++;
    while (i < lines.length && !isHeader(lines[i], n + 1) && !PASSING.test(lines[i])) body.push(lines[i++]);
    out.push({ name, message: errorMessage(body) });
  }
  return i;
}

function isHeader(line: string, n: number): boolean {
  const m = HEADER.exec(line);
  return m !== null && Number(m[1]) === n;
}
