import type { TestCounts } from '../types';
import { errorMessage } from '../text';

/** uvu's closing block, four lines: `  Total:     7`, `  Passed:    4`, `  Skipped:   1`, `  Duration:  2.27ms`. */
const SUMMARY = [/^ {2}Total: +(\d+)\s*$/, /^ {2}Passed: +(\d+)\s*$/, /^ {2}Skipped: +(\d+)\s*$/, /^ {2}Duration: +\S+\s*$/];
/** `   FAIL  "test"`, or `   FAIL  suite  "test"` for a test of a named suite (the marks are coloured backgrounds). */
const FAIL = /^ {3}FAIL {2}(?:(.+?) {2})?"(.*)"\s*$/;
/** The line of marks that ends a suite's run: `• ✘ ✘   (1 / 3)`, ` parse  • ✘   (1 / 2)`. */
const SUITE_LINE = /\(\d+ \/ \d+\)\s*$/;
/** The frame of the function uvu called for the test (`test.handler(state)`): where the test is written. */
const HANDLER = /^\s+at (?:async )?Object\.handler \((?:file:\/\/)?(.+?):\d+:\d+\)\s*$/;

/**
 * uvu's default reporter (the `uvu` CLI and a test file run with `node`): a line of marks per
 * suite (`•` passed, `✘` failed, with `(passed / run)`), a `FAIL` block per failing test with the
 * assertion and its stack, then `Total` (tests run), `Passed` and `Skipped`. A failing test is
 * named by its suite and title (`suite > title`, the title alone in the default suite); passing
 * tests are not printed, so there is no inventory, only counts. A failure's file is the frame of
 * the test function uvu called (`Object.handler`), never another frame of the stack (the error may
 * be thrown in the code under test); a test function with a name of its own leaves it unsaid.
 * Several runs (a monorepo) are summed.
 */
export function parseUvu(lines: readonly string[]): TestCounts | undefined {
  let counts: TestCounts | undefined;
  let from = 0;
  for (let i = 0; i + 3 < lines.length; i++) {
    const m = SUMMARY.map((re, k) => re.exec(lines[i + k]));
    if (m.some((x) => !x)) continue;
    const [run, passed, skipped] = [Number(m[0]![1]), Number(m[1]![1]), Number(m[2]![1])];
    counts ??= { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
    counts.passed += passed;
    counts.failed += Math.max(0, run - passed);
    counts.skipped += skipped;
    counts.total += run + skipped;
    counts.failures.push(...failures(lines.slice(from, i)));
    from = i + 4;
    i += 3;
  }
  return counts;
}

function failures(lines: readonly string[]): TestCounts['failures'] {
  const out: TestCounts['failures'] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FAIL.exec(lines[i]);
    if (!m) continue;
    const body: string[] = [];
    while (i + 1 < lines.length && !FAIL.test(lines[i + 1]) && !SUITE_LINE.test(lines[i + 1])) body.push(lines[++i]);
    const message = errorMessage(body);
    const file = body.map((l) => HANDLER.exec(l)?.[1]).find((f) => f !== undefined);
    out.push({ name: m[1] ? `${m[1]} > ${m[2]}` : m[2], ...(message ? { message } : {}), ...(file ? { file } : {}) });
  }
  return out;
}
