import type { TestCounts, TestName } from '../types';
import { completeNames } from './names';

/** `==== 1 failed, 3 passed, 1 skipped in 0.12s ====` (the `=` rule is absent with `-q`). */
const SUMMARY =
  /^=*\s*((?:\d+ (?:failed|passed|skipped|deselected|xfailed|xpassed|errors?|warnings?|rerun)(?:, )?)+) in [\d.]+s\b.*?=*\s*$/;
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
    if (m)
      counts.failures.push({ name: m[2], message: m[3]?.trim() || (m[1] === 'ERROR' ? 'error' : undefined), file: m[2].split('::')[0] });
  }
  return completeNames(counts, pytestNames(lines));
}

/** `path::Class::test[param] PASSED  [ 50%]` (`-v`), or `[gw0] [ 50%] PASSED path::test` under pytest-xdist. */
const VERBOSE = /^(\S+::\S+) (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b/;
const XDIST = /^\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)/;

/** Every test by node id with `-v`; the default (dots) names none. */
function pytestNames(lines: readonly string[]): TestName[] {
  const names = new Map<string, TestName>();
  for (const line of lines) {
    const v = VERBOSE.exec(line);
    const x = v ? undefined : XDIST.exec(line);
    const [id, word] = v ? [v[1], v[2]] : x ? [x[2], x[1]] : [];
    if (!id || !word) continue;
    const status: TestName['status'] =
      word === 'PASSED' || word === 'XPASS' ? 'pass' : word === 'SKIPPED' || word === 'XFAIL' ? 'skip' : 'fail';
    // an error in teardown reports a test a second time: the worse outcome stands
    if (names.get(id)?.status === 'fail') continue;
    names.set(id, { name: id, status, file: id.split('::')[0] });
  }
  return [...names.values()];
}
