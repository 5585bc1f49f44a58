import type { TestCounts } from '../types';

/** `==== 1 failed, 3 passed, 1 skipped in 0.12s ====` (the `=` rule is absent with `-q`). */
const SUMMARY = /^=*\s*((?:\d+ (?:failed|passed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun)(?:, )?)+) in [\d.]+s\b.*?=*\s*$/;
const NO_TESTS = /^=*\s*no tests ran in [\d.]+s/;
const SHORT = /^(FAILED|ERROR) (\S+)(?: - (.*))?$/;

/**
 * pytest's final line and its short test summary (`FAILED path::test - msg`, on by default).
 * Errors (a fixture or collection that broke) count as failed; xfailed as skipped and
 * xpassed as passed, the way pytest's exit code sees them.
 */
export function parsePytest(lines: readonly string[]): TestCounts | undefined {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  let found = false;
  for (const line of lines) {
    if (NO_TESTS.test(line)) found = true;
    const m = SUMMARY.exec(line);
    if (!m) continue;
    found = true;
    for (const part of m[1].matchAll(/(\d+) (\w+)/g)) {
      const n = Number(part[1]);
      const word = part[2];
      if (word === 'passed' || word === 'xpassed') counts.passed += n;
      else if (word === 'failed' || word.startsWith('error')) counts.failed += n;
      else if (word === 'skipped' || word === 'xfailed') counts.skipped += n;
    }
  }
  if (!found) return undefined;
  counts.total = counts.passed + counts.failed + counts.skipped;
  for (const line of lines) {
    const m = SHORT.exec(line);
    if (m) counts.failures.push({ name: m[2], message: m[3]?.trim() || (m[1] === 'ERROR' ? 'error' : undefined) });
  }
  return counts;
}
