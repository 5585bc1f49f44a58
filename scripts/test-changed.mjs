#!/usr/bin/env node
// `npm run test:changed`: the unit tests that reach the files changed against main — the product's
// own affected-test selection (src/core/gates/importGraph.ts, compiled to out/) applied to its own
// suite. A test file is picked when what it imports, followed transitively, holds a changed file;
// a test that starts one of Ralph's own programs (the CLI, the git helper, the test probe) reaches
// that program's files too; a test whose reach cannot be told, and every test after a change to
// what builds or runs them all (package.json, the lockfile, tsconfig, the mocha config), runs.
// Base: `git merge-base HEAD main` (RALPH_CHANGED_BASE names another ref); the working tree's
// uncommitted and untracked files count as changed. `--list` prints the picked files and why,
// without running them. See docs/development.md for when to run which tier.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const graphModule = path.join(root, 'out', 'src', 'core', 'gates', 'importGraph.js');
if (!existsSync(graphModule)) {
  console.error('[test:changed] out/ is missing: run `npm run compile-tests` first (npm run test:changed does)');
  process.exit(2);
}
const { ImportGraph } = require(graphModule);

/** Changing one of these can change every test's outcome. */
const EVERYTHING = /^(?:package\.json|package-lock\.json|tsconfig[^/]*\.json|\.mocharc\.unit\.cjs)$/;
/** Files that start one of Ralph's own programs → that program's entry (followed like an import). */
const PROGRAMS = {
  'test/unit/helpers/cliHarness.ts': 'src/cli/main.ts',
  'src/core/git/gitHost.ts': 'src/core/git/gitHostMain.ts',
  'src/core/gates/probe/probeRunner.ts': 'src/core/gates/probe/testProbe.ts',
};

const git = (...args) => execFileSync('git', args, { cwd: root, encoding: 'utf8', maxBuffer: 64 << 20 }).trim();
const lines = (text) => text.split('\n').filter(Boolean);

function changedFiles() {
  const ref = process.env.RALPH_CHANGED_BASE ?? 'main';
  let base;
  try {
    base = git('merge-base', 'HEAD', ref);
  } catch {
    console.error(`[test:changed] no common commit with ${ref} (RALPH_CHANGED_BASE names the ref to compare with)`);
    process.exit(2);
  }
  return {
    ref,
    changed: new Set([...lines(git('diff', '--name-only', base)), ...lines(git('ls-files', '--others', '--exclude-standard'))]),
  };
}

async function pick(files, changed) {
  const graph = new ImportGraph(root, files, { programStarts: 'imports' });
  const reach = async (file) => {
    const seen = new Set();
    const queue = [file];
    while (queue.length) {
      const closure = await graph.closure(queue.shift());
      if (closure.unknown) return { unknown: closure.unknown };
      for (const f of closure.files) {
        if (seen.has(f)) continue;
        seen.add(f);
        if (PROGRAMS[f] && !seen.has(PROGRAMS[f])) queue.push(PROGRAMS[f]);
      }
    }
    return { files: seen };
  };
  const tests = [...files].filter((f) => /^test\/unit\/.*\.test\.ts$/.test(f)).sort();
  const picked = [];
  for (const test of tests) {
    const reached = await reach(test);
    if (reached.unknown) picked.push({ test, why: `its reach cannot be told: ${reached.unknown}` });
    else {
      const hit = [...reached.files].find((f) => changed.has(f));
      if (hit) picked.push({ test, why: hit === test ? 'changed itself' : `reaches ${hit}` });
    }
  }
  return picked;
}

const { ref, changed } = changedFiles();
const files = new Set(
  [...lines(git('ls-files')), ...lines(git('ls-files', '--others', '--exclude-standard'))].filter((f) => existsSync(path.join(root, f))),
);
const everything = [...changed].find((f) => EVERYTHING.test(f));
const picked = everything
  ? [...files]
      .filter((f) => /^test\/unit\/.*\.test\.ts$/.test(f))
      .sort()
      .map((test) => ({ test, why: `${everything} changed` }))
  : await pick(files, changed);

console.log(`[test:changed] ${changed.size} file(s) changed against ${ref}; ${picked.length} unit test file(s) reach them`);
for (const { test, why } of picked) console.log(`  ${test}  (${why})`);
if (process.argv.includes('--list') || picked.length === 0) process.exit(0);
const compiled = picked.map(({ test }) => path.join('out', test.replace(/\.ts$/, '.js')));
const missing = compiled.filter((f) => !existsSync(path.join(root, f)));
if (missing.length) {
  console.error(`[test:changed] not compiled: ${missing.join(', ')} (npm run compile-tests)`);
  process.exit(2);
}
const mocha = spawnSync(process.execPath, [require.resolve('mocha/bin/mocha.js'), '--config', '.mocharc.unit.cjs', ...compiled], {
  cwd: root,
  stdio: 'inherit',
});
process.exit(mocha.status ?? 1);
