import { removedLines } from './integrity';
import { sameButRenamed } from './renames';
import { type TestCase, type TestShape, readTestShape } from './testShapes';

/**
 * The diff rule (issue 47): a required test gate whose output is not read — no test names, no
 * counts (uvu, an in-house `node checks.js`) — cannot be judged by its inventory; its exit code
 * alone would let a deleted test pass. So the task's diff is read instead: a change to the files
 * the gate runs that removes or disables test code — a test case gone, a whole test file deleted,
 * a skip or `.only` marker added, a test body emptied, assertions removed — is the gate weakened,
 * held as on a runner that names its tests. A test renamed or moved with the same body (but for
 * renamed identifiers) is no weakening, nor are tests added or changes to source files only. The
 * task's words are never matched against test names.
 */

/** One changed file the gate runs, at the task's base and now (undefined: absent). */
export interface TestFileText {
  file: string;
  before?: string;
  after?: string;
}

export interface TestCodeFinding {
  file: string;
  what: 'removed' | 'deleted' | 'skipped' | 'emptied' | 'assertions' | 'focused';
  /** The tests concerned, by key (`suite > title`). */
  tests: string[];
  /** One sentence, naming the file and the tests, ending with what to restore. */
  text: string;
}

const MAX_LISTED = 8;

interface Shaped {
  file: string;
  before?: TestShape;
  after?: TestShape;
  beforeText?: string;
  afterText?: string;
}

interface Pool {
  /** Cases that are new in some file (their key was not there at the base): where a removed case may have gone. */
  added: { file: string; c: TestCase; used: boolean }[];
  /** Trimmed lines added anywhere, as a multiset: where a removed check may have gone. */
  lines: Map<string, number>;
}

/** What the changes remove or disable of the tests, file by file; empty for an honest change. */
export function testCodeChanges(changes: readonly TestFileText[]): TestCodeFinding[] {
  const shaped: Shaped[] = changes.map((c) => ({
    file: c.file,
    beforeText: c.before,
    afterText: c.after,
    before: c.before !== undefined ? readTestShape(c.file, c.before) : undefined,
    after: c.after !== undefined ? readTestShape(c.file, c.after) : undefined,
  }));
  const pool: Pool = { added: [], lines: new Map() };
  for (const s of shaped) {
    const had = new Set((s.before?.cases ?? []).map((c) => c.key));
    for (const c of s.after?.cases ?? []) if (!had.has(c.key)) pool.added.push({ file: s.file, c, used: false });
    // the lines it added are the lines the reverse change removes
    for (const line of removedLines(s.afterText ?? '', s.beforeText ?? '')) pool.lines.set(line, (pool.lines.get(line) ?? 0) + 1);
  }
  return shaped.flatMap((s) => (s.before ? fileFindings(s, s.before, pool) : []));
}

