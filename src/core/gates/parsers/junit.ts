import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { TestCounts, TestName } from './types';
import { DistinctNames, tally } from './testRunners/names';
import { displayPath, errorMessage } from './text';

/**
 * A JUnit XML report (issue 47), read with `fast-xml-parser` into the same counts, failures and
 * inventory the console parsers give: jest-junit, mocha-junit-reporter, vitest `--reporter=junit`,
 * pytest `--junitxml`, PHPUnit `--log-junit`, go-junit-report, Playwright, cargo2junit… all write
 * `<testsuites>` (or one bare `<testsuite>`) holding suites, possibly nested, holding
 * `<testcase>`s; a test case fails with a `<failure>` or an `<error>` and is skipped with a
 * `<skipped/>`. Counts are the test cases, not the suites' attributes — except that a suite whose
 * own `failures`/`errors` say more than its test cases show (a file that failed to load) adds one
 * failing test named `<suite> (suite error)`: a report never makes a failure disappear.
 *
 * A test's name is `file > suites > classname > name`, each part only when it adds something (a
 * part already said, up to case and punctuation, is left out: vitest names the suite by its file,
 * go-junit-report the class by its package); names repeated in one report (Playwright's projects)
 * are made distinct (`DistinctNames`). Its file is the case's or its suite's `file` attribute
 * (relative to `cwd` when inside it), or a suite or class name that is a test file's path.
 */
export type JUnitRead = { tests: TestCounts } | { error: string };

const LISTS = new Set(['testsuite', 'testcase', 'failure', 'error', 'skipped']);

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  htmlEntities: true,
  isArray: (name) => LISTS.has(name),
});

type Node = Record<string, unknown>;

export function readJUnit(xml: string, cwd?: string): JUnitRead {
  if (!xml.trim()) return { error: 'the report is empty' };
  const valid = XMLValidator.validate(xml);
  if (valid !== true) return { error: `the report is not well-formed XML (line ${valid.err.line}: ${valid.err.msg})` };
  let doc: Node;
  try {
    doc = parser.parse(xml) as Node;
  } catch (error) {
    return { error: `the report could not be parsed: ${error instanceof Error ? error.message : String(error)}` };
  }
  const hasRoot = 'testsuites' in doc;
  const suites = hasRoot ? nodes(doc.testsuites).flatMap((r) => nodes(r.testsuite)) : nodes(doc.testsuite);
  if (!hasRoot && suites.length === 0) return { error: 'the report has no <testsuites> or <testsuite> element' };
  const reader = new Reader(cwd);
  for (const suite of suites) reader.suite(suite, []);
  return { tests: tally(reader.tests, true) };
}

interface Read extends TestName {
  message?: string;
}

interface Part {
  text: string;
  file?: string;
}

class Reader {
  readonly tests: Read[] = [];
  private readonly distinct = new DistinctNames();

  constructor(private readonly cwd: string | undefined) {}

  /** The suite's test cases, then its nested suites; `path`: the suites around it. Returns how many failing cases it holds. */
  suite(suite: Node, path: readonly Part[]): number {
    const own = attr(suite, 'name');
    const file = attr(suite, 'file') ?? inherited(path) ?? (own && testFilePath(own) ? own : undefined);
    const here: Part[] = own ? [...path, { text: own, ...(file ? { file } : {}) }] : [...path];
    let failing = 0;
    for (const c of nodes(suite.testcase)) failing += this.testCase(c, here, file);
    for (const inner of nodes(suite.testsuite)) failing += this.suite(inner, here);
    // the suite says more failed than its cases show: the rest failed outside any case (a file that did not load)
    const said = count(attr(suite, 'failures')) + count(attr(suite, 'errors'));
    const direct = [...list(suite.error), ...list(suite.failure)];
    if (said > failing || direct.length > 0) {
      const name = this.distinct.name(`${joinParts(here, file && this.shown(file)) || 'report'} (suite error)`);
      const message = direct.length > 0 ? problemMessage(direct[0]) : `the report counts ${said} failing, its test cases ${failing}`;
      this.tests.push({ name, status: 'fail', ...(message ? { message } : {}), ...(file ? { file: this.shown(file) } : {}) });
      failing = Math.max(said, failing + 1);
    }
    return failing;
  }

