import type { TestCounts } from '../types';
import { errorMessage } from '../text';
import { jestHeaderFile, jestNames, vitestNames } from './jestVitestNames';
import { completeNames } from './names';

const JEST_TESTS = /^\s*Tests:\s+(.*\d+ total.*)$/;
const VITEST_TESTS = /^\s*Tests\s+(.*?)\s*\((\d+)\)\s*$/;
const COUNT = /(\d+) (failed|passed|skipped|todo|pending)/g;
const JEST_BULLET = /^\s*● (.+?)\s*$/;
const JEST_CROSS = /^\s*[✕×] (.+?)(?: \(\d+(?:\.\d+)? m?s\))?\s*$/;
/** Vitest names the test (`file > suite > test`) or the file (`file [ file ]`); jest names only the file. */
const VITEST_FAIL = /^\s*FAIL\s+(\S.*? > .*?|\S+ \[ .* \])\s*$/;
/** A file that failed to load: ` FAIL  c.test.mjs [ c.test.mjs ]`. */
const VITEST_SUITE = /^(\S+) \[ .* \]$/;
const VITEST_RULE = /^\s*⎯{3,}/;

/**
 * Jest: `Tests:  1 failed, 1 skipped, 2 passed, 4 total` and a `● suite › test` block per
 * failure. A file that does not load (`● Test suite failed to run`) is counted as one failed
 * test too, since jest leaves it out of the Tests line and it is what the agent must fix.
 */
export function parseJest(lines: readonly string[]): TestCounts | undefined {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  let found = false;
  for (const line of lines) {
    const m = JEST_TESTS.exec(line);
    if (!m) continue;
    found = true;
    addCounts(counts, m[1]);
    counts.total += Number(/(\d+) total/.exec(m[1])![1]);
  }
  if (!found) return undefined;

  let file = '';
  let shown = '';
  const crosses: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    // Jest repeats the failures there when many files ran; they are already read.
    if (/^\s*Summary of all failing tests/.test(lines[i])) break;
    const header = /^\s*FAIL\s/.test(lines[i]) ? jestHeaderFile(lines[i]) : undefined;
    if (header !== undefined)
      [shown, file] = [
        lines[i]
          .trim()
          .replace(/^FAIL\s+/, '')
          .replace(/\s+\(\d+(?:\.\d+)?\s*m?s\)$/, ''),
        header,
      ];
    const cross = JEST_CROSS.exec(lines[i]);
    if (cross) crosses.push(cross[1]);
    const bullet = JEST_BULLET.exec(lines[i]);
    if (!bullet || bullet[1] === 'Console') continue;
    const body = blockAfter(lines, i + 1, (l) => JEST_BULLET.test(l) || /^\s*(PASS|FAIL|Test Suites:)\s/.test(l));
    const code = body.filter((l) => !/^\s*>?\s*\d+ \|/.test(l) && !/^\s*\|/.test(l));
    if (bullet[1] === 'Test suite failed to run') {
      // Jest's advice text comes first; the error itself (`SyntaxError: …`) is what to fix.
      const error = code.findIndex((l) => /^\s*(?:\w*Error\b|Cannot find module\b)/.test(l));
      const message = errorMessage(error >= 0 ? code.slice(error) : code);
      counts.failures.push({ name: shown || bullet[1], message, ...(file ? { file } : {}) });
      counts.failed++;
      counts.total++;
    } else counts.failures.push({ name: bullet[1], message: errorMessage(code), ...(file ? { file } : {}) });
  }
  // Without the bullet blocks (a reporter that only lists), the verbose ✕ lines still name them.
  if (counts.failures.length === 0) counts.failures.push(...crosses.map((name) => ({ name })));
  return completeNames(counts, jestNames(lines));
}

/**
 * Vitest: `Tests  1 failed | 2 passed | 1 skipped (4)` and ` FAIL  file > suite > test`
 * blocks. A file that fails to load (` FAIL  file [ file ]`) counts as one failed test.
 */
export function parseVitest(lines: readonly string[]): TestCounts | undefined {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  let found = false;
  for (const line of lines) {
    const m = VITEST_TESTS.exec(line);
    if (!m || /^\s*Test Files/.test(line)) continue;
    found = true;
    addCounts(counts, m[1]);
    counts.total += Number(m[2]);
  }
  if (!found) return undefined;

  const crosses: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const cross = /^\s*× (.+?)(?: \d+m?s)?\s*$/.exec(lines[i]);
    if (cross) crosses.push(cross[1]);
    const fail = VITEST_FAIL.exec(lines[i]);
    if (!fail) continue;
    const body = blockAfter(lines, i + 1, (l) => VITEST_FAIL.test(l) || VITEST_RULE.test(l) || /^\s*❯/.test(l));
    const suite = VITEST_SUITE.exec(fail[1]);
    const name = suite ? suite[1] : fail[1];
    counts.failures.push({ name, message: errorMessage(body), file: name.split(' > ')[0] });
    if (suite) {
      counts.failed++;
      counts.total++;
    }
  }
  if (counts.failures.length === 0) counts.failures.push(...crosses.map((name) => ({ name })));
  return completeNames(counts, vitestNames(lines));
}

function addCounts(counts: TestCounts, text: string): void {
  for (const m of text.matchAll(COUNT)) {
    const n = Number(m[1]);
    if (m[2] === 'failed') counts.failed += n;
    else if (m[2] === 'passed') counts.passed += n;
    else counts.skipped += n;
  }
}

function blockAfter(lines: readonly string[], from: number, ends: (line: string) => boolean): string[] {
  const body: string[] = [];
  for (let i = from; i < lines.length && !ends(lines[i]) && body.length < 40; i++) body.push(lines[i]);
  return body;
}
