import type { TestCounts, TestName } from '../types';
import { completeNames } from './names';
import { errorMessage } from '../text';

const RESULT = /^(\s*)--- (PASS|FAIL|SKIP): (\S+)(?: \([\d.]+s\))?\s*$/;
const PACKAGE = /^(ok|FAIL|\?)\s+(\S+)\s+(.*)$/;

/**
 * `go test`: `--- PASS/FAIL/SKIP: TestX` per test (subtests indented, counted too, as go
 * reports them) and `ok`/`FAIL` per package. A package whose tests did not build
 * (`FAIL pkg [build failed]`) counts as one failed test. Without `-v` go prints no
 * `--- PASS` lines, so passes are only counted with `-v`.
 */
export function parseGoTest(lines: readonly string[]): TestCounts | undefined {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  const names: TestName[] = [];
  let found = false;
  for (let i = 0; i < lines.length; i++) {
    const r = RESULT.exec(lines[i]);
    if (r) {
      found = true;
      names.push({ name: r[3], status: r[2] === 'PASS' ? 'pass' : r[2] === 'SKIP' ? 'skip' : 'fail' });
      if (r[2] === 'PASS') counts.passed++;
      else if (r[2] === 'SKIP') counts.skipped++;
      else {
        counts.failed++;
        counts.failures.push({ name: r[3], message: goMessage(lines, i, r[1].length, r[3]) });
      }
      continue;
    }
    const p = PACKAGE.exec(lines[i]);
    if (!p || !/^(?:[\d.]+s|\(cached\)|\[.*\])/.test(p[3])) continue;
    found = true;
    const broken = /^\[(build|setup) failed\]/.exec(p[3]);
    if (p[1] === 'FAIL' && broken) {
      counts.failed++;
      counts.failures.push({ name: p[2], message: buildErrors(lines, p[2], i) ?? `${broken[1]} failed` });
      names.push({ name: p[2], status: 'fail' });
    }
  }
  if (!found) return undefined;
  counts.total = counts.passed + counts.failed + counts.skipped;
  // without -v go prints no line for a passing test: the names would be only the failures
  return lines.some((l) => l.startsWith('=== RUN')) ? completeNames(counts, names) : counts;
}

/** The test's log lines: indented under `--- FAIL` without -v, before it (after `=== RUN`) with -v. */
function goMessage(lines: readonly string[], at: number, indent: number, name: string): string | undefined {
  const after: string[] = [];
  for (let j = at + 1; j < lines.length && /^\s/.test(lines[j]) && /^\s*/.exec(lines[j])![0].length > indent && !RESULT.test(lines[j]); j++)
    after.push(lines[j]);
  const message = errorMessage(after);
  if (message) return message;
  const before: string[] = [];
  for (let j = at - 1; j >= 0 && !lines[j].includes(`=== RUN   ${name}`) && !RESULT.test(lines[j]); j--) before.unshift(lines[j]);
  return errorMessage(before.filter((l) => !/^=== (RUN|PAUSE|CONT)/.test(l)));
}

/** Compiler errors go under `# pkg` just before `FAIL pkg [build failed]`. */
function buildErrors(lines: readonly string[], pkg: string, at: number): string | undefined {
  for (let start = at - 1; start >= 0; start--) {
    if (lines[start].startsWith(`# ${pkg}`)) return errorMessage(lines.slice(start + 1, at));
  }
  return undefined;
}
