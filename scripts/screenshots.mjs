#!/usr/bin/env node
// `npm run screenshots`: the README's pictures, taken by the end-to-end tier from the packaged
// extension, so they never show an older product. It packages the extension, runs the e2e suites
// that take the pictures (code-server + Chromium; see test/e2e/), copies the chosen shots from
// test/e2e/screenshots/ into media/readme/ and rebuilds the development bundles the production
// build replaced. `--no-run` only copies what an earlier e2e run left (e.g. after `npm test`).
// Needs what the e2e tier needs: the tools (scripts/install-tools.sh, in the user cache or RALPH_TOOLS_DIR) and Chromium.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const shotsDir = path.join(root, 'test', 'e2e', 'screenshots');
const targetDir = path.join(root, 'media', 'readme');

/** What the README shows, and which suite takes it (a suite is test/e2e/<suite>.e2e.ts). */
export const README_SHOTS = [
  {
    suite: 'ralph',
    shot: 'workbench-running-light',
    file: 'run.png',
    shows: 'a run going on: the task tree, the progress panel, the status bar',
  },
  {
    suite: 'parallel',
    shot: 'parallel-panel-checking-light',
    file: 'parallel.png',
    shows: 'three agents and the merge queue checking a merged result',
  },
  {
    suite: 'person',
    shot: 'person-show-changes-cropped-light',
    file: 'review.png',
    shows: "the review of a task's changes before they land",
  },
  {
    suite: 'person',
    shot: 'person-tree-needs-you-cropped-light',
    file: 'tree-person.png',
    shows: 'the task tree: what needs you, what waits for review',
  },
  { suite: 'parallel', shot: 'parallel-tree-cropped-checking-light', file: 'tree.png', shows: 'the task tree during a parallel run' },
  { suite: 'person', shot: 'person-panel-light', file: 'person.png', shows: 'a question and a review waiting for the person' },
];

function run(command, args, env = {}) {
  console.log(`[screenshots] ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status ?? result.signal})`);
}

function takeShots() {
  const suites = [...new Set(README_SHOTS.map((s) => s.suite))];
  const started = Date.now();
  run('npm', ['run', '--silent', 'package']);
  run('npm', ['run', '--silent', 'compile-tests']);
  try {
    run(process.execPath, ['out/test/e2e/run.js'], { RALPH_E2E_SUITES: suites.join(',') });
  } finally {
    // the production build replaced dist/: bring back the development bundles the other tiers use
    run('npm', ['run', '--silent', 'build']);
  }
  console.log(`[screenshots] the e2e suites ${suites.join(', ')} took ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return started;
}

function copyShots(since) {
  fs.mkdirSync(targetDir, { recursive: true });
  const problems = [];
  for (const { shot, file, suite } of README_SHOTS) {
    const from = path.join(shotsDir, `${shot}.png`);
    if (!fs.existsSync(from)) problems.push(`${shot}.png is missing (taken by test/e2e/${suite}.e2e.ts)`);
    else if (fs.statSync(from).mtimeMs < since) problems.push(`${shot}.png is older than this run (did test/e2e/${suite}.e2e.ts fail?)`);
    else {
      fs.copyFileSync(from, path.join(targetDir, file));
      console.log(`[screenshots] media/readme/${file} ← test/e2e/screenshots/${shot}.png`);
    }
  }
  if (problems.length > 0) throw new Error(`some README shots were not taken:\n  ${problems.join('\n  ')}`);
}

const copyOnly = process.argv.includes('--no-run');
try {
  copyShots(copyOnly ? 0 : takeShots());
} catch (error) {
  console.error(`[screenshots] ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
