import type { TestCounts, TestName } from '../types';
import { errorMessage, hasOmission } from '../text';
import { completeNames, DistinctNames } from './names';
import { tapDocuments, tapPoint, tapYaml, yamlValue } from './tap';

/** The last lines of ava's default reporter: `2 tests failed`, `7 tests passed`, `1 known failure`, `1 test skipped`… */
const SUMMARY =
  /^ {2}\d+ (?:tests? (?:passed|failed|skipped|todo)|known failures?|hooks? failed|uncaught exceptions?|unhandled rejections?|tests? remained pending after a timeout)\s*$/;
/** ava 4: `✔ t`, `✖ t message`, `- t`; ava 5+: `✔ t`, `✔ [expected fail] t`, `✘ [fail]: t message`, `- [skip] t`, `- [todo] t`. */
const TEST = /^ {2}([✔✖✘-]) (?:\[(fail|unexpected pass|expected fail|skip|todo)\]:? )?(.*?)(?: \(\d+(?:\.\d+)?m?s\))?\s*$/;
const RULE = /^ {2}─\s*$/;
/** The end of another runner's run: mocha's `N passing`, jest's and vitest's `Tests`, a TAP or node:test summary. */
const FOREIGN_SUMMARY = /^\s*\d+ (?:passing|pending|failing)\b|^\s*Tests:?\s+.*\d|^# (?:tests|pass|fail)\s+\d|^ℹ tests \d/;
/** A failure of the run rather than of a test: `✘ No tests found in x.js`, `✘ x.js exited with a non-zero exit code: 1`. */
const RUN_FAILURE =
  /^(?:No tests found in (\S+?)(?:,.*)?|(\S+) exited (?:with a non-zero exit code: \d+|due to \S+)|Internal error when running (\S+)|Timed out while running tests|Couldn’t find any files to test)$/;

/**
 * ava's default reporter: a line per test (`✔`, `✘ [fail]:`/`✖`, `- [skip]`), then a block per
 * failure between `─` rules, then the counts. A test is named by the title ava prints (with
 * `file › ` before it when several files ran). A failure's file is the source line ava prints
 * under its title (`test/parse.js:12`): ava takes it from the first frame in the test file
 * itself, so an error thrown inside the code under test still names the test file — and when no
 * frame is in the test file ava prints none and the file stays unsaid. Passing tests' files are
 * not printed. A known failure (`test.failing`) passes; skipped and todo tests are skipped.
 */
