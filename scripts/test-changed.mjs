#!/usr/bin/env node
// `npm run test:changed`: the unit and agent-CLI tests that reach the files changed against main, by the rule the
// product's own affected-test selection follows (src/core/gates/affectedTests.ts): a test file is
// picked when what it imports, followed transitively, holds a changed file. The imports are read by
// TypeScript itself (`ts.preProcessFile`, `ts.resolveModuleName`), exact on this TypeScript code base
// where the product's reader, made for any repository, would take the code our tests write into
// their fixtures for imports of their own. A test that starts one of Ralph's own programs (the CLI,
// the git helper, the test probe) reaches that program's files too; every test runs after a change
// to what builds or runs them all (package.json, the lockfile, tsconfig, the mocha config).
// Base: `git merge-base HEAD main` (RALPH_CHANGED_BASE names another ref); the working tree's
// uncommitted and untracked files count as changed. `--list` prints the picked files and why,
// without running them. See docs/development.md for when to run which tier.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

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

const compilerOptions = { module: ts.ModuleKind.Node16, moduleResolution: ts.ModuleResolutionKind.Node16, allowJs: true };
const importsOf = new Map();
/** The repository files `file` imports (TypeScript's reading and resolution; packages left out). */
function imports(file) {
  let known = importsOf.get(file);
  if (known) return known;
  const abs = path.join(root, file);
  const found = ts.preProcessFile(readFileSync(abs, 'utf8'), true, true).importedFiles.map((i) => i.fileName);
  known = found.flatMap((specifier) => {
    const resolved = ts.resolveModuleName(specifier, abs, compilerOptions, ts.sys).resolvedModule;
    if (!resolved || resolved.isExternalLibraryImport) return [];
    const rel = path.relative(root, resolved.resolvedFileName).split(path.sep).join('/');
    return rel.startsWith('..') ? [] : [rel];
  });
  importsOf.set(file, known);
  return known;
}

/** Every repository file `test` reaches: its imports, followed, and the programs they start. */
function reach(test) {
  const seen = new Set([test]);
  const queue = [test];
  while (queue.length) {
    const file = queue.shift();
    for (const next of [...imports(file), ...(PROGRAMS[file] ? [PROGRAMS[file]] : [])]) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return seen;
}

function pick(tests, changed) {
  return tests.flatMap((test) => {
    const hit = [...reach(test)].find((f) => changed.has(f));
    return hit ? [{ test, why: hit === test ? 'changed itself' : `reaches ${hit}` }] : [];
  });
}

const { ref, changed } = changedFiles();
const files = new Set(
  [...lines(git('ls-files')), ...lines(git('ls-files', '--others', '--exclude-standard'))].filter((f) => existsSync(path.join(root, f))),
);
const tests = [...files].filter((f) => /^test\/(unit|agentclis)\/.*\.test\.ts$/.test(f)).sort();
const everything = [...changed].find((f) => EVERYTHING.test(f));
const picked = everything ? tests.map((test) => ({ test, why: `${everything} changed` })) : pick(tests, changed);

console.log(`[test:changed] ${changed.size} file(s) changed against ${ref}; ${picked.length} test file(s) reach them (unit, agent CLIs)`);
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
