import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import type { TestCounts, TestName } from './parsers/types';

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
