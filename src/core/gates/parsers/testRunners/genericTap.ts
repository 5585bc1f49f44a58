import type { TestCounts, TestName } from '../types';
import { hasOmission } from '../text';
import { DistinctNames, type ReadTest, tally } from './names';
import { type EventLog, Parser, type Result } from 'tap-parser';
import { tapDocuments, tapPoint, tapYaml, yamlValue } from './tap';

/**
 * TAP that no runner's dialect claims (`tap.ts`): brittle, zora, any producer of TAP the product
 * has never met — TAP as the universal channel (issue 47), read through `tap-parser`. A test is
 * a top-level test point; one that closes an indented subtest block (TAP 14 subtests, as brittle
 * prints them) is a test whose assertions are the block's points, and a block holding only
 * blocks is a suite whose name goes before its tests' (`suite > test`). A test fails when one of
 * its own assertions failed (not `# TODO`) or its own point is `not ok`; `# SKIP`/`# TODO`
 * points count as skipped. Names are the points' descriptions without a `# time = …` note,
 * repeats made distinct (`DistinctNames`). The names are kept only when the document's plan came
 * (a run cut short has tests that never ran).
 */
export function parseGenericTap(lines: readonly string[]): TestCounts | undefined {
  const docs = tapDocuments(lines).filter((d) => d.dialect === 'generic');
  if (docs.length === 0) return undefined;
  const tests: ReadTest[] = [];
  let complete = true;
  for (const doc of docs) {
    const events = Parser.parse(`${doc.lines.join('\n')}\n`);
    complete &&= events.some(([type]) => type === 'plan') && !hasOmission(doc.lines);
    tests.push(...new Walk(failedPoints(doc.lines)).tests(events, []));
  }
  return tally(tests, complete);
}

/**
 * The YAML under each failed point, in output order: where `tap-parser` could not parse it (brittle
 * writes a `source:` excerpt that is not valid YAML) its `actual`/`expected` are still read.
 */
function failedPoints(lines: readonly string[]): string[][] {
  const out: string[][] = [];
  for (let i = 0; i < lines.length; i++) {
    const point = /^\s*not ok\b/.test(lines[i]) ? tapPoint(lines[i]) : undefined;
    if (point && !point.directive) out.push(tapYaml(lines, i + 1, point.indent));
  }
  return out;
}

class Walk {
  constructor(private readonly yaml: string[][]) {}

  /** The tests of one level of events (the document, or a suite's block) under the suites `path`. */
  tests(events: EventLog, path: readonly string[]): ReadTest[] {
    const out: ReadTest[] = [];
    const distinct = new DistinctNames();
    let block: EventLog | undefined;
    for (const [type, data] of events) {
      if (type === 'child') block = data as EventLog;
      if (type !== 'assert') continue;
      const point = data as Result;
      const name = [...path, distinct.name(nameOf(point))];
      out.push(...(block ? this.block(block, name, point) : [test(name, point, this.failure(point))]));
      block = undefined;
    }
    return out;
  }

  /** A block closed by `point`: a test with its own assertions (and the tests nested in it), or a suite of the tests inside. */
  private block(events: EventLog, name: string[], point: Result): ReadTest[] {
    const asserts = events.some((e, i) => e[0] === 'assert' && events[i - 1]?.[0] !== 'child');
    if (!asserts && events.some((e) => e[0] === 'child')) {
      const inside = this.tests(events, name);
      const why = this.failure(point);
      // a suite that failed with every test inside passing (a hook, its plan): it fails as a test of its own
      return why !== undefined && !inside.some((t) => t.status === 'fail') ? [...inside, test(name, point, why)] : inside;
    }
    let failure: string | undefined;
    const distinct = new DistinctNames();
    let inner: EventLog | undefined;
    const nested: ReadTest[] = [];
    for (const [type, data] of events) {
      if (type === 'child') inner = data as EventLog;
      if (type !== 'assert') continue;
      const a = data as Result;
      if (inner) nested.push(...this.block(inner, [...name, distinct.name(nameOf(a))], a));
      else {
        // every failed point is read, in order: each takes its own YAML
        const why = this.failure(a);
        failure ??= why;
      }
      inner = undefined;
    }
    const closing = this.failure(point);
    const own = test(name, point, failure ?? closing);
    if (failure !== undefined && own.status === 'pass') own.status = 'fail';
    return [own, ...nested];
  }

  /** Why a failed point failed (its description, what was expected and what came); undefined for a point that did not fail. */
  private failure(point: Result): string | undefined {
    if (point.ok || point.skip || point.todo) return undefined;
    const raw = this.yaml.shift() ?? [];
    const parts = [nameOf(point) || 'assertion failed'];
    for (const key of ['expected', 'actual', 'wanted', 'found']) {
      const value: unknown = point.diag?.[key] ?? yamlValue(raw, key);
      if (value !== undefined) parts.push(`${key}: ${typeof value === 'string' ? value.trim() : JSON.stringify(value)}`);
    }
    return parts.join('\n');
  }
}

function test(name: string[], point: Result, message: string | undefined): ReadTest {
  const s: TestName['status'] = point.skip || point.todo ? 'skip' : point.ok ? 'pass' : 'fail';
  return { name: name.join(' > '), status: s, ...(s === 'fail' && message ? { message } : {}) };
}

/** A point's description without a runner's timing note (`# time = 1.2ms`, `# time=1.2ms`). */
function nameOf(point: Result): string {
  return point.name.replace(/\s*# time ?= ?[\d.]+ ?m?s\s*$/, '').trim();
}
