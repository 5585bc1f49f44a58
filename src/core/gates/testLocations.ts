import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { TestCounts, TestName } from './parsers/types';
import type { TestLocation } from './types';

/** The forms of a root a runner may print: as given and with its links resolved (macOS /var → /private/var). */
export function rootsOf(root: string): string[] {
  let real = root;
  try {
    real = realpathSync(root);
  } catch {
    // a root that is gone prints no paths either
  }
  return [...new Set([root, real])];
}

/** A test's location as a root-relative path (runners print absolute ones, or `file://` URLs); outside the root, dropped. */
export function relativeName<T extends Pick<TestName, 'file'>>(t: T, root: string, roots: readonly string[] = rootsOf(root)): T {
  if (!t.file) return t;
  const file = path.resolve(root, t.file.startsWith('file://') ? new URL(t.file).pathname : t.file);
  const { file: _dropped, ...rest } = t;
  for (const r of roots) {
    const rel = path.relative(r, file).replace(/\\/g, '/');
    if (!rel.startsWith('..') && !path.isAbsolute(rel)) return { ...rest, file: rel } as T;
  }
  return rest as T;
}

/**
 * Every location of a run's test counts (inventory and failures) relative to `root`, and every
 * name that spells the root (node:test names a file that fails to load by its absolute path): the
 * same test in another worktree of the same tree has the same name.
 */
export function relativeTests(tests: TestCounts | undefined, root: string): TestCounts | undefined {
  if (!tests) return tests;
  const roots = rootsOf(root);
  const named = <T extends { name: string }>(t: T): T => ({ ...t, name: withoutRoot(t.name, roots) });
  return {
    ...tests,
    failures: tests.failures.map((f) => named(relativeName(f, root, roots))),
    ...(tests.names ? { names: tests.names.map((t) => named(relativeName(t, root, roots))) } : {}),
  };
}

/** One failing test's name and file, as `relativeTests` makes them. */
export function relativeFailure<T extends { name: string; file?: string }>(
  t: T,
  root: string,
  roots: readonly string[] = rootsOf(root),
): T {
  const located = relativeName(t, root, roots);
  return { ...located, name: withoutRoot(located.name, roots) };
}

/** `name` with each spelling of the root (and the separator after it) taken out. */
function withoutRoot(name: string, roots: readonly string[]): string {
  let out = name;
  for (const r of [...roots].sort((a, b) => b.length - a.length)) {
    out = out.split(`file://${r}/`).join('').split(`${r}/`).join('');
  }
  return out;
}

/**
 * The tests whose file the output did not say, given theirs from the runner's own word (the test
 * probe's `testLocations`), matched by exact name; a name located in two files gets none.
 */
export function withTestLocations(tests: TestCounts, locations: readonly TestLocation[]): TestCounts {
  if (locations.length === 0) return tests;
  const where = new Map<string, string | null>();
  for (const l of locations) where.set(l.name, where.has(l.name) && where.get(l.name) !== l.file ? null : l.file);
  const located = <T extends { name: string; file?: string }>(t: T): T => {
    const file = t.file ? undefined : where.get(t.name);
    return file ? { ...t, file } : t;
  };
  return { ...tests, failures: tests.failures.map(located), ...(tests.names ? { names: tests.names.map(located) } : {}) };
}