function fileFindings(s: Shaped, before: TestShape, pool: Pool): TestCodeFinding[] {
  const after = s.after ?? { cases: [], outside: 0, outsideLines: [], focused: 0 };
  const now = new Map(after.cases.map((c) => [c.key, c]));
  const removed: string[] = [];
  const skipped: string[] = [];
  const emptied: string[] = [];
  const fewer: { key: string; was: number; is: number }[] = [];
  for (const c of before.cases) {
    const n = now.get(c.key);
    if (!n) {
      if (!c.disabled && !movedOrRenamed(c, s.file, pool)) removed.push(c.key);
    } else if (!c.disabled && n.disabled) skipped.push(c.key);
    else if (!c.empty && n.empty) emptied.push(c.key);
    else if (n.assertions < c.assertions) fewer.push({ key: c.key, was: c.assertions, is: n.assertions });
  }
  const lostOutside = outsideLost(before, after, pool);
  const out: TestCodeFinding[] = [];
  const f = (what: TestCodeFinding['what'], tests: string[], text: string) => out.push({ file: s.file, what, tests, text });
  if (s.afterText === undefined) {
    if (removed.length || lostOutside.length)
      f(
        'deleted',
        removed,
        `\`${s.file}\` was deleted${removed.length ? `, and its tests ${listed(removed)} are nowhere else` : ''}${lostOutside.length ? `${removed.length ? ';' : ','} ${checks(lostOutside)} gone with it` : ''} — restore it`,
      );
    return out;
  }
  const them = (n: string[]) => (n.length === 1 ? 'it' : 'them');
  const are = (n: string[]) => (n.length === 1 ? 'is' : 'are');
  if (removed.length)
    f(
      'removed',
      removed,
      `test${plural(removed)} ${listed(removed)} in \`${s.file}\` ${are(removed)} gone (deleted, or renamed with another body) — restore ${them(removed)}`,
    );
  if (skipped.length)
    f(
      'skipped',
      skipped,
      `test${plural(skipped)} ${listed(skipped)} in \`${s.file}\` ${are(skipped)} skipped now — un-skip ${them(skipped)}`,
    );
  if (emptied.length)
    f(
      'emptied',
      emptied,
      `test${plural(emptied)} ${listed(emptied)} in \`${s.file}\` had a body at the task's base and ${are(emptied)} empty now — restore ${emptied.length === 1 ? 'its body' : 'their bodies'}`,
    );
  if (fewer.length)
    f(
      'assertions',
      fewer.map((t) => t.key),
      `test${plural(fewer)} ${fewer
        .slice(0, MAX_LISTED)
        .map((t) => `\`${t.key}\` (${t.was} assertion${t.was === 1 ? '' : 's'} → ${t.is})`)
        .join(
          ', ',
        )}${fewer.length > MAX_LISTED ? ` and ${fewer.length - MAX_LISTED} more` : ''} in \`${s.file}\` lost assertions — restore them`,
    );
  if (lostOutside.length) f('assertions', [], `\`${s.file}\` lost ${checks(lostOutside)} — restore them`);
  if (after.focused > before.focused)
    f(
      'focused',
      [],
      `\`${s.file}\` has ${after.focused - before.focused} more \`.only\`/focus marker${after.focused - before.focused === 1 ? '' : 's'} than at the task's base, so its other tests no longer run — remove ${after.focused - before.focused === 1 ? 'it' : 'them'}`,
    );
  return out;
}

/** A case gone from its key is kept when an added case, in its file first, has its body (identifiers renamed at most). */
function movedOrRenamed(c: TestCase, file: string, pool: Pool): boolean {
  const candidates = [...pool.added.filter((a) => a.file === file), ...pool.added.filter((a) => a.file !== file)];
  const match = candidates.find((a) => !a.used && sameButRenamed({ title: c.name, body: c.body }, { title: a.c.name, body: a.c.body }));
  if (match) match.used = true;
  return match !== undefined;
}

/** Assertion lines outside any case that are gone and not found added anywhere (moved), as many as the count dropped. */
function outsideLost(before: TestShape, after: TestShape, pool: Pool): string[] {
  const drop = before.outside - after.outside;
  if (drop <= 0) return [];
  const left = new Map<string, number>();
  for (const l of after.outsideLines) left.set(l, (left.get(l) ?? 0) + 1);
  const gone: string[] = [];
  for (const l of before.outsideLines) {
    const n = left.get(l) ?? 0;
    if (n > 0) left.set(l, n - 1);
    else gone.push(l);
  }
  const lost = gone.filter((l) => {
    const n = pool.lines.get(l) ?? 0;
    if (n > 0) pool.lines.set(l, n - 1);
    return n === 0;
  });
  return lost.slice(0, drop);
}

function checks(lines: string[]): string {
  const shown = lines
    .slice(0, 3)
    .map((l) => `\`${l.length > 100 ? `${l.slice(0, 100)}…` : l}\``)
    .join(', ');
  return `${lines.length} assertion${lines.length === 1 ? '' : 's'} outside its tests (${shown}${lines.length > 3 ? `, ${lines.length - 3} more` : ''})`;
}

function plural(list: unknown[]): string {
  return list.length === 1 ? '' : 's';
}

function listed(names: string[]): string {
  const shown = names
    .slice(0, MAX_LISTED)
    .map((n) => `\`${n}\``)
    .join(', ');
  return names.length > MAX_LISTED ? `${shown} and ${names.length - MAX_LISTED} more` : shown;
}
