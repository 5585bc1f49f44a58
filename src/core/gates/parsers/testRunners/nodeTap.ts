import type { TestCounts, TestName } from '../types';
import { hasOmission } from '../text';
import { DistinctNames, type ReadTest, tally } from './names';
import { type EventLog, Parser, type Result } from 'tap-parser';
import { type TapPoint, tapDocuments } from './tap';

/**
 * node-tap (`tap`, 16 and later; TAP is what it prints when its output is not a terminal): every
 * test is a `# Subtest:` block holding its assertions and subtests, and the runner wraps each
 * test file in a top-level subtest named by the file's path. A test is a subtest that holds
 * assertions of its own, or holds nothing, or failed on its own (a plan, a timeout, a crash) —
 * a subtest holding only subtests is a suite. Its name is the path of subtest names from the
 * file down, joined by ` > ` (`test/range.js > range parsing > 1.x.5`); repeated names under
 * one parent are made distinct (`DistinctNames`). It fails when one of its own assertions
 * failed (not `# TODO`) or it failed on its own; `# SKIP`/`# TODO` subtests count as skipped.
 * Its file is its top-level subtest's name when that is a path (what tap's runner prints; a
 * file run with plain `node` has no such level). Counts are these tests, not tap's file totals.
 * A file tap stopped at its `timeout` fails as one test named by its path, `timed out: …`.
 */
export function parseNodeTap(lines: readonly string[]): TestCounts | undefined {
  const docs = tapDocuments(lines).filter((d) => d.dialect === 'node-tap');
  if (docs.length === 0) return undefined;
  const tests: ReadTest[] = [];
  let complete = true;
  for (const doc of docs) {
    const root = subtestTree(doc.lines);
    complete &&= root.closed && allClosed(root.children) && !hasOmission(doc.lines);
    tests.push(...testsOf(root, [], undefined));
  }
  return tally(tests, complete);
}

interface Subtest {
  name: string;
  indent: number;
  children: Subtest[];
  asserts: (TapPoint & { message?: string })[];
  /** Its own result line; absent while open (a run cut short). */
  result?: TapPoint;
  /** The `file:` of its result's YAML (tap 16 writes it for a failed test file). */
  file?: string;
  /** Its result's YAML says the runner stopped it at its timeout (`timeout:` and `signal:`), in ms. */
  timeout?: string;
  /** Its result line came (the root: the document's top-level plan did). */
  closed: boolean;
}

/**
 * The subtests of a document as a tree under a root, from `tap-parser` (node-tap's own parser:
 * it nests each indented subtest, parses its YAML diagnostics and directives). A subtest's name
 * is its `# Subtest:` line; the test point that closes it is its result. A `# Subtest:` line
 * followed at once by a point of that name (tap prints a skipped subtest so) is a subtest with no
 * content. The root is closed when the document's top-level plan came.
 */
function subtestTree(lines: readonly string[]): Subtest {
  const root: Subtest = { name: '', indent: -4, children: [], asserts: [], closed: false };
  fill(root, Parser.parse(`${lines.join('\n')}\n`));
  return root;
}

const SUBTEST = /^# Subtest: (.*\S)/;

function fill(node: Subtest, events: EventLog): void {
  let waiting: Subtest | undefined;
  let announced: string | undefined;
  const own = node.indent < 0 ? undefined : events.find((e) => e[0] === 'comment' && SUBTEST.test(String(e[1])));
  for (const [type, data] of events) {
    if (type === 'plan' && node.indent < 0) node.closed = true;
    if (type === 'comment') {
      announced = own && data === own[1] ? undefined : SUBTEST.exec(String(data))?.[1];
      continue;
    }
    if (type === 'child') {
      const childEvents = data as EventLog;
      const name = SUBTEST.exec(String(childEvents.find((e) => e[0] === 'comment' && SUBTEST.test(String(e[1])))?.[1] ?? ''))?.[1];
      const child: Subtest = { name: name ?? '', indent: node.indent + 4, children: [], asserts: [], closed: false };
      fill(child, childEvents);
      node.children.push(child);
      waiting = child;
      announced = undefined;
      continue;
    }
    if (type !== 'assert') continue;
    const result = data as Result;
    const point = pointOf(result);
    if (result.closingTestPoint && waiting && !waiting.result) {
      close(waiting, point, result.diag);
      waiting = undefined;
    } else if (announced !== undefined && announced === result.name) {
      const empty: Subtest = { name: announced, indent: node.indent + 4, children: [], asserts: [], closed: false };
      close(empty, point, result.diag);
      node.children.push(empty);
    } else node.asserts.push({ ...point, ...(point.ok ? {} : { message: assertionMessage(point.description, result.diag) }) });
    announced = undefined;
  }
}

