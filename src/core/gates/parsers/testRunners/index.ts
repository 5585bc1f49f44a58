import type { TestCounts } from '../types';
import { parseCargoTest } from './cargoTest';
import { parseGoTest } from './goTest';
import { parseJest, parseVitest } from './jestVitest';
import { parseMocha } from './mocha';
import { parseNodeTest } from './nodeTest';
import { parsePlainCounts } from './plainCounts';
import { parsePytest } from './pytest';

/** Each recognises only its own summary lines, so running them all never counts a line twice. */
const FAMILIES: readonly ((lines: readonly string[]) => TestCounts | undefined)[] = [
  parseMocha,
  parseJest,
  parseVitest,
  parseNodeTest,
  parsePytest,
  parseGoTest,
  parseCargoTest,
  parsePlainCounts,
];

/** Test counts from every runner found in the output, summed (a monorepo runs several). */
export function parseTests(lines: readonly string[]): TestCounts | undefined {
  let sum: TestCounts | undefined;
  // one runner that names no tests leaves the sum without an inventory: a partial one would make its tests look deleted
  let named = true;
  for (const family of FAMILIES) {
    const counts = family(lines);
    if (!counts) continue;
    sum ??= { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
    sum.passed += counts.passed;
    sum.failed += counts.failed;
    sum.skipped += counts.skipped;
    sum.total += counts.total;
    sum.failures.push(...counts.failures);
    named &&= counts.names !== undefined;
    if (counts.names) sum.names = [...(sum.names ?? []), ...counts.names];
  }
  if (sum && !named) delete sum.names;
  return sum;
}
