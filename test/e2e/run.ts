/**
 * Runs the end-to-end suite (out/test/e2e/**\/*.e2e.js) with mocha in this Node process; each
 * suite starts its own code-server with the packaged ralph-loop.vsix and drives Chromium.
 * Build first: `npm run package && npm run compile-tests`. Screenshots go to
 * test/e2e/screenshots/ (git-ignored).
 *
 * Env: RALPH_E2E_GREP filters tests by title; RALPH_E2E_SUITES runs only the named suite files
 * (`ralph,parallel` runs ralph.e2e.js and parallel.e2e.js); RALPH_E2E_TIMEOUT_MS is how long the run may go with nothing ending (no test, no hook)
 * (default 600000); RALPH_KEEP_TEMP=1 keeps the temp workspace and code-server dirs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import Mocha from 'mocha';

function findSuites(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) =>
      entry.isDirectory() ? findSuites(path.join(dir, entry.name)) : entry.name.endsWith('.e2e.js') ? [path.join(dir, entry.name)] : [],
    )
    .sort();
}

/** The suites named in `names` (comma-separated base names, `parallel` for parallel.e2e.js); every suite without it. */
function selectSuites(files: string[], names: string | undefined): string[] {
  const wanted = (names ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
  if (wanted.length === 0) return files;
  const chosen = files.filter((file) => wanted.includes(path.basename(file, '.e2e.js')));
  const unknown = wanted.filter((name) => !chosen.some((file) => path.basename(file, '.e2e.js') === name));
  if (unknown.length > 0)
    throw new Error(
      `RALPH_E2E_SUITES names no suite: ${unknown.join(', ')} (suites: ${files.map((f) => path.basename(f, '.e2e.js')).join(', ')})`,
    );
  return chosen;
}

/** `onProgress`: a test or a hook ended (the tier's watchdog counts from the last one). */
export function runE2e(onProgress: () => void = () => undefined): Promise<number> {
  const mocha = new Mocha({ ui: 'bdd', reporter: 'spec', color: false, timeout: 180_000 });
  if (process.env.RALPH_E2E_GREP) mocha.grep(process.env.RALPH_E2E_GREP);
  for (const file of selectSuites(findSuites(__dirname), process.env.RALPH_E2E_SUITES)) mocha.addFile(file);
  return new Promise((resolve) => {
    const runner = mocha.run((failures) => {
      console.log(`${runner.stats?.passes ?? 0} passed, ${failures} failed`);
      resolve(failures > 0 ? 1 : 0);
    });
    runner.on('test end', onProgress).on('hook end', onProgress);
  });
}

if (require.main === module) {
  const started = Date.now();
  // a hang bound, not a speed check: the tier fails when nothing (no test, no hook) ended for this long,
  // well past every test's own timeout; a loaded machine that is slow but moving never meets it
  const limit = Number(process.env.RALPH_E2E_TIMEOUT_MS ?? 600_000);
  let timer: NodeJS.Timeout | undefined;
  const watch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      console.error(`[e2e] FAIL nothing ended for ${limit} ms (RALPH_E2E_TIMEOUT_MS)`);
      process.exit(1);
    }, limit);
  };
  watch();
  runE2e(watch).then(
    (code) => {
      clearTimeout(timer);
      console.log(`[e2e] ${code === 0 ? 'PASS' : 'FAIL'} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
      process.exit(code);
    },
    (error: unknown) => {
      console.error(`[e2e] FAIL ${String(error)}`);
      process.exit(1);
    },
  );
}
