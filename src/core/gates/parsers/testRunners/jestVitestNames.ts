import type { TestName } from '../types';
import { indentedTree } from './names';

const JEST_HEADER = /^\s*(PASS|FAIL)\s+(\S.*?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?\s*$/;
const JEST_TEST = /^(\s+)(✓|✕|√|×|○ skipped|✎ todo) (.+?)(?: \(\d+(?:\.\d+)? m?s\))?\s*$/;

/** Jest's `PASS`/`FAIL` file header: the file as it is in the project (`./x.test.js` → `x.test.js`). */
export function jestHeaderFile(line: string): string | undefined {
  const m = JEST_HEADER.exec(line);
  return m ? m[2].replace(/^\.\//, '') : undefined;
}

/**
 * Jest's verbose tree under each `PASS`/`FAIL file` header (what `--verbose` prints, and jest
 * by default for a run of one file): suites indented, tests marked `✓`, `✕`, `○ skipped`,
 * `✎ todo`. Names are joined with ` › ` as jest names failures (`suite › nested › test`).
 */
export function jestNames(lines: readonly string[]): TestName[] {
  const names: TestName[] = [];
  for (let i = 0; i < lines.length; i++) {
    const file = jestHeaderFile(lines[i]);
    if (file === undefined) continue;
    // the tree ends at the first blank line (failure blocks and console output follow it)
    let end = i + 1;
    while (end < lines.length && lines[end].trim() && jestHeaderFile(lines[end]) === undefined) end++;
    const tree = indentedTree(
      lines.slice(i + 1, end),
      (line) => {
        const t = JEST_TEST.exec(line);
        return t
          ? { title: t[3], status: t[2] === '✓' || t[2] === '√' ? 'pass' : t[2] === '✕' || t[2] === '×' ? 'fail' : 'skip' }
          : undefined;
      },
      ' › ',
    );
    names.push(...tree.map((t) => ({ ...t, file })));
    i = end - 1;
  }
  return names;
}

const VITEST_FILE = /^(\s*)[❯✓×↓] (\S+) \(\d+ tests?\b.*\)(?: \d+m?s)?\s*$/;
const VITEST_TEST = /^(\s*)([✓√×↓]) (.+?)(?: \d+m?s)?\s*$/;

/**
 * Vitest's per-test lines: `✓ file > suite > test` with `--reporter=verbose`, or `✓ suite > test`
 * under the `❯ file (n tests | 1 failed)` line of a file that failed (the default reporter
 * lists the tests of those files only). Named `file > suite > test`, as vitest names failures.
 */
export function vitestNames(lines: readonly string[]): TestName[] {
  const names: TestName[] = [];
  let file: { indent: number; name: string } | undefined;
  for (const line of lines) {
    const f = VITEST_FILE.exec(line);
    if (f) {
      file = { indent: f[1].length, name: f[2] };
      continue;
    }
    const t = VITEST_TEST.exec(line);
    if (!t) continue;
    const under = file && t[1].length > file.indent ? file.name : undefined;
    if (!under && !t[3].includes(' > ')) continue;
    const name = under ? `${under} > ${t[3]}` : t[3];
    const status: TestName['status'] = t[2] === '×' ? 'fail' : t[2] === '↓' ? 'skip' : 'pass';
    names.push({ name, status, file: name.split(' > ')[0] });
  }
  return names;
}
