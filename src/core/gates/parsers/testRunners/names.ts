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

/** `at fn (file:1:2)`, `at file:1:2`, `at async fn (file:///x.mjs:1:2)`. */
const FRAME = /^\s*at (?:.*?\()?((?:file:\/\/)?[^\s()]+?):\d+:\d+\)?\s*$/;

/**
 * The file of a failure, from its stack: the first frame in the project (not a dependency, not
 * node's own code). As the runner printed it (relative or absolute); the loop makes it relative.
 */
export function stackFile(body: readonly string[]): string | undefined {
  for (const line of body) {
    const m = FRAME.exec(line);
    if (!m) continue;
    const file = m[1];
    if (file.startsWith('node:') || /(^|[\\/])node_modules[\\/]/.test(file) || file.startsWith('internal/')) continue;
    return file;
  }
  return undefined;
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
