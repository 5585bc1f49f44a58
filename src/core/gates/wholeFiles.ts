import * as path from 'node:path';
import type { TestCounts, TestName } from './parsers/types';
import { locateTest } from './renames';

/**
 * A whole test file as one entry of a run: runners name a file by its path when it failed before
 * its tests reported — node-tap stopped it at its timeout or it crashed, node:test could not load
 * it (its library threw on import). Integrity reads such an entry of the base as the tests of that
 * file later, and tests missing behind such an entry now as cut short.
 */

/** A runner's path without a leading `./`. */
const bare = (file: string) => file.replace(/^\.\//, '');

/** A test named by its own file: the whole file, as one entry (tap's runner wraps each file in a subtest named by its path). */
export function wholeFile(t: { name: string; file?: string }): t is { name: string; file: string } {
  return t.file !== undefined && bare(t.name) === bare(t.file);
}

/**
 * How a test of the base fared in a run (`undefined`: it is not there). A whole test file that
 * failed at the base as one entry — it crashed or timed out before its tests reported, tap's
 * `not ok - test/x.js` with no tests under it — is, in a later run, the tests of that file: there
 * when some of them ran, failing when one of them fails, skipped when all are skipped. Its file's
 * lines are guarded like any test that failed at the base and passes now (`emptiedFailures`).
 */
export function statusIn(
  now: TestCounts,
): (t: { name: string; file?: string; status?: TestName['status'] }) => TestName['status'] | undefined {
  const exact = new Map((now.names ?? []).map((t) => [t.name, t.status]));
  const files = new Map<string, TestName['status']>();
  for (const t of now.names ?? []) {
    if (!t.file) continue;
    const was = files.get(bare(t.file));
    files.set(bare(t.file), was === 'fail' || t.status === 'fail' ? 'fail' : was === 'pass' || t.status === 'pass' ? 'pass' : 'skip');
  }
  return (t) => {
    const own = exact.get(t.name);
    if (own !== undefined || t.status === 'pass' || t.status === 'skip' || !wholeFile(t)) return own;
    return files.get(bare(t.file));
  };
}

/**
 * The files that fail as a whole now — their entry named by the file fails (tap: a timeout, a
 * crash, no plan) — and did not at the base: their tests that did not report are cut short, not
 * gone. A file that failed so at the base too is not one: there its missing tests count as gone.
 */
export function filesCutShort(before: readonly TestName[], now: readonly TestName[]): Set<string> {
  const failedWhole = (names: readonly TestName[]) => new Set(names.filter((t) => t.status === 'fail' && wholeFile(t)).map((t) => t.file!));
  const atBase = failedWhole(before);
  return new Set([...failedWhole(now)].filter((f) => !atBase.has(f)));
}

/**
 * The run with a file for its tests that belong to a whole file which failed at the base, where
 * the runner gives none (node:test names no file for a passing test): a test of this run the base
 * did not have whose title is written in that file's text now (`locateTest`) is that file's.
 */
export async function attributeToWholeFiles(
  base: readonly TestName[] | undefined,
  now: TestCounts | undefined,
  read: (file: string) => Promise<string | undefined>,
): Promise<TestCounts | undefined> {
  if (!base || !now?.names) return now;
  const known = new Set(base.map((t) => t.name));
  const present = new Set(now.names.flatMap((t) => (t.file ? [bare(t.file)] : [])));
  const exact = new Set(now.names.map((t) => t.name));
  const files = base.flatMap((t) =>
    t.status === 'fail' && wholeFile(t) && !exact.has(t.name) && !present.has(bare(t.file)) ? [t.file] : [],
  );
  if (files.length === 0) return now;
  const texts: [string, string][] = [];
  // a path the runner printed outside the workspace is read by no one
  for (const file of files.filter((f) => !path.isAbsolute(f) && !f.split(/[\\/]/).includes('..'))) {
    const text = await read(file);
    if (text !== undefined) texts.push([file, text]);
  }
  const names = now.names.map((t) => {
    if (t.file || known.has(t.name)) return t;
    const owner = texts.find(([, text]) => locateTest(t.name, text) !== undefined);
    return owner ? { ...t, file: owner[0] } : t;
  });
  return { ...now, names };
}
