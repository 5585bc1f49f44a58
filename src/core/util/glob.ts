/**
 * A small glob dialect for list_files and search, so the tools need no dependency:
 * `**` (any number of directories), `*` (within one segment), `?`, `{a,b}` (nestable),
 * `[abc]` / `[!abc]` / `[a-z]`, and `\` to escape. Matching is on forward-slash paths.
 *
 * Patterns come from the model, so matching must never backtrack: each brace alternative is
 * compiled to a token list and run as a set of states over the path (time O(path × pattern)),
 * and the pattern's length and brace expansion are bounded up front.
 */

/** Longest glob accepted (characters). */
export const MAX_GLOB_CHARS = 1000;
/** Most alternatives a pattern's braces may expand to. */
export const MAX_GLOB_ALTERNATIVES = 256;

export class GlobTooComplexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'GlobTooComplexError';
  }
}

type Token =
  | { t: 'char'; c: string }
  | { t: 'one' }
  | { t: 'class'; ranges: [string, string][]; negated: boolean }
  | { t: 'star' }
  | { t: 'globstar' }
  | { t: 'dirs' };

export interface GlobMatcher {
  test(path: string): boolean;
}

export function compileGlob(glob: string): GlobMatcher {
  if (glob.length > MAX_GLOB_CHARS)
    throw new GlobTooComplexError(`the pattern is ${glob.length} characters; the limit is ${MAX_GLOB_CHARS}`);
  const programs = expandBraces(glob).map(tokenize);
  return { test: (path) => programs.some((tokens) => run(tokens, path)) };
}

/** Kept under its old name: callers only ever used `.test`. */
export const globToRegExp = compileGlob;

/**
 * Whether `file` (workspace-relative, forward slashes) matches `pattern`. A pattern without
 * a slash matches the file name at any depth (`*.md`), as in .gitignore; one with a slash
 * matches the path from the workspace root, or from `base` when given (the listed folder).
 */
export function matchesGlob(pattern: string | GlobMatcher, file: string, base?: string, hasSlash?: boolean): boolean {
  const cleaned = typeof pattern === 'string' ? cleanGlob(pattern) : undefined;
  const matcher = typeof pattern === 'string' ? compileGlob(cleaned as string) : pattern;
  const slash = cleaned !== undefined ? cleaned.includes('/') : Boolean(hasSlash);
  if (!slash) return matcher.test(file.slice(file.lastIndexOf('/') + 1));
  if (matcher.test(file)) return true;
  if (base && base !== '.' && file.startsWith(`${base}/`)) return matcher.test(file.slice(base.length + 1));
  return false;
}

