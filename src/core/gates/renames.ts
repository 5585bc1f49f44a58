/**
 * Telling a renamed test from a deleted one. A task that renames a function renames its test
 * too; the test's name is gone from the run, a new one is there. It is a rename when, in the
 * same file, the new test's body is the old one's but for renamed identifiers (the same
 * tokens in the same order, identifiers mapped one-to-one, keywords, strings and numbers
 * unchanged, the test's own title aside).
 */

export interface RenameCandidate {
  name: string;
  file?: string;
}

export interface TestFileChange {
  file: string;
  /** The file's text at the base and now (undefined: absent). */
  before: string | undefined;
  after: string | undefined;
}

export interface Rename {
  from: string;
  to: string;
  file: string;
}

/** Each gone test whose body reappears, renamed, as one of the added tests in the same file. */
export function findRenames(
  gone: readonly RenameCandidate[],
  added: readonly RenameCandidate[],
  files: readonly TestFileChange[],
): Rename[] {
  const renames: Rename[] = [];
  const used = new Set<string>();
  for (const g of gone) {
    for (const f of files.filter((c) => c.before !== undefined && c.after !== undefined && (!g.file || g.file === c.file))) {
      const old = locateTest(g.name, f.before!);
      if (!old) continue;
      // the new name may differ only by its suite (a renamed describe): an unchanged body counts then
      const match = added.find(
        (a) => !used.has(a.name) && (!a.file || a.file === f.file) && sameButRenamed(old, locateTest(a.name, f.after!)),
      );
      if (!match) continue;
      used.add(match.name);
      renames.push({ from: g.name, to: match.name, file: f.file });
      break;
    }
  }
  return renames;
}

interface LocatedTest {
  title: string;
  body: string;
}

/**
 * Where a test is in a file's text, from the name a runner gives it (`suite > test`,
 * `suite › test`, `suite nested test`, `path::Class::test_x[1]`, `TestX/sub`, `tests::x`): the
 * longest tail of the name written as a string (`it('adds', …)`) or defined as a function
 * (`def test_x(`, `func TestX(`, `fn x(`), with its body.
 */
export function locateTest(name: string, text: string): LocatedTest | undefined {
  for (const title of titleCandidates(name)) {
    for (const quote of ["'", '"', '`']) {
      const at = text.indexOf(`${quote}${title}${quote}`);
      if (at < 0) continue;
      const open = text.lastIndexOf('(', at);
      if (open < 0 || text.slice(open + 1, at).trim() !== '') continue;
      const body = balanced(text, open, '(', ')');
      if (body) return { title: `${quote}${title}${quote}`, body };
    }
    const def = new RegExp(`(^|\\n)([ \\t]*)(?:async\\s+)?(def|func|fn)\\s+${escape(title)}\\s*\\(`).exec(text);
    if (def) {
      const start = def.index + def[1].length;
      if (def[3] === 'def') return { title, body: pythonBlock(text, start, def[2].length) };
      const brace = text.indexOf('{', start);
      const body = brace >= 0 ? balanced(text, brace, '{', '}') : undefined;
      if (body) return { title, body: text.slice(start, brace) + body };
    }
  }
  return undefined;
}

function titleCandidates(name: string): string[] {
  const base = name.replace(/\[[^\]]*\]$/, '');
  const out = new Set<string>();
  for (const sep of [' › ', ' > ', '::', '/']) if (base.includes(sep)) out.add(base.slice(base.lastIndexOf(sep) + sep.length));
  // mocha joins suites and title with spaces: every tail of the words, longest first
  const words = base.split(' ');
  for (let i = 0; i < words.length; i++) out.add(words.slice(i).join(' '));
  return [...out].filter((t) => t.trim()).sort((a, b) => b.length - a.length);
}

function balanced(text: string, open: number, left: string, right: string): string | undefined {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === '`') {
      i = skipString(text, i);
      continue;
    }
    if (c === left) depth++;
    else if (c === right && --depth === 0) return text.slice(open, i + 1);
  }
  return undefined;
}

function skipString(text: string, at: number): number {
  const quote = text[at];
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
    else if (text[i] === '\n' && quote !== '`') return i;
  }
  return text.length;
}

function pythonBlock(text: string, start: number, indent: number): string {
  const lines = text.slice(start).split('\n');
  const kept = [lines[0]];
  for (const line of lines.slice(1)) {
    if (line.trim() && /^\s*/.exec(line)![0].length <= indent) break;
    kept.push(line);
  }
  return kept.join('\n');
}

const TOKEN = /"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|[^`\\])*`|[A-Za-z_$][\w$]*|\d[\w.]*|\S/g;
const KEYWORDS = new Set(
  'async await break case catch class const continue def default delete do elif else except export extends false finally fn for from func function if import in instanceof is let match mod mut new None not null of or and pass pub raise return self static struct super switch this throw true True False try typeof undefined use var void while with yield impl let go defer type interface package range chan'.split(
    ' ',
  ),
);

/** The same tokens in order, identifiers renamed one-to-one (or none), the title aside; the caller knows the names differ. */
export function sameButRenamed(a: LocatedTest | undefined, b: LocatedTest | undefined): boolean {
  if (!a || !b) return false;
  const ta = tokens(a.body, a.title);
  const tb = tokens(b.body, b.title);
  if (ta.length !== tb.length || ta.length === 0) return false;
  const forward = new Map<string, string>();
  const back = new Map<string, string>();
  for (let i = 0; i < ta.length; i++) {
    const [x, y] = [ta[i], tb[i]];
    const ident = /^[A-Za-z_$]/.test(x) && /^[A-Za-z_$]/.test(y) && !KEYWORDS.has(x) && !KEYWORDS.has(y);
    if (!ident) {
      if (x !== y) return false;
      continue;
    }
    if ((forward.get(x) ?? y) !== y || (back.get(y) ?? x) !== x) return false;
    forward.set(x, y);
    back.set(y, x);
  }
  return true;
}

function tokens(body: string, title: string): string[] {
  const all: string[] = body.match(TOKEN) ?? [];
  const at = all.indexOf(title);
  return at >= 0 ? [...all.slice(0, at), ...all.slice(at + 1)] : all;
}

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
