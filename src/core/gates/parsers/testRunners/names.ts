import type { TestCounts, TestName } from '../types';

/**
 * The test inventory is kept only when it names every test the runner counted: a partial list
 * (a reporter that names only failing files, a run cut short) would make the tests it leaves
 * out look deleted when compared with another run.
 */
export function completeNames(counts: TestCounts, names: readonly TestName[]): TestCounts {
  if (names.length > 0 && names.length === counts.total) counts.names = [...names];
  return counts;
}

/** A test as a runner's output names it: its status, a failure's message, its file where the output says it. */
export interface ReadTest {
  name: string;
  status: TestName['status'];
  message?: string;
  file?: string;
}

/**
 * The counts of the tests read from a run, each failure with its message, and the inventory of
 * their names when `complete` (the run's every test was read: none cut short or left out).
 */
export function tally(tests: readonly ReadTest[], complete: boolean): TestCounts {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: tests.length, failures: [] };
  for (const t of tests) {
    if (t.status === 'pass') counts.passed++;
    else if (t.status === 'skip') counts.skipped++;
    else {
      counts.failed++;
      counts.failures.push({ name: t.name, ...(t.message ? { message: t.message } : {}), ...(t.file ? { file: t.file } : {}) });
    }
  }
  if (complete && tests.length > 0)
    counts.names = tests.map((t) => ({ name: t.name, status: t.status, ...(t.file ? { file: t.file } : {}) }));
  return counts;
}

/**
 * Test names made distinct within one run of a runner that allows repeats (tape, node-tap): the
 * first keeps its name, the k-th repeat becomes `name (k)` (the next number not yet taken when a
 * test is literally called so). The test probe (`probe/testProbe.ts`) numbers in the same way.
 */
export class DistinctNames {
  private readonly seen = new Map<string, number>();

  name(raw: string): string {
    const count = this.seen.get(raw);
    if (count === undefined) {
      this.seen.set(raw, 1);
      return raw;
    }
    let n = count;
    let candidate: string;
    do candidate = `${raw} (${++n})`;
    while (this.seen.has(candidate));
    this.seen.set(raw, n);
    this.seen.set(candidate, 1);
    return candidate;
  }
}

/**
 * The tests of an indented reporter tree (mocha's spec, jest's verbose): a line `test(line)`
 * does not recognise is a suite holding the deeper lines after it; a test's name is its
 * suites' and its own title joined by `separator`.
 */
export function indentedTree(
  lines: readonly string[],
  test: (line: string) => (Omit<TestName, 'name'> & { title: string }) | undefined,
  separator: string,
): TestName[] {
  const names: TestName[] = [];
  const open: { indent: number; name: string }[] = [];
  for (const line of lines) {
    const indent = /^ */.exec(line)![0].length;
    while (open.length && open[open.length - 1].indent >= indent) open.pop();
    const t = test(line);
    if (!t) {
      open.push({ indent, name: line.trim() });
      continue;
    }
    const { title, ...rest } = t;
    names.push({ name: [...open.map((o) => o.name), title].join(separator), ...rest });
  }
  return names;
}
