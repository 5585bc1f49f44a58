/**
 * extensionTestsPath for the integration tier: loaded by the extension host (code-server's
 * via runIntegration.ts, or desktop VS Code via runElectron.ts). Runs every
 * out/test/integration/**\/*.test.js with mocha (bdd) and rejects when any test fails,
 * which the host turns into a non-zero exit code.
 *
 * Env (reaches the extension host from the runner): RALPH_TEST_GREP filters tests by title,
 * RALPH_TEST_TIMEOUT_MS sets mocha's per-test timeout (default 60000), RALPH_HOST_LOG_TAG
 * (set by runIntegration.ts) marks this host's console lines among the workbench's log.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as util from 'node:util';
import Mocha from 'mocha';

function findTests(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(full));
    else if (entry.isFile() && entry.name.endsWith('.test.js')) out.push(full);
  }
  return out.sort();
}

/**
 * In a web workbench the extension host's console reaches the runner through the
 * workbench's log service, which neither applies printf-style `%s` formats nor says which
 * lines came from the extension host. Format here, and tag each line so the runner can
 * show test output without the workbench's own chatter. VS Code pins `console.log` & co.
 * as non-configurable accessors, so the global `console` object itself is replaced.
 */
function patchConsoleForWebHost(tag: string): void {
  const original = globalThis.console;
  const tagged = Object.create(original) as Console;
  for (const level of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const method = original[level].bind(original);
    Object.defineProperty(tagged, level, {
      value: (...args: unknown[]) => method(`${tag}${util.format(...args)}`),
      configurable: true,
      writable: true,
    });
  }
  try {
    Object.defineProperty(globalThis, 'console', { value: tagged, configurable: true, writable: true });
  } catch {
    // Not replaceable here: output stays untagged and the runner shows it with RALPH_TEST_VERBOSE=1.
  }
}

export function run(): Promise<void> {
  const tag = process.env.RALPH_HOST_LOG_TAG;
  if (tag) patchConsoleForWebHost(tag);
  // mocha's reporters print through Base.consoleLog (console.log captured at load time).
  Mocha.reporters.Base.consoleLog = (...args: unknown[]) => globalThis.console.log(util.format(...args));
  const mocha = new Mocha({
    ui: 'bdd',
    reporter: 'spec',
    // Plain text: the output travels through the workbench to a CI log.
    color: false,
    // a hang bound, not a speed check: the suites that run whole loops (worktrees, the merge queue, the
    // workbench in Chromium) need it on a loaded machine, as those that set their own (240–300 s) do
    timeout: Number(process.env.RALPH_TEST_TIMEOUT_MS ?? 240_000),
  });
  if (process.env.RALPH_TEST_GREP) mocha.grep(process.env.RALPH_TEST_GREP);
  // tsc never deletes outputs: a compiled test whose source is gone would still run.
  const sourceDir = path.resolve(__dirname, '..', '..', '..', 'test', 'integration');
  for (const file of findTests(__dirname)) {
    const source = path.join(sourceDir, path.relative(__dirname, file)).replace(/\.js$/, '.ts');
    if (fs.existsSync(sourceDir) && !fs.existsSync(source)) {
      console.log(`(skipping ${path.relative(__dirname, file)}: stale output, no ${source})`);
      continue;
    }
    mocha.addFile(file);
  }

  return new Promise<void>((resolve, reject) => {
    try {
      const runner = mocha.run((failures) => {
        const passed = runner.stats?.passes ?? 0;
        // Counted by CI readers: keep this exact format, alone on its line.
        console.log(`${passed} passed, ${failures} failed`);
        if (failures > 0) reject(new Error(`${failures} integration test(s) failed`));
        else resolve();
      });
    } catch (err) {
      console.error(err);
      reject(err instanceof Error ? err : new Error(String(err)));
    }
  });
}
