import type { TestCounts, TestName } from '../types';
import { errorMessage } from '../text';
import { completeNames } from './names';
import { tapDocuments, tapYaml } from './tap';

/** `ℹ pass 3`: the spec reporter's summary (node's default on a terminal). */
const SPEC_SUMMARY = /^ℹ\s+(tests|pass|fail|cancelled|skipped|todo)\s+(\d+)\s*$/;
const NOT_OK = /^(\s*)not ok \d+ - (.+?)\s*(?:#\s*(?:TODO|SKIP).*)?$/;
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
  counts.failures = [...tapFailures(tapLines), ...specFailures(lines)];
  const tap = tapNames(tapLines);
  return completeNames(counts, tap.length > 0 ? tap : specNames(lines));
}

const TAP_RESULT = /^(\s*)(ok|not ok) \d+ - (.+?)\s*(#\s*(?:TODO|SKIP)\b.*)?$/;
const TAP_SUBTEST = /^(\s*)# Subtest: (.+?)\s*$/;

/** Every test of the TAP stream with its suites (`suite > test`) and outcome; suites are left out. */
function tapNames(lines: readonly string[]): TestName[] {
  const names: TestName[] = [];
  const open: { indent: number; name: string }[] = [];
  for (let i = 0; i < lines.length; i++) {
    const sub = TAP_SUBTEST.exec(lines[i]);
    if (sub) {
      while (open.length && open[open.length - 1].indent >= sub[1].length) open.pop();
      open.push({ indent: sub[1].length, name: sub[2] });
      continue;
    }
    const m = TAP_RESULT.exec(lines[i]);
    if (!m) continue;
    const indent = m[1].length;
    while (open.length && open[open.length - 1].indent >= indent) open.pop();
    const yaml = tapYaml(lines, i + 1, indent);
    if (yaml.some((l) => /^\s*type: 'suite'/.test(l))) continue;
    const location = yaml.map((l) => /^\s*location: '(.+):\d+:\d+'\s*$/.exec(l)?.[1]).find(Boolean);
    const status: TestName['status'] = m[4] ? 'skip' : m[2] === 'ok' ? 'pass' : 'fail';
    names.push({ name: [...open.map((o) => o.name), m[3]].join(' > '), status, ...(location ? { file: location } : {}) });
  }
  return names;
}

function tapFailures(lines: readonly string[]): TestCounts['failures'] {
  const failures: TestCounts['failures'] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = NOT_OK.exec(lines[i]);
    if (!m) continue;
    const yaml = tapYaml(lines, i + 1, m[1].length);
    // A suite is "not ok" because a test in it failed; that test is reported on its own.
    if (/^\s*type: 'suite'/m.test(yaml.join('\n')) || yaml.some((l) => /failureType: 'subtestsFailed'/.test(l))) continue;
    const file = yaml.map((l) => /^\s*location: '(.+):\d+:\d+'\s*$/.exec(l)?.[1]).find(Boolean);
    failures.push({ name: m[2], message: yamlError(yaml), ...(file ? { file } : {}) });
  }
  return failures;
}

function yamlError(yaml: string[]): string | undefined {
  const at = yaml.findIndex((l) => /^\s*error:/.test(l));
  if (at < 0) return undefined;
  const inline = /^\s*error: *(?![|>])(\S.*)$/.exec(yaml[at]);
  if (inline) return inline[1].replace(/^'(.*)'$/, '$1');
  const indent = /^\s*/.exec(yaml[at])![0].length;
  const body: string[] = [];
  for (let i = at + 1; i < yaml.length && (!yaml[i].trim() || /^\s*/.exec(yaml[i])![0].length > indent); i++) body.push(yaml[i]);
  return errorMessage(body);
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
