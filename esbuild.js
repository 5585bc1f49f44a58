// Six bundles: the extension (cjs/node, 'vscode' external), the `ralph` CLI (its launcher and itself), the git helper process
// they start (simple-git), the test probe gate runs preload, and the webviews (browser: the progress panel's dist/webview/main.js +
// main.css and the plan review's planReview.js + planReview.css, with the codicons).
// Type checking is a separate step (`npm run typecheck`); esbuild only strips types.
const esbuild = require('esbuild');
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');

/** @type {import('esbuild').BuildOptions} */
const common = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
  legalComments: 'none',
  // jsonc-parser's 'main' is a UMD build with requires esbuild cannot follow; its ESM build bundles cleanly
  mainFields: ['module', 'main'],
};

/** The webview: browser code only; it may import src/protocol but never 'vscode' or Node built-ins. */
const webview = {
  bundle: true,
  platform: 'browser',
  format: 'iife',
  target: ['chrome120', 'es2022'],
  sourcemap: !production,
  minify: production,
  logLevel: 'info',
  legalComments: 'none',
  entryPoints: ['src/webview/main.ts', 'src/webview/main.css', 'src/webview/planReview.ts', 'src/webview/planReview.css'],
  outdir: 'dist/webview',
  entryNames: '[name]',
};

const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'], metafile: true },
  // `ralph`: a small launcher (dist/cli.js) that compiles the CLI's bundle (dist/cliMain.js) with its V8 code cache (src/cli/codeCache.ts)
  { ...common, entryPoints: ['src/cli/launcher.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
  // no import() left in it (esbuild makes each a require): V8 code compiled through vm.Script cannot import()
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cliMain.js', supported: { 'dynamic-import': false } },
  // the git helper process both of them start (src/core/git/gitHost.ts), beside them in dist/
  { ...common, entryPoints: ['src/core/git/gitHostMain.ts'], outfile: 'dist/gitHostMain.js' },
  // the test probe every gate run preloads into the project's node processes (src/core/gates/probe/probeRunner.ts reads it
  // from beside the bundle): it runs on the project's node, which may be older than ours, so its syntax is node 12's
  { ...common, entryPoints: ['src/core/gates/probe/testProbe.ts'], outfile: 'dist/testProbe.js', sourcemap: false, target: 'node12' },
  webview,
];

/** The codicon font and stylesheet the webview loads (from its own folder: the CSP allows nothing else). */
function copyCodicons() {
  fs.mkdirSync('dist/webview', { recursive: true });
  for (const name of ['codicon.css', 'codicon.ttf']) fs.copyFileSync(`node_modules/@vscode/codicons/dist/${name}`, `dist/webview/${name}`);
}

/**
 * The shell parser's wasm (web-tree-sitter's runtime and the bash grammar), read at run time from
 * beside the bundle (src/core/commands/shellParser.ts): the command rules cannot work without them.
 */
function copyShellParser() {
  fs.mkdirSync('dist', { recursive: true });
  const runtime = require.resolve('web-tree-sitter').replace(/[^/\\]+$/, 'web-tree-sitter.wasm');
  fs.copyFileSync(runtime, 'dist/web-tree-sitter.wasm');
  fs.copyFileSync(require.resolve('tree-sitter-bash/tree-sitter-bash.wasm'), 'dist/tree-sitter-bash.wasm');
}

/** The extension bundle must not carry webview (browser) code. */
function checkExtensionBundle(result) {
  const inputs = Object.keys(result.metafile?.inputs ?? {});
  const leaked = inputs.filter(
    (file) => file.startsWith('src/webview/') || file.includes('@vscode-elements') || file.includes('node_modules/lit'),
  );
  if (leaked.length > 0) throw new Error(`dist/extension.js must not contain webview code: ${leaked.join(', ')}`);
}

async function main() {
  copyCodicons();
  copyShellParser();
  if (watch) {
    for (const options of builds) {
      const ctx = await esbuild.context(options);
      await ctx.watch();
    }
    return;
  }
  const [extension] = await Promise.all(builds.map((options) => esbuild.build(options)));
  checkExtensionBundle(extension);
  fs.chmodSync('dist/cli.js', 0o755);
  // the JSON schemas contributed through `jsonValidation` are generated from the zod schemas
  execFileSync(process.execPath, ['dist/cli.js', 'schema', '--out', 'schemas'], { stdio: 'inherit' });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