/** A subtest's own result line came: what its YAML says of its file and of tap's timeout. */
function close(t: Subtest, point: TapPoint, diag: Result['diag']): void {
  t.result = point;
  t.closed = true;
  if (!t.name) t.name = point.description;
  const file = diag?.file;
  if (typeof file === 'string' && file) t.file = file;
  if (diag?.timeout !== undefined && diag.signal) t.timeout = String(diag.timeout);
}

function pointOf(r: Result): TapPoint {
  const directive = r.skip ? 'skip' : r.todo ? 'todo' : undefined;
  return { indent: 0, ok: r.ok, description: r.name, ...(directive ? { directive } : {}) };
}

interface NodeTapTest {
  name: string;
  status: TestName['status'];
  message?: string;
  file?: string;
}

/**
 * The tests under `node` (depth first, in output order), named by their path from the top;
 * `cutAt`: the timeout at which tap stopped an enclosing test (its file), which cut short the
 * ones inside that did not finish.
 */
function testsOf(node: Subtest, path: readonly string[], file: string | undefined, cutAt?: Subtest['timeout']): NodeTapTest[] {
  const out: NodeTapTest[] = [];
  const distinct = new DistinctNames();
  if (node.indent < 0) {
    // the document's own assertions (a file run with plain `node`): each is a test
    for (const a of node.asserts) out.push(pointTest(distinct.name(a.description), a, undefined));
  }
  for (const child of node.children) {
    const name = distinct.name(child.name);
    const where = file ?? (path.length === 0 ? (child.file ?? filePath(child.name)) : undefined);
    const names = [...path, name];
    const ownFailure = child.asserts.find((a) => !a.ok && !a.directive);
    const failedInside = hasFailure(child.children);
    const failedAlone = !ownFailure && !failedInside && (child.result ? !child.result.ok && !child.result.directive : true);
    if (child.asserts.length > 0 || child.children.length === 0 || failedAlone) {
      const status: TestName['status'] = child.result?.directive ? 'skip' : ownFailure || failedAlone ? 'fail' : 'pass';
      const message = ownFailure?.message ?? (failedAlone ? aloneMessage(child, cutAt) : undefined);
      out.push({
        name: names.join(' > '),
        status,
        ...(status === 'fail' && message ? { message } : {}),
        ...(where ? { file: where } : {}),
      });
    }
    out.push(...testsOf(child, names, where, child.timeout ?? cutAt));
  }
  return out;
}

function pointTest(name: string, point: TapPoint & { message?: string }, file: string | undefined): NodeTapTest {
  const status: TestName['status'] = point.directive ? 'skip' : point.ok ? 'pass' : 'fail';
  return { name, status, ...(point.message ? { message: point.message } : {}), ...(file ? { file } : {}) };
}

/**
 * Why a test failed on its own: tap stopped it at its timeout, it did not finish (because tap
 * stopped the test around it at its timeout: a timeout's failure too, `cutAt`), or its result line.
 */
function aloneMessage(t: Subtest, cutAt: Subtest['timeout']): string {
  if (t.timeout) return `timed out: tap stopped it at its timeout (${t.timeout} ms)`;
  if (t.result) return t.result.description;
  return cutAt === undefined ? 'did not finish' : `did not finish: the test around it timed out (tap stopped it at ${cutAt} ms)`;
}

function allClosed(nodes: readonly Subtest[]): boolean {
  return nodes.every((n) => n.closed && allClosed(n.children));
}

function hasFailure(nodes: readonly Subtest[]): boolean {
  return nodes.some(
    (n) => n.asserts.some((a) => !a.ok && !a.directive) || (n.result && !n.result.ok && !n.result.directive) || hasFailure(n.children),
  );
}

/** A top-level subtest named by a test file's path (tap's runner), not by a test's title. */
function filePath(name: string): string | undefined {
  return /^[^\s]+\.(?:[cm]?[jt]sx?)$/.test(name) ? name : undefined;
}

/** The assertion, and what node-tap says was wanted and found (or the error it caught). */
function assertionMessage(description: string, diag: Result['diag']): string {
  const parts = [description || 'assertion failed'];
  for (const key of ['wanted', 'found', 'expected', 'actual']) {
    const value = diag?.[key];
    if (value !== undefined) parts.push(`${key}: ${shown(value)}`);
  }
  // tap 18+ shows a diff instead: its changed lines
  const diff =
    parts.length > 1 || typeof diag?.diff !== 'string' ? [] : diag.diff.split('\n').filter((l: string) => /^[-+](?![-+]{2})/.test(l));
  return [...parts, ...diff].slice(0, 3).join('\n');
}

/** A diagnostic's value as one short text. */
function shown(value: unknown): string {
  if (typeof value === 'string') return value.trim();
  if (value === null || typeof value !== 'object') return String(value);
  return JSON.stringify(value);
}
