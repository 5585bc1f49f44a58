import type { TestCounts, TestName } from '../types';
import { errorMessage } from '../text';
import { completeNames } from './names';
import { type EventLog, Parser, type Result } from 'tap-parser';
import { tapDocuments } from './tap';

/** `ℹ pass 3`: the spec reporter's summary (node's default on a terminal). */
const SPEC_SUMMARY = /^ℹ\s+(tests|pass|fail|cancelled|skipped|todo)\s+(\d+)\s*$/;
const SPEC_FAILING = /^✖ failing tests:\s*$/;
const SPEC_FAILED_TEST = /^✖ (.+?)(?: \(\d+(?:\.\d+)?m?s\))?\s*$/;

/**
 * node:test, in both its TAP (`# pass N`, `not ok N - name` + YAML) and spec (`ℹ pass N`,
 * the `✖ failing tests:` section) forms. Only the TAP documents node wrote are read (`tap.ts`:
 * tape, node-tap and ava print TAP too). Each summary ends one run; runs are summed.
 * Cancelled tests count as failed: node cancels what a failing hook or timeout cut short.
 */
export function parseNodeTest(lines: readonly string[]): TestCounts | undefined {
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  const docs = tapDocuments(lines).filter((d) => d.dialect === 'node-test');
  const entries: [string, number][] = docs.flatMap((d) => [...(d.summary ?? [])]);
  for (const line of lines) {
    const m = SPEC_SUMMARY.exec(line);
    if (m) entries.push([m[1], Number(m[2])]);
  }
  if (docs.length === 0 && entries.length === 0) return undefined;
  for (const [key, n] of entries) {
    if (key === 'tests') counts.total += n;
    else if (key === 'pass') counts.passed += n;
    else if (key === 'fail' || key === 'cancelled') counts.failed += n;
    else if (key === 'skipped' || key === 'todo') counts.skipped += n;
  }
  const tapLines = docs.flatMap((d) => d.lines);
  // The two forms share no lines, so a monorepo mixing them is read by both without overlap.
  const tap = tapTests(tapLines);
  counts.failures = [...tap.failures, ...specFailures(lines)];
  return completeNames(counts, tap.names.length > 0 ? tap.names : specNames(lines));
}

/**
 * The TAP documents' tests, from `tap-parser` (node-tap's own parser: it nests each `# Subtest:`
 * and parses the YAML diagnostics): every test with its suites (`suite > test`) and outcome,
 * suites left out (`type: 'suite'`); the failures by their own name, with the `error` and the
 * `location`'s file, a suite or a test failing only because a subtest did left out.
 */
function tapTests(lines: readonly string[]): { names: TestName[]; failures: TestCounts['failures'] } {
  const out = { names: [] as TestName[], failures: [] as TestCounts['failures'] };
  if (lines.length > 0) walk(Parser.parse(`${lines.join('\n')}\n`), [], out);
  return out;
}

function walk(events: EventLog, path: readonly string[], out: { names: TestName[]; failures: TestCounts['failures'] }): void {
  let pending: EventLog | undefined;
  for (const [type, data] of events) {
    if (type === 'child') {
      pending = data as EventLog;
      continue;
    }
    if (type !== 'assert') continue;
    const r = data as Result;
    const children = r.closingTestPoint ? pending : undefined;
    pending = undefined;
    const diag = (r.diag ?? {}) as Record<string, unknown>;
    if (children) walk(children, [...path, r.name], out);
    if (diag.type === 'suite') continue;
    const location = typeof diag.location === 'string' ? /^(.+):\d+:\d+$/.exec(diag.location)?.[1] : undefined;
    const status: TestName['status'] = r.skip || r.todo ? 'skip' : r.ok ? 'pass' : 'fail';
    out.names.push({ name: [...path, r.name].join(' > '), status, ...(location ? { file: location } : {}) });
    if (r.ok || r.skip || r.todo || diag.failureType === 'subtestsFailed') continue;
    const message = typeof diag.error === 'string' ? errorMessage(diag.error.split('\n')) : undefined;
    out.failures.push({ name: r.name, message, ...(location ? { file: location } : {}) });
  }
}

function specFailures(lines: readonly string[]): TestCounts['failures'] {
  const failures: TestCounts['failures'] = [];
  let inSection = false;
  for (let i = 0; i < lines.length; i++) {
    if (SPEC_FAILING.test(lines[i])) {
      inSection = true;
      continue;
    }
    if (!inSection) continue;
    const m = SPEC_FAILED_TEST.exec(lines[i]);
    if (!m) {
      // Anything else at the margin (the next run's `▶ suite`, `ℹ tests`) closes the section.
      if (/^\S/.test(lines[i]) && !/^test at /.test(lines[i])) inSection = false;
      continue;
    }
    const body: string[] = [];
    for (let j = i + 1; j < lines.length && /^\s/.test(lines[j]); j++) body.push(lines[j]);
    failures.push({ name: m[1], message: errorMessage(body) });
  }
  return failures;
}

const SPEC_SUITE_OPEN = /^(\s*)▶ (.+?)\s*$/;
const SPEC_RESULT = /^(\s*)(✔|✖|﹣) (.+?)(?: \(\d+(?:\.\d+)?m?s\))?\s*(# (?:SKIP|TODO)\b.*)?$/;

/**
 * The spec reporter's tree (what node prints to a terminal): `▶ suite` opens a suite, which
 * ends with a line of the same name at its indent; `✔`, `✖` and `﹣ … # SKIP` are tests. The
 * `✖ failing tests:` section repeats failures (with `test at <file>`): not counted again, but
 * it says where each failing test is.
 */
function specNames(lines: readonly string[]): TestName[] {
  const names: TestName[] = [];
  const open: { indent: number; name: string }[] = [];
  const where = new Map<string, string>();
  let inFailing = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (SPEC_FAILING.test(line)) {
      inFailing = true;
      continue;
    }
    if (inFailing) {
      const at = /^test at (.+):\d+:\d+\s*$/.exec(line);
      const failed = at ? SPEC_RESULT.exec(lines[i + 1] ?? '') : null;
      if (at && failed) where.set(failed[3], at[1]);
      if (!line.trim() || /^\s/.test(line) || at || line.startsWith('✖ ')) continue;
      inFailing = false;
    }
    const suite = SPEC_SUITE_OPEN.exec(line);
    if (suite && !/\(\d+(?:\.\d+)?m?s\)\s*$/.test(line)) {
      open.push({ indent: suite[1].length, name: suite[2] });
      continue;
    }
    const m = SPEC_RESULT.exec(line);
    if (!m) continue;
    const indent = m[1].length;
    while (open.length && open[open.length - 1].indent > indent) open.pop();
    const top = open[open.length - 1];
    if (top && top.indent === indent && top.name === m[3]) {
      open.pop(); // the suite's closing line
      continue;
    }
    const status: TestName['status'] = m[4] || m[2] === '﹣' ? 'skip' : m[2] === '✔' ? 'pass' : 'fail';
    names.push({ name: [...open.filter((o) => o.indent < indent).map((o) => o.name), m[3]].join(' > '), status });
  }
  for (const t of names) {
    const file = t.status === 'fail' ? where.get(t.name.split(' > ').at(-1)!) : undefined;
    if (file) t.file = file;
  }
  return names;
}
