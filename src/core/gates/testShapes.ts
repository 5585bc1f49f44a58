import { closeOf, blankComments, helperNames, type Lang, languageOf, ASSERTION, DISABLED_INSIDE, SEPARATOR } from './testShapeParts';

/**
 * The test code of one file, read from its text for the diff rule (`testCodeChanges.ts`): its
 * test cases — by suite and title, whether skipped, whether their body is empty, how many
 * assertions each makes — and the assertions outside any case (a script of checks). Read by the
 * shapes of the common languages' tests: JS/TS `it`/`test`/`describe` (and uvu's suites), pytest
 * and unittest `def test_`, Go `func TestX(t *testing.T)` and `t.Run`, Rust `#[test]`, RSpec
 * `it`/`describe` and minitest `def test_`. Comments are not code.
 */

export interface TestCase {
  /** Suites and title: `suite > title`, `Class::test_x`, `TestX/sub`; a repeated key gets ` (2)`. */
  key: string;
  /** The case's text, for telling a renamed or moved case; `name` is its title token in it (`''`: not in it). */
  body: string;
  name: string;
  /** Skipped, todo, expected to fail, or inside a skipped suite. */
  disabled: boolean;
  /** Its body does nothing. */
  empty: boolean;
  /** Assertions in its own body (not in nested cases). */
  assertions: number;
}

export interface TestShape {
  cases: TestCase[];
  /** Assertions outside any case (a script of checks, a helper). */
  outside: number;
  /** The trimmed lines holding those, to tell a moved check from a removed one. */
  outsideLines: string[];
  /** `.only`, `fit`, `:focus` markers: the file's other tests do not run. */
  focused: number;
}

/** One test or suite found in a text, before it is put in its suites. */
export interface Item {
  kind: 'case' | 'suite';
  title: string;
  start: number;
  end: number;
  disabled: boolean;
  focused: boolean;
  empty: boolean;
  /** The text compared for renames, and the title token in it. */
  body: string;
  name: string;
}

/** The shape of `text`, a file named `file`; undefined for a file of no language read here. */
export function readTestShape(file: string, text: string): TestShape | undefined {
  const lang = languageOf(file);
  if (!lang) return undefined;
  const code = blankComments(text, lang);
  const items = ITEMS[lang](code);
  return assemble(code, items, lang);
}

const ITEMS: Record<Lang, (code: string) => Item[]> = {
  js: jsItems,
  py: pyItems,
  go: goItems,
  rs: rsItems,
  rb: rbItems,
  other: () => [],
};

function assemble(code: string, found: Item[], lang: Lang): TestShape {
  const items = [...found].sort((a, b) => a.start - b.start || b.end - a.end);
  const parents = new Map<Item, Item[]>();
  const stack: Item[] = [];
  for (const item of items) {
    while (stack.length && stack[stack.length - 1].end <= item.start) stack.pop();
    parents.set(item, [...stack]);
    stack.push(item);
  }
  const cases = items.filter((i) => i.kind === 'case');
  const assertion = assertionPattern(code, lang);
  const counts = new Map<Item, number>();
  let outside = 0;
  const outsideLines: string[] = [];
  for (const m of code.matchAll(assertion)) {
    const at = m.index;
    const owner = [...cases].reverse().find((c) => c.start <= at && at < c.end);
    if (owner) counts.set(owner, (counts.get(owner) ?? 0) + 1);
    else {
      outside++;
      outsideLines.push(lineAt(code, at));
    }
  }
  const seen = new Map<string, number>();
  const shaped: TestCase[] = cases.map((c) => {
    const chain = parents.get(c) ?? [];
    const base = [...chain.map((p) => p.title), c.title].join(SEPARATOR[lang]);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    const children = cases.filter((o) => o !== c && o.start >= c.start && o.end <= c.end);
    const own = children.reduce(
      (text, o) => text.slice(0, o.start - c.start) + ' '.repeat(o.end - o.start) + text.slice(o.end - c.start),
      code.slice(c.start, c.end),
    );
    return {
      key: n === 1 ? base : `${base} (${n})`,
      body: c.body,
      name: c.name,
      disabled: c.disabled || chain.some((p) => p.disabled) || DISABLED_INSIDE[lang].test(own),
      empty: c.empty,
      assertions: counts.get(c) ?? 0,
    };
  });
  return { cases: shaped, outside, outsideLines, focused: items.filter((i) => i.focused).length };
}

function assertionPattern(code: string, lang: Lang): RegExp {
  const helpers = helperNames(code, lang, ASSERTION[lang]);
  if (helpers.length === 0) return ASSERTION[lang];
  const names = helpers.map((h) => h.replace(/\$/g, '\\$')).join('|');
  return new RegExp(`${ASSERTION[lang].source}|(?<![\\w$.])(?:${names})\\s*\\(`, 'g');
}

