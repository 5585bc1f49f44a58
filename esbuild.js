// Two bundles: the extension (cjs/node, 'vscode' external) and the `ralph` CLI.
// Type checking is a separate step (`npm run typecheck`); esbuild only strips types.
const esbuild = require('esbuild');
const fs = require('node:fs');

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
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
