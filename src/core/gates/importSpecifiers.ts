/**
 * The modules a source file imports, read from its text without running it: what a test
 * exercises is the files its test file imports within the repository, followed transitively
 * (`importGraph.ts`). Reading errs on the side of more: an import written in a comment counts
 * (a larger closure only holds more failures against the task), and anything that names a
 * module by a value the text does not spell (`require(name)`, `import(\`./${x}\`)`) makes the
 * file's imports unknown — a test that imports it then exercises everything.
 */

export interface FileImports {
  /** Module specifiers as written (`./parse`, `../src/index.js`, `lodash`, `@/util`). */
  specifiers: string[];
  /** Why the imports cannot all be read (a computed `require` or `import()`), when they cannot. */
  unknown?: string;
  /** The file starts another program (see `runsProgram`). */
  runsProgram?: boolean;
}

/** Languages whose imports are read; other files are leaves (data, styles) or unknown (code of another language). */
export type ImportLanguage = 'js' | 'python' | 'go';

const JS_EXT = /\.(?:[cm]?[jt]sx?|vue|svelte|astro)$/;
const LEAF_EXT = /\.(?:json|jsonc|json5|ya?ml|toml|txt|md|csv|html?|css|scss|sass|less|svg|png|jpe?g|gif|webp|wasm|node|snap)$/i;

/** How a file's imports are read: `leaf` imports nothing, `opaque` cannot be read (code whose imports this reader does not know). */
export function languageOf(file: string): ImportLanguage | 'leaf' | 'opaque' {
  if (JS_EXT.test(file)) return 'js';
  if (file.endsWith('.py')) return 'python';
  if (file.endsWith('.go')) return 'go';
  if (LEAF_EXT.test(file) || file.endsWith('.d.ts')) return 'leaf';
  return 'opaque';
}

// `import x from 'm'`, `import {a,\n b} from "m"`, `import type X from 'm'`, `import 'm'`
const STATIC_IMPORT = /\bimport\s*(?:type\s+)?(?:[\w*${}\s,]*?\bfrom\s*)?(['"])([^'"\n]+)\1/g;
// `export * from 'm'`, `export { a } from 'm'`, `export type { A } from 'm'`
const EXPORT_FROM = /\bexport\s*(?:type\s*)?(?:\*(?:\s*as\s+[\w$]+)?|\{[^}]*\})\s*from\s*(['"])([^'"\n]+)\1/g;
// `require('m')`, `require.resolve('m')` is not an import; `import('m')`; TS `import x = require('m')`
const CALL_LITERAL = /\b(?:require|import)\s*\(\s*(['"`])([^'"`\n]+)\1\s*[,)]/g;
// a call whose module is computed: `require(name)`, `import(\`./x/${y}\`)`, `require('./' + x)`
const CALL_COMPUTED = /\b(?:require\s*|import)\(\s*(?!\))(?:(['"`])[^'"`\n]*\1\s*[^,)\s]|`[^`]*\$\{|[^'"`\s)])/g;
// jest/vitest module mocks name modules too: `vi.mock('../src/x')`, `jest.requireActual('m')`
const MOCK_CALL = /\.(?:mock|doMock|unmock|requireActual|importActual|requireMock|importMock)\s*\(\s*(['"`])([^'"`\n]+)\1/g;

/** A test that starts another program (`child_process`, `execa`…): what that program imports is not read. */
const RUNS_PROGRAM =
  /\b(?:require\s*\(\s*|from\s*|import\s*\(\s*)['"](?:node:)?(?:child_process|execa|cross-spawn|zx)['"]|\b(?:spawnSync|execFileSync|execSync)\s*\(/;

/**
 * Whether a test file starts another program (a CLI's tests spawn its binary): the program's own
 * imports are not followed, so what such a test exercises cannot be told.
 */
export function runsProgram(text: string): boolean {
  return RUNS_PROGRAM.test(text);
}

/** The imports of a JavaScript or TypeScript file. */
export function jsImports(text: string): FileImports {
  const specifiers = new Set<string>();
  for (const re of [STATIC_IMPORT, EXPORT_FROM, CALL_LITERAL, MOCK_CALL]) {
    for (const m of text.matchAll(re)) specifiers.add(m[2]);
  }
  // `x.require(…)`, `obj.import(…)` are method calls, not module loads
  const computed = [...text.matchAll(CALL_COMPUTED)].find((m) => m.index === 0 || text[m.index - 1] !== '.');
  return {
    specifiers: [...specifiers],
    ...(computed ? { unknown: `a module named by a computed value (\`${shorten(computed[0])}…\`)` } : {}),
  };
}

function shorten(text: string): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > 40 ? flat.slice(0, 40) : flat;
}

/** `import a.b`, `import a, b as c`, `from .x import y`, `from a.b import (c, d)`: module paths, dots kept. */
export function pythonImports(text: string): FileImports {
  const specifiers = new Set<string>();
  let unknown: string | undefined;
  for (const line of text.split(/\r?\n/)) {
    const from = /^\s*from\s+(\.*[\w.]*)\s+import\s+(.+)$/.exec(line);
    if (from) {
      specifiers.add(from[1]);
      // `from . import x` and `from pkg import sub` may name submodules
      for (const name of from[2].replace(/[()\\]/g, ' ').split(',')) {
        const n = name.trim().split(/\s+/)[0];
        if (n && n !== '*' && /^\w+$/.test(n)) specifiers.add(`${from[1]}${from[1].endsWith('.') ? '' : '.'}${n}`);
      }
      continue;
    }
    const plain = /^\s*import\s+(.+)$/.exec(line);
    if (plain) for (const part of plain[1].split(',')) specifiers.add(part.trim().split(/\s+/)[0]);
    if (/\b(?:importlib\.import_module|__import__)\s*\(/.test(line)) unknown ??= 'a module imported by a computed name (importlib)';
  }
  return { specifiers: [...specifiers].filter(Boolean), ...(unknown ? { unknown } : {}) };
}

/** `import "x"`, `import ( a "x"; "y" )`: package paths. */
export function goImports(text: string): FileImports {
  const specifiers = new Set<string>();
  for (const m of text.matchAll(/^\s*import\s+(?:[\w.]+\s+)?"([^"]+)"/gm)) specifiers.add(m[1]);
  for (const block of text.matchAll(/^\s*import\s*\(([\s\S]*?)\)/gm)) {
    for (const m of block[1].matchAll(/"([^"]+)"/g)) specifiers.add(m[1]);
  }
  return { specifiers: [...specifiers] };
}

export function importsOf(language: ImportLanguage, text: string): FileImports {
  return language === 'js' ? jsImports(text) : language === 'python' ? pythonImports(text) : goImports(text);
}