function lineAt(text: string, at: number): string {
  const start = text.lastIndexOf('\n', at) + 1;
  const end = text.indexOf('\n', at);
  return text.slice(start, end < 0 ? text.length : end).trim();
}

/** The lines of a text with the offset each starts at. */
function linesOf(code: string): { text: string; at: number }[] {
  const out: { text: string; at: number }[] = [];
  let at = 0;
  for (const text of code.split('\n')) {
    out.push({ text, at });
    at += text.length + 1;
  }
  return out;
}

const JS_WORDS = 'it|test|specify|describe|context|suite|Deno\\.test';
const JS_SUITES = new Set(['describe', 'context', 'suite']);

/** `it('x', …)`, `describe.skip('x', …)`, `xit`, `fdescribe`, `test.todo('x')`, and uvu's `const s = suite('x'); s('y', …)`. */
function jsItems(code: string): Item[] {
  const suites = new Map<string, string>();
  for (const m of code.matchAll(/(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*suite\s*\(\s*(['"`])((?:\\.|(?!\2)[^\\])*)\2/g))
    suites.set(m[1], m[3]);
  const vars = [...suites.keys()].map((v) => v.replace(/\$/g, '\\$'));
  const words = vars.length ? `${JS_WORDS}|${vars.join('|')}` : JS_WORDS;
  const call = new RegExp(
    `(?<![\\w$.])(x|f)?(${words})((?:\\.(?:only|skip|todo|concurrent|sequential|serial|failing|fails|ignore))*)\\s*\\(\\s*(['"\`])`,
    'g',
  );
  const items: Item[] = [];
  for (const m of code.matchAll(call)) {
    const quote = m.index + m[0].length - 1;
    const titleEnd = closeOf(code, quote);
    const open = code.lastIndexOf('(', quote);
    const close = closeOf(code, open);
    const word = m[2];
    const rest = code.slice(titleEnd + 1, close);
    const hasFn = /=>|\bfunction\b/.test(rest);
    if (word === 'suite' && !hasFn) continue; // uvu: a suite made, its tests are its calls
    const mods = m[3];
    const prefix = suites.get(word);
    const title = code.slice(quote + 1, titleEnd);
    const item: Item = {
      kind: JS_SUITES.has(word) && !suites.has(word) ? 'suite' : 'case',
      title: prefix !== undefined ? `${prefix}${SEPARATOR.js}${title}` : title,
      start: m.index,
      end: close + 1,
      disabled: m[1] === 'x' || /\.(?:skip|todo|failing|fails|ignore)\b/.test(mods),
      focused: m[1] === 'f' || /\.only\b/.test(mods),
      empty: false,
      body: rest,
      name: '',
    };
    // mocha's `it('x')` without a function is pending
    if (item.kind === 'case') Object.assign(item, hasFn ? { empty: jsEmpty(rest) } : { disabled: true });
    items.push(item);
  }
  return items;
}

/** Whether the function in a test call's arguments after its title does nothing. */
function jsEmpty(rest: string): boolean {
  const at = rest.search(/=>|\bfunction\b/);
  let fn = rest.slice(at);
  if (fn.startsWith('=>')) fn = fn.slice(2).trim();
  else fn = fn.slice(Math.max(0, fn.indexOf('{')));
  if (fn.startsWith('{')) return !/[\w$]/.test(fn.slice(1, closeOf(fn, 0)));
  return !/[\w$]/.test(fn) || /^(?:undefined|null|void 0)\W*$/.test(fn);
}

/** `def test_x(…)` at the top or in a class, its decorators, its class's. */
function pyItems(code: string): Item[] {
  const lines = linesOf(code);
  const items: Item[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = /^([ \t]*)(?:async\s+)?(def|class)\s+(\w+)/.exec(lines[i].text);
    if (!m || (m[2] === 'def' && !m[3].startsWith('test'))) continue;
    const indent = m[1].length;
    let first = i;
    while (first > 0 && /^\s*@/.test(lines[first - 1].text)) first--;
    const decorators = lines
      .slice(first, i)
      .map((l) => l.text)
      .join('\n');
    let last = i;
    for (let j = i + 1; j < lines.length; j++) {
      const t = lines[j].text;
      if (t.trim() && /^\s*/.exec(t)![0].length <= indent) break;
      if (t.trim()) last = j;
    }
    const end = lines[last].at + lines[last].text.length;
    const inner = lines
      .slice(i + 1, last + 1)
      .map((l) => l.text)
      .join('\n')
      .replace(/^\s*[rRbBuU]?("""|''')[\s\S]*?\1/, '')
      .replace(/^\s*[rRbBuU]?("|')(?:\\.|(?!\1).)*\1/, '');
    items.push({
      kind: m[2] === 'def' ? 'case' : 'suite',
      title: m[3],
      start: lines[first].at,
      end,
      disabled: /\b(?:skip\w*|xfail|expectedFailure)\b/.test(decorators),
      focused: false,
      empty: m[2] === 'def' && /^(?:\s|\bpass\b|\.\.\.)*$/.test(inner),
      body: code.slice(lines[i].at, end),
      name: m[3],
    });
  }
  return items;
}

/** `func TestX(t *testing.T) {…}` and its `t.Run("sub", …)`. */
function goItems(code: string): Item[] {
  const items: Item[] = [];
  for (const m of code.matchAll(/\bfunc\s+(Test\w*)\s*\(\s*\w+\s+\*testing\.T\s*\)\s*\{/g)) {
    const brace = m.index + m[0].length - 1;
    const close = closeOf(code, brace);
    items.push(braceItem(code, m.index, brace, close, m[1], m[1]));
  }
  for (const m of code.matchAll(/\b\w+\.Run\(\s*"((?:\\.|[^"\\])*)"/g)) {
    const open = code.indexOf('(', m.index);
    const close = closeOf(code, open);
    const brace = code.indexOf('{', open);
    if (brace < 0 || brace > close) continue;
    items.push(braceItem(code, m.index, brace, close, m[1], ''));
  }
  return items;
}

/** `#[test] fn x() {…}` (`#[tokio::test]`, `#[rstest]`), `#[ignore]`, inside `mod tests { … }`. */
function rsItems(code: string): Item[] {
  const items: Item[] = [];
  for (const m of code.matchAll(/((?:#\[[^\]]*\]\s*)+)(?:pub(?:\([^)]*\))?\s+)?(?:async\s+)?fn\s+(\w+)[^{;]*\{/g)) {
    const attributes = m[1];
    if (!/#\[(?:[\w:]+::)?(?:test|rstest|test_case)\b/.test(attributes)) continue;
    const brace = m.index + m[0].length - 1;
    const item = braceItem(code, m.index, brace, closeOf(code, brace), m[2], m[2]);
    items.push({ ...item, disabled: /#\[ignore\b/.test(attributes) });
  }
  for (const m of code.matchAll(/\bmod\s+(\w+)\s*\{/g)) {
    const brace = m.index + m[0].length - 1;
    items.push({ ...braceItem(code, m.index, brace, closeOf(code, brace), m[1], m[1]), kind: 'suite' });
  }
  return items;
}

function braceItem(code: string, start: number, brace: number, close: number, title: string, name: string): Item {
  return {
    kind: 'case',
    title,
    start,
    end: close + 1,
    disabled: false,
    focused: false,
    empty: !/\w/.test(code.slice(brace + 1, close)),
    body: code.slice(start, close + 1),
    name,
  };
}

const RB_BLOCK =
  /^([ \t]*)(?:RSpec\.)?(x|f)?(it|specify|example|scenario|describe|context|feature|test|skip|pending)\b[ \t(]*(?:(['"])((?:\\.|(?!\4).)*)\4|([A-Z][\w:]*))(.*)$/;

/** RSpec's `it 'x' do … end` (`xit`, `fit`, `skip`, `:focus`), `describe`/`context`, minitest's `def test_x`. */
function rbItems(code: string): Item[] {
  const lines = linesOf(code);
  const items: Item[] = [];
  for (let i = 0; i < lines.length; i++) {
    const text = lines[i].text;
    const block = RB_BLOCK.exec(text);
    const def = /^([ \t]*)def\s+(test_\w+)/.exec(text);
    const klass = /^([ \t]*)class\s+(\w+)/.exec(text);
    if (!block && !def && !klass) continue;
    const indent = (block ?? def ?? klass)![1];
    const tail = block ? block[7] : '';
    let last: number;
    if (!block || /\bdo\b/.test(tail) || !tail.includes('{')) {
      last = lines.findIndex((l, j) => j > i && new RegExp(`^${indent}end\\b`).test(l.text));
      if (last < 0) continue;
    } else {
      const open = lines[i].at + text.indexOf('{', text.length - tail.length);
      const close = closeOf(code, open);
      last = lines.findIndex((l) => l.at <= close && close <= l.at + l.text.length);
    }
    const end = lines[last].at + lines[last].text.length;
    const word = block?.[3];
    const inner = last > i ? code.slice(lines[i + 1]?.at ?? end, lines[last].at) : text.replace(/^[^{]*\{|\}[^}]*$/g, '');
    items.push({
      kind: def || (word && !['describe', 'context', 'feature'].includes(word)) ? 'case' : 'suite',
      title: block ? (block[5] ?? block[6]) : (def ?? klass)![2],
      start: lines[i].at,
      end,
      disabled: block?.[2] === 'x' || word === 'skip' || word === 'pending' || /(?::skip|\bskip:|:pending|\bpending:)/.test(tail),
      focused: block?.[2] === 'f' || /(?::focus|\bfocus:\s*true)/.test(tail),
      empty: !/\w/.test(inner),
      body: code.slice(lines[i].at, end),
      name: block ? (block[4] ? `${block[4]}${block[5]}${block[4]}` : block[6]) : (def ?? klass)![2],
    });
  }
  return items;
}
