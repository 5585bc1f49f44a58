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

/** Every location of a run's test counts (inventory and failures) relative to `root`. */
export function relativeTests(tests: TestCounts | undefined, root: string): TestCounts | undefined {
  if (!tests) return tests;
  const roots = rootsOf(root);
  return {
    ...tests,
    failures: tests.failures.map((f) => relativeName(f, root, roots)),
    ...(tests.names ? { names: tests.names.map((t) => relativeName(t, root, roots)) } : {}),
  };
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
