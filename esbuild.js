// Two bundles: the extension (cjs/node, 'vscode' external) and the `ralph` CLI.
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

const builds = [
  { ...common, entryPoints: ['src/extension.ts'], outfile: 'dist/extension.js', external: ['vscode'] },
  { ...common, entryPoints: ['src/cli/main.ts'], outfile: 'dist/cli.js', banner: { js: '#!/usr/bin/env node' } },
];

async function main() {
  if (watch) {
    for (const options of builds) {
      const ctx = await esbuild.context(options);
      await ctx.watch();
    }
    return;
  }
  await Promise.all(builds.map((options) => esbuild.build(options)));
  fs.chmodSync('dist/cli.js', 0o755);
  // the JSON schemas contributed through `jsonValidation` are generated from the zod schemas
  execFileSync(process.execPath, ['dist/cli.js', 'schema', '--out', 'schemas'], { stdio: 'inherit' });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
