/**
 * `ralph` (dist/cli.js): starts the CLI bundle (dist/cliMain.js, src/cli/main.ts) with its V8
 * code cache (codeCache.ts), which takes a third off every start. Without the cache — turned off,
 * source maps on (`--enable-source-maps`: stack traces map through the loader's own compile), or
 * the bundle unreadable — the bundle is required as it is. The bundle has no `import()` (esbuild.js
 * turns each into a `require`): a script compiled through `vm` has no module loader to import with. Required by another module (the tests' in-process
 * CLI), this is the bundle's exports and runs nothing.
 */
import * as path from 'node:path';
import { codeCacheDir, compileWithCodeCache, verbFamily } from './codeCache';
import { setProcessFlags } from './processFlags';

interface CliBundle {
  runAsProcess(): void;
}

const BUNDLE = path.join(__dirname, 'cliMain.js');

/** The bundle's exports: compiled with the code cache when it can be, else by `require`. */
function loadBundle(): CliBundle {
  const dir = codeCacheDir(process.env);
  if (dir !== undefined && !process.sourceMapsEnabled) {
    let compiled;
    try {
      compiled = compileWithCodeCache(BUNDLE, dir, verbFamily(process.argv.slice(2)));
    } catch {
      compiled = undefined;
    }
    if (compiled) return compiled.run() as CliBundle;
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle beside this file, named at run time
  return require(BUNDLE) as CliBundle;
}

if (require.main === module) {
  setProcessFlags();
  loadBundle().runAsProcess();
} else {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the same exports as the bundle's own
  module.exports = require(BUNDLE);
}