export function parseAva(lines: readonly string[]): TestCounts | undefined {
  let counts: TestCounts | undefined;
  let names: TestName[] | undefined = [];
  let from = 0;
  for (let i = 0; i < lines.length; i++) {
    if (!SUMMARY.test(lines[i])) continue;
    let end = i;
    while (end + 1 < lines.length && SUMMARY.test(lines[end + 1])) end++;
    counts ??= { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
    // another runner's run before this one (a monorepo): its `  ✔ test` lines are not ava's
    let start = from;
    for (let j = i - 1; j >= from; j--) {
      if (!FOREIGN_SUMMARY.test(lines[j])) continue;
      start = j + 1;
      break;
    }
    const run = avaRun(lines.slice(start, i), counts, lines.slice(i, end + 1));
    names = names && run && [...names, ...run];
    from = end + 1;
    i = end;
  }
  return counts && names ? completeNames(counts, names) : counts;
}

/** One run's tests into `counts`; its names, or undefined when they disagree with ava's own counts (output of the tests mixed in). */
function avaRun(lines: readonly string[], counts: TestCounts, summary: readonly string[]): TestName[] | undefined {
  const rules = lines.flatMap((l, i) => (RULE.test(l) ? [i] : []));
  const listEnd = rules[0] ?? lines.length;
  const blocks = failureBlocks(lines.slice(listEnd + 1, rules[1] ?? lines.length));
  const names: TestName[] = [];
  for (const line of lines.slice(0, listEnd)) {
    const t = TEST.exec(line);
    if (!t) continue;
    const [, mark, tag, text] = t;
    const run = mark !== '-' && !tag ? RUN_FAILURE.exec(text) : null;
    if (run) {
      const file = run[1] ?? run[2] ?? run[3];
      counts.failures.push({ name: text, ...(file ? { file } : {}) });
      counts.failed++;
      counts.total++;
      continue;
    }
    const status: TestName['status'] = mark === '-' ? 'skip' : mark === '✔' ? 'pass' : 'fail';
    const block = status === 'fail' ? blocks.find((b) => text === b.title || text.startsWith(`${b.title} `)) : undefined;
    const name = block?.title ?? text;
    names.push({ name, status, ...(block?.file ? { file: block.file } : {}) });
    if (status === 'pass') counts.passed++;
    else if (status === 'skip') counts.skipped++;
    else {
      counts.failed++;
      const message = block?.message ?? (text.length > name.length ? text.slice(name.length + 1) : undefined);
      counts.failures.push({ name, ...(message ? { message } : {}), ...(block?.file ? { file: block.file } : {}) });
    }
    counts.total++;
  }
  return agrees(names, summary) && !hasOmission(lines) ? names : undefined;
}

/** Whether the test lines add up to ava's counts (`N tests passed` is printed only when none failed). */
function agrees(names: readonly TestName[], summary: readonly string[]): boolean {
  const said = (re: RegExp) => summary.reduce((n, l) => n + Number(re.exec(l)?.[1] ?? 0), 0);
  const count = (status: TestName['status']) => names.filter((t) => t.status === status).length;
  const failed = said(/^ {2}(\d+) (?:tests?|hooks?) failed/);
  const skipped = said(/^ {2}(\d+) tests? (?:skipped|todo)/);
  const passed = said(/^ {2}(\d+) tests? passed/) + said(/^ {2}(\d+) known failures?/);
  return count('fail') === failed && count('skip') === skipped && (failed > 0 || count('pass') === passed);
}

interface FailureBlock {
  title: string;
  file?: string;
  message?: string;
}

/** The blocks between the rules: a title, a blank line, the source line (`file:line`) when ava has one, the error; two blank lines apart. */
function failureBlocks(lines: readonly string[]): FailureBlock[] {
  const blocks: FailureBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    while (i < lines.length && !lines[i].trim()) i++;
    if (i >= lines.length) break;
    const title = lines[i].trim();
    let end = i + 1;
    while (end < lines.length && !(lines[end].trim() && !lines[end - 1].trim() && !lines[end - 2]?.trim())) end++;
    const body = lines.slice(i + 1, end).filter((l) => !/^\s*ℹ /.test(l));
    const first = body.find((l) => l.trim());
    const source = first ? /^\s*(\S+\.[cm]?[jt]sx?):\d+\s*$/.exec(first) : null;
    // the code excerpt (`  5: t.is(…)`) and ava's `›` frames are not the message
    const text = body.filter((l) => l !== first || !source).filter((l) => !/^\s*\d+:\s/.test(l) && !/^\s*›\s/.test(l));
    const message = errorMessage(text);
    blocks.push({ title, ...(source ? { file: source[1] } : {}), ...(message ? { message } : {}) });
    i = end;
  }
  return blocks.sort((a, b) => b.title.length - a.title.length);
}

/**
 * Flat TAP (ava `--tap`, mocha's tap reporter): one test point per test, `# SKIP`/`# TODO` as
 * skipped. The name is the point's description; the file is left unsaid — ava's `at:` is a
 * stack (ava 6 puts its own `assert.js` or the library's frame there), never where the test is.
 */
export function parseFlatTap(lines: readonly string[]): TestCounts | undefined {
  const docs = tapDocuments(lines).filter((d) => d.dialect === 'flat');
  if (docs.length === 0) return undefined;
  const counts: TestCounts = { passed: 0, failed: 0, skipped: 0, total: 0, failures: [] };
  const names: TestName[] = [];
  const cut = docs.some((d) => hasOmission(d.lines));
  for (const doc of docs) {
    const distinct = new DistinctNames();
    for (let i = 0; i < doc.lines.length; i++) {
      const point = /^(?:not )?ok\b/.test(doc.lines[i]) ? tapPoint(doc.lines[i]) : undefined;
      if (!point) continue;
      const name = distinct.name(point.description);
      const status: TestName['status'] = point.directive ? 'skip' : point.ok ? 'pass' : 'fail';
      names.push({ name, status });
      if (status !== 'fail') continue;
      const yaml = tapYaml(doc.lines, i + 1, 0);
      const text = yaml.length
        ? yamlValue(yaml, 'message') || yamlValue(yaml, 'details') || yamlValue(yaml, 'values') || ''
        : indentedAfter(doc.lines, i + 1).join('\n'); // mocha's tap reporter: the error, indented, no YAML
      const message = errorMessage(text.split('\n'));
      counts.failures.push({ name, ...(message ? { message } : {}) });
    }
  }
  counts.passed = names.filter((n) => n.status === 'pass').length;
  counts.failed = names.filter((n) => n.status === 'fail').length;
  counts.skipped = names.filter((n) => n.status === 'skip').length;
  counts.total = names.length;
  return cut ? counts : completeNames(counts, names);
}

function indentedAfter(lines: readonly string[], from: number): string[] {
  const out: string[] = [];
  for (let i = from; i < lines.length && /^\s+\S/.test(lines[i]); i++) out.push(lines[i]);
  return out;
}
