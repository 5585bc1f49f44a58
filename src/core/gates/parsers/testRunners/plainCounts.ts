import type { TestCounts } from '../types';

/** `3 passed, 1 failed` with an optional `, 2 skipped` and an optional `Word:` before it. */
const PLAIN = /^\s*(?:[A-Za-z][\w-]*:\s*)?(\d+) passed, (\d+) failed(?:, (\d+) skipped)?\.?\s*$/;

/** The plain line of home-made runners and scripts; whole lines only, so no runner's summary matches. */
export function parsePlainCounts(lines: readonly string[]): TestCounts | undefined {
  let counts: TestCounts | undefined;
  for (const line of lines) {
    const m = PLAIN.exec(line);
    if (!m) continue;
    counts ??= { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
    counts.passed += Number(m[1]);
    counts.failed += Number(m[2]);
    counts.skipped += m[3] ? Number(m[3]) : 0;
  }
  if (counts) counts.total = counts.passed + counts.failed + counts.skipped;
  return counts;
}