  /** How many failures and errors the case holds (pytest reports a failed test and its teardown's error on one name). */
  private testCase(c: Node, suites: readonly Part[], suiteFile: string | undefined): number {
    const classname = attr(c, 'classname') ?? attr(c, 'class');
    const file = attr(c, 'file') ?? suiteFile ?? (classname && testFilePath(classname) ? classname : undefined);
    const title = attr(c, 'name') ?? '';
    const parts = classname ? [...suites, { text: classname }] : [...suites];
    const prefix = joinParts(parts, file && this.shown(file), title);
    const name = this.distinct.name(prefix ? `${prefix} > ${title}` : title);
    const problems = [...list(c.failure), ...list(c.error)];
    const status: TestName['status'] = problems.length > 0 ? 'fail' : c.skipped !== undefined ? 'skip' : 'pass';
    const message = problems.length > 0 ? problemMessage(problems[0]) : undefined;
    this.tests.push({ name, status, ...(message ? { message } : {}), ...(file ? { file: this.shown(file) } : {}) });
    return problems.length;
  }

  private shown(file: string): string {
    return displayPath(file, this.cwd);
  }
}

/** The file and the parts of a test's path that add something, joined by ` > ` (`title`: the case's own name, which a part may repeat). */
function joinParts(parts: readonly Part[], file: string | undefined, title = ''): string {
  const said: string[] = [];
  const out: string[] = [];
  const add = (text: string) => {
    const key = squash(text);
    if (!key || said.some((s) => s === key || s.endsWith(key) || key.endsWith(s))) return;
    said.push(key);
    out.push(text);
  };
  if (file) add(file);
  for (const p of parts) {
    // a class named in the title already (jest-junit's `classname` is the full title) adds nothing
    if (title && squash(title).includes(squash(p.text))) continue;
    add(p.text);
  }
  return out.join(' > ');
}

/** A name's letters and digits only, lower-cased: `Tests\CalcTest` and `Tests.CalcTest` are one. */
function squash(text: string): string {
  return text
    .toLowerCase()
    .replace(/\.(?:[cm]?[jt]sx?|py|php|rb|go|rs)$/, '')
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

function inherited(path: readonly Part[]): string | undefined {
  return path.length > 0 ? path[path.length - 1].file : undefined;
}

/** A suite or class named by a test file's path (vitest, Playwright). */
function testFilePath(text: string): boolean {
  return /^[^\s<>"|?*]+\.(?:[cm]?[jt]sx?|py|php|rb|go|rs)$/.test(text);
}

/** The `message` attribute and the first meaningful lines of the body that it does not already say, stack frames dropped. */
function problemMessage(problem: unknown): string | undefined {
  const node: Node = typeof problem === 'string' ? { '#text': problem } : problem && typeof problem === 'object' ? (problem as Node) : {};
  const kept = (attr(node, 'message') ?? '')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(0, 3);
  const body = typeof node['#text'] === 'string' ? node['#text'] : '';
  for (const line of (errorMessage(body.split('\n'), 8) ?? '').split('\n')) {
    if (kept.length >= 4) break;
    if (line && !kept.some((k) => k.includes(line) || line.includes(k))) kept.push(line);
  }
  return kept.length ? kept.join('\n') : undefined;
}

/** An element's children of one name as they were parsed (text-only ones are strings). */
function list(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}

function nodes(value: unknown): Node[] {
  return list(value).map((v) => (v && typeof v === 'object' ? (v as Node) : {}));
}

function attr(node: Node, key: string): string | undefined {
  const value = node[key];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function count(value: string | undefined): number {
  const n = Number(value);
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}
