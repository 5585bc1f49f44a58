import type { TestCounts } from '../types';
import { errorMessage, hasOmission } from '../text';

/** `9 specs, 2 failures, 3 pending specs` (the pending part only when there are some). */
const SUMMARY = /^(\d+) specs?, (\d+) failures?(?:, (\d+) pending specs?)?\s*$/;
/** `Ran 1 of 10 specs`: the others were left out by `fit`/`fdescribe` or a filter. */
const RAN_OF = /^Ran (\d+) of (\d+) specs?\s*$/;
const NOT_APPLICABLE = /^(\d+) specs? not applicable because: /;
const SPEC_FAILURE = /^(\d+)\) (.+?)\s*$/;
const SUITE_ERROR = /^Suite error: (.+?)\s*$/;
const MESSAGE = /^ {2}Message:\s*$/;
const STACK = /^ {2}Stack:\s*$/;

/**
 * jasmine's default console reporter: a mark per spec (`.` passed, `F` failed, `*` pending), then
 * `Failures:` with a numbered block per failing spec (`1) suite spec`, `Message:`, `Stack:`), a
 * `Suite error: suite` block per suite whose hooks or body threw, `Pending:`, and the counts
 * (`N specs, M failures, P pending specs`). A failing spec is named by its full name as printed
 * (suites and description joined by spaces), a suite error by its line. jasmine's failures count
 * the suite errors too; its specs do not, so a suite error adds to the failed and not to the
 * total. Passing specs are not printed (no inventory) and no failure says where its spec is
 * defined (only its stack does). Specs left out by `fit`/`fdescribe` count as skipped.
 */
export function parseJasmine(lines: readonly string[]): TestCounts | undefined {
  let counts: TestCounts | undefined;
  let from = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = SUMMARY.exec(lines[i]);
    if (!m) continue;
    counts ??= { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
    const run = lines.slice(from, i);
    const [specs, failed, pending] = [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
    const ranOf = RAN_OF.exec(lines[i - 1] ?? '');
    const leftOut = ranOf ? Math.max(0, Number(ranOf[2]) - Number(ranOf[1])) : 0;
    const notApplicable = run.reduce((n, l) => n + Number(NOT_APPLICABLE.exec(l)?.[1] ?? 0), 0);
    const { specFailures, suiteErrors } = failureBlocks(run);
    counts.failures.push(...specFailures, ...suiteErrors);
    // a Failures list cut short by the output's omission: the suite errors are the ones printed after it
    const failedSpecs = hasOmission(run) ? Math.max(specFailures.length, failed - suiteErrors.length) : specFailures.length;
    counts.passed += Math.max(0, specs - Math.min(failedSpecs, failed) - pending - notApplicable);
    counts.failed += failed;
    counts.skipped += pending + notApplicable + leftOut;
    counts.total += specs + leftOut;
    from = i + 1;
  }
  return counts;
}

/** The numbered failure blocks (numbered 1, 2, … in order, each followed by `Message:`) and the suite errors of one run. */
function failureBlocks(lines: readonly string[]): { specFailures: TestCounts['failures']; suiteErrors: TestCounts['failures'] } {
  const specFailures: TestCounts['failures'] = [];
  const suiteErrors: TestCounts['failures'] = [];
  for (let i = 0; i + 1 < lines.length; i++) {
    if (!MESSAGE.test(lines[i + 1])) continue;
    const spec = SPEC_FAILURE.exec(lines[i]);
    const suite = spec ? undefined : SUITE_ERROR.exec(lines[i]);
    if (spec && Number(spec[1]) !== specFailures.length + 1) continue;
    if (!spec && !suite) continue;
    const body: string[] = [];
    for (let j = i + 2; j < lines.length && !STACK.test(lines[j]) && /^\s{3,}\S/.test(lines[j]); j++) body.push(lines[j]);
    const message = errorMessage(body);
    const failure = { name: spec ? spec[2] : lines[i].trim(), ...(message ? { message } : {}) };
    (spec ? specFailures : suiteErrors).push(failure);
  }
  return { specFailures, suiteErrors };
}
