/** The pieces `testShapes.ts` reads test code with: languages, comments, brackets, assertions. */

export type Lang = 'js' | 'py' | 'go' | 'rs' | 'rb' | 'other';

const EXTENSIONS: [RegExp, Lang][] = [
  [/\.(?:[cm]?[jt]sx?)$/, 'js'],
  [/\.pyw?$/, 'py'],
  [/\.go$/, 'go'],
  [/\.rs$/, 'rs'],
  [/\.rb$/, 'rb'],
  [/\.(?:java|kt|kts|scala|groovy|cs|fs|php|swift|c|cc|cpp|cxx|h|hpp|m|ex|exs|erl|dart|lua|pl|pm|r|jl|sh|bash|zig|nim)$/i, 'other'],
];

/** The language of a file by its name; undefined for a file that is not code (data, docs, fixtures). */
export function languageOf(file: string): Lang | undefined {
  return EXTENSIONS.find(([re]) => re.test(file))?.[1];
}

/** How suites and titles are joined in a key, as the runners of each language name tests. */
export const SEPARATOR: Record<Lang, string> = { js: ' > ', py: '::', go: '/', rs: '::', rb: ' ', other: ' ' };

/** Assertions, per language: a call of one, an assertion macro or statement. */
export const ASSERTION: Record<Lang, RegExp> = {
  js: /(?<![\w$.])assert(?:\.\w+)*\s*\(|(?<![\w$.])expect(?:\.\w+)*\s*\(|(?<![\w$.])(?:t|tt|st|assert)\.(?!plan\b|end\b|test\b|skip\b|todo\b|comment\b|teardown\b|timeout\b|pass\b|log\b|diagnostic\b|run\b|mock\b|context\b|after\w*|before\w*)\w+\s*\(|\.should\b|(?<![\w$.])should\s*\(/g,
  py: /(?<![\w.])assert\b(?!_)|\bself\.(?:assert\w*|fail\w*)\s*\(|\bpytest\.(?:raises|warns|fail)\s*\(|(?<![\w.])assert_\w+\s*\(/g,
  go: /\b\w+\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\b(?:assert|require)\.\w+\s*\(/g,
  rs: /\b(?:assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|assert_matches|prop_assert\w*)!/g,
  rb: /\bexpect\s*[({]|\bis_expected\b|\.should(?:_not)?\b|(?<![\w.])(?:assert|refute)\w*|\.(?:must|wont)_\w+/g,
  other: /\b(?:assert\w*|expect\w*|check\w*)\s*[(!]/gi,
};

/** A skip written in a test's own body (`this.skip()`, `pytest.skip(…)`, `t.Skip()`, RSpec's `skip`). */
export const DISABLED_INSIDE: Record<Lang, RegExp> = {
  js: /(?<![\w$])(?:t|this|ctx|context)\.skip\s*\(/,
  py: /\bpytest\.skip\s*\(|\bself\.skipTest\s*\(|\bSkipTest\b/,
  go: /\b\w+\.Skip(?:f|Now)?\s*\(/,
  rs: /(?!)/,
  rb: /^\s*(?:skip|pending)\b/m,
  other: /(?!)/,
};

const LINE_COMMENT: Record<Lang, string> = { js: '//', py: '#', go: '//', rs: '//', rb: '#', other: '//' };
const QUOTES: Record<Lang, string> = { js: `'"\``, py: `'"`, go: '"`', rs: '"', rb: `'"`, other: '"' };

/** The text with its comments turned to spaces (lines and offsets kept), strings left as they are. */
export function blankComments(text: string, lang: Lang): string {
  const line = LINE_COMMENT[lang];
  const block = line === '//';
  const quotes = QUOTES[lang];
  const out = text.split('');
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quotes.includes(c)) {
      i = skipString(text, i);
      continue;
    }
    let end: number;
    if (text.startsWith(line, i)) end = text.indexOf('\n', i);
    else if (block && text.startsWith('/*', i)) end = text.indexOf('*/', i + 2) + 2 || text.length;
    else continue;
    if (end < 0 || end === 1) end = text.length;
    for (let j = i; j < end; j++) if (out[j] !== '\n') out[j] = ' ';
    i = end - 1;
  }
  return out.join('');
}

/** Where a string that opens at `at` closes (a line ends a string unless it is a template). */
export function skipString(text: string, at: number): number {
  const quote = text[at];
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
    else if (text[i] === '\n' && quote !== '`') return i;
  }
  return text.length;
}

const PAIRS: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** Where the bracket or quote at `open` closes; the end of the text when it does not. */
export function closeOf(text: string, open: number): number {
  const left = text[open];
  const right = PAIRS[left];
  if (!right) return skipString(text, open);
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const c = text[i];
    if (c === '"' || c === "'" || c === '`') i = skipString(text, i);
    else if (c === left) depth++;
    else if (c === right && --depth === 0) return i;
  }
  return text.length;
}

const HEADS: Partial<Record<Lang, RegExp>> = {
  js: /(?:\bfunction\s*\*?\s*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:\([^)]*\)|[A-Za-z_$][\w$]*)\s*=>)/g,
  go: /\bfunc\s+(?!Test)([A-Za-z_]\w*)\s*\([^)]*\)[^{\n]*\{/g,
  rs: /\bfn\s+([A-Za-z_]\w*)\s*(?:<[^>]*>)?\s*\([^)]*\)[^{;]*\{/g,
  py: /^([ \t]*)def\s+(?!test)(\w+)\s*\(/gm,
};

/**
 * Functions of the file that assert (`function same(a, b) { assert.is(…) }`, a Python helper
 * with an `assert`), and names taken from an assertion library (`import { is } from
 * 'uvu/assert'`): calls of them are assertions too.
 */
export function helperNames(code: string, lang: Lang, assertion: RegExp): string[] {
  const names = new Set<string>();
  if (lang === 'js') {
    const imports =
      /(?:import\s*\{([^}]*)\}\s*from|(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\s*\()\s*['"][^'"]*(?:assert|expect|chai|should)[^'"]*['"]/g;
    for (const m of code.matchAll(imports))
      for (const part of (m[1] ?? m[2]).split(',')) {
        const name = part
          .trim()
          .split(/\s+as\s+|\s*:\s*/)
          .pop();
        if (name && /^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
      }
  }
  const head = HEADS[lang];
  if (!head) return [...names];
  const bodies = [...code.matchAll(head)].map((m) => ({
    name: (lang === 'py' ? m[2] : (m[1] ?? m[2])) as string,
    body: bodyAt(code, m, lang),
  }));
  for (let round = 0; round < 2; round++) {
    const known = [...names].map((n) => n.replace(/\$/g, '\\$'));
    const call = known.length ? new RegExp(`(?<![\\w$.])(?:${known.join('|')})\\s*\\(`) : undefined;
    for (const { name, body } of bodies)
      if (!names.has(name) && (new RegExp(assertion.source).test(body) || call?.test(body))) names.add(name);
  }
  return [...names].filter((n) => !/^(?:it|test|describe|suite|context|specify)$/.test(n));
}

function bodyAt(code: string, m: RegExpMatchArray, lang: Lang): string {
  const start = m.index!;
  if (lang === 'py') {
    const indent = m[1].length;
    const lines = code.slice(start).split('\n');
    const kept = [lines[0]];
    for (const line of lines.slice(1)) {
      if (line.trim() && /^\s*/.exec(line)![0].length <= indent) break;
      kept.push(line);
    }
    return kept.join('\n');
  }
  const end = start + m[0].length;
  if (code[end - 1] === '{') return code.slice(end, closeOf(code, end - 1));
  // an arrow: its block, or its expression to the end of the line
  const rest = code.slice(end).trimStart();
  const at = code.length - rest.length;
  if (rest.startsWith('{')) return code.slice(at, closeOf(code, at));
  const nl = code.indexOf('\n', at);
  return code.slice(at, nl < 0 ? code.length : nl);
}