export function cleanGlob(pattern: string): string {
  return pattern.replace(/^\.\//, '').replace(/^\/+/, '');
}

/** Simulates all token positions at once; `**\/` has an inner state (inside the directories, before their '/'). */
function run(tokens: Token[], path: string): boolean {
  const n = tokens.length;
  let current = closure(tokens, [0]);
  for (let i = 0; i < path.length && current.size > 0; i++) {
    const c = path[i];
    const next: number[] = [];
    for (const state of current) {
      if (state === 2 * n) continue;
      const pos = state >> 1;
      const inner = (state & 1) === 1;
      const token = tokens[pos];
      if (token.t === 'dirs') {
        next.push(2 * pos + 1);
        if (c === '/') next.push(2 * (pos + 1));
        continue;
      }
      if (inner) continue;
      if (token.t === 'star' ? c !== '/' : token.t === 'globstar') next.push(state);
      else if (consumes(token, c)) next.push(2 * (pos + 1));
    }
    current = closure(tokens, next);
  }
  return current.has(2 * n);
}

/** States reachable without consuming a character (stars and `**\/` may match nothing). */
function closure(tokens: Token[], start: number[]): Set<number> {
  const seen = new Set<number>();
  const stack = [...start];
  while (stack.length) {
    const state = stack.pop() as number;
    if (seen.has(state)) continue;
    seen.add(state);
    const pos = state >> 1;
    if ((state & 1) === 0 && pos < tokens.length) {
      const t = tokens[pos].t;
      if (t === 'star' || t === 'globstar' || t === 'dirs') stack.push(2 * (pos + 1));
    }
  }
  return seen;
}

function consumes(token: Token, c: string): boolean {
  switch (token.t) {
    case 'char':
      return token.c === c;
    case 'one':
      return c !== '/';
    case 'class': {
      if (c === '/') return false;
      const inside = token.ranges.some(([lo, hi]) => c >= lo && c <= hi);
      return inside !== token.negated;
    }
    default:
      return false;
  }
}

function tokenize(glob: string): Token[] {
  const tokens: Token[] = [];
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i];
    if (c === '*') {
      let run = 1;
      while (glob[i + run] === '*') run++;
      const segmentStart = i === 0 || glob[i - 1] === '/';
      if (run >= 2 && segmentStart && glob[i + run] === '/') {
        tokens.push({ t: 'dirs' });
        i += run;
      } else {
        tokens.push({ t: run >= 2 ? 'globstar' : 'star' });
        i += run - 1;
      }
    } else if (c === '?') {
      tokens.push({ t: 'one' });
    } else if (c === '[') {
      const close = glob.indexOf(']', i + 2);
      if (close < 0) tokens.push({ t: 'char', c });
      else {
        tokens.push(parseClass(glob.slice(i + 1, close)));
        i = close;
      }
    } else if (c === '\\' && i + 1 < glob.length) {
      tokens.push({ t: 'char', c: glob[++i] });
    } else {
      tokens.push({ t: 'char', c });
    }
  }
  return tokens;
}

function parseClass(body: string): Token {
  const negated = body.startsWith('!') || body.startsWith('^');
  const chars = [...(negated ? body.slice(1) : body)];
  const ranges: [string, string][] = [];
  for (let i = 0; i < chars.length; i++) {
    let c = chars[i];
    if (c === '\\' && i + 1 < chars.length) c = chars[++i];
    if (chars[i + 1] === '-' && i + 2 < chars.length) {
      ranges.push([c, chars[i + 2]]);
      i += 2;
    } else ranges.push([c, c]);
  }
  return { t: 'class', ranges, negated };
}

/** `a{b,{c,d}}e` → [abe, ace, ade]; an unmatched brace is literal. Bounded by MAX_GLOB_ALTERNATIVES. */
function expandBraces(glob: string): string[] {
  const open = firstBrace(glob);
  if (open < 0) return [glob];
  const close = matchingBrace(glob, open);
  if (close < 0) {
    // Literal '{': escape it and expand the rest.
    return expandBraces(`${glob.slice(0, open)}\\{${glob.slice(open + 1)}`);
  }
  const head = glob.slice(0, open);
  const out: string[] = [];
  for (const alt of splitAlternatives(glob.slice(open + 1, close))) {
    for (const rest of expandBraces(`${alt}${glob.slice(close + 1)}`)) {
      out.push(head + rest);
      if (out.length > MAX_GLOB_ALTERNATIVES)
        throw new GlobTooComplexError(`the pattern's braces expand to more than ${MAX_GLOB_ALTERNATIVES} alternatives`);
    }
  }
  return out;
}

function firstBrace(glob: string): number {
  for (let i = 0; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '{') return i;
  }
  return -1;
}

function matchingBrace(glob: string, open: number): number {
  let depth = 0;
  for (let i = open; i < glob.length; i++) {
    if (glob[i] === '\\') i++;
    else if (glob[i] === '{') depth++;
    else if (glob[i] === '}' && --depth === 0) return i;
  }
  return -1;
}

/** Splits `a,{b,c},d` on the commas that are not inside a nested brace. */
function splitAlternatives(body: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(body.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(body.slice(start));
  return parts;
}

export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
