import type { TestCounts } from '../types';
import { errorMessage } from '../text';

const PASSING = /^\s*(\d+) passing\b/;
const PENDING = /^\s*(\d+) pending\s*$/;
const FAILING = /^\s*(\d+) failing\s*$/;
const HEADER = /^\s*(\d+)\) (.*)$/;

/**
 * Mocha's spec reporter (also what `c8 mocha` and `npm test --workspaces` print): one
 * `N passing / N pending / N failing` summary per run, then the numbered failures
 * (`1) suite` … `title:` and the error). Several runs are summed.
 */
export function parseMocha(lines: readonly string[]): TestCounts | undefined {
  let found = false;
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    let m = PASSING.exec(line);
    if (m) {
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
    }
  }
  if (!found) return undefined;
  counts.total = counts.passed + counts.failed + counts.skipped;
  return counts;
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
