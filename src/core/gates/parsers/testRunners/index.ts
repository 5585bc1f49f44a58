import type { TestCounts } from '../types';
import { parseAva, parseFlatTap } from './ava';
import { parseCargoTest } from './cargo';
import { parseGenericTap } from './genericTap';
import { parseGoTest } from './go';
import { parseJasmine } from './jasmine';
import { parseJest, parseVitest } from './jestVitest';
import { parseMocha } from './mocha';
import { parseNodeTap } from './nodeTap';
import { parseNodeTest } from './nodeTestRunner';
import { parsePlainCounts } from './plainCounts';
import { parsePytest } from './pytest';
import { parseTape } from './tape';
import { parseUvu } from './uvu';

/**
 * Each recognises only its own summary lines, so running them all never counts a line twice; the
 * TAP runners (node:test, tape, node-tap, flat TAP of ava and mocha) each read only the TAP
 * documents of their own dialect (`tap.ts`); TAP that no dialect claims is read as plain TAP
 * (`genericTap.ts`).
 */
const FAMILIES: readonly ((lines: readonly string[]) => TestCounts | undefined)[] = [
  parseMocha,
  parseJest,
  parseVitest,
  parseNodeTest,
  parseTape,
  parseNodeTap,
  parseAva,
  parseFlatTap,
  parseGenericTap,
  parseUvu,
  parseJasmine,
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
