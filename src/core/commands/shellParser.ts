import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { Node as SyntaxNode, Parser as TsParser } from 'web-tree-sitter';

export type { SyntaxNode };

/**
 * The bash grammar (tree-sitter, compiled to wasm) that the command rules parse with. Two wasm
 * files are needed: the runtime's own and the grammar. In the bundles (`dist/cli.js`,
 * `dist/extension.js`) esbuild.js copies both next to the bundle; from `out/` (tests) they are
 * read from node_modules.
 */
const RUNTIME_WASM = 'web-tree-sitter.wasm';
const GRAMMAR_WASM = 'tree-sitter-bash.wasm';

let loading: Promise<TsParser> | undefined;

/** The one parser of this process, loaded on first use. */
export function bashParser(): Promise<TsParser> {
  loading ??= load().catch((error: unknown) => {
    loading = undefined; // a later call may try again
    throw error;
  });
  return loading;
}

async function load(): Promise<TsParser> {
  // require, not import(): bundled, import() would pick the package's ESM build, whose
  // `import.meta.url` means nothing in the CommonJS bundles
  // eslint-disable-next-line @typescript-eslint/no-require-imports, @typescript-eslint/consistent-type-imports -- see above
  const { Parser, Language } = require('web-tree-sitter') as typeof import('web-tree-sitter');
  const runtime = locate(RUNTIME_WASM, () => path.join(path.dirname(fromHere().resolve('web-tree-sitter')), RUNTIME_WASM));
  await Parser.init({ locateFile: (file: string) => (file === RUNTIME_WASM ? runtime : file) });
  const grammar = locate(GRAMMAR_WASM, () => fromHere().resolve(`tree-sitter-bash/${GRAMMAR_WASM}`));
  const bash = await Language.load(grammar);
  const parser = new Parser();
  parser.setLanguage(bash);
  return parser;
}

/** node_modules as seen from this file (from `out/`); the bundles never get this far. */
function fromHere(): NodeJS.Require {
  return createRequire(__filename);
}

function locate(file: string, fromModules: () => string): string {
  const beside = path.join(__dirname, file);
  if (existsSync(beside)) return beside;
  try {
    const resolved = fromModules();
    if (existsSync(resolved)) return resolved;
  } catch {
    // not in node_modules either: reported below
  }
  throw new Error(`the shell parser's ${file} was not found beside ${__dirname} nor in node_modules`);
}
