/**
 * Issue 33's cost figure: what a verdict from evidence costs beside the gate run it judges. A
 * generated repository shaped like a real one — 200 source files importing each other in
 * chains, 100 node:test files (300 tests) each importing a few of them, two tests red at the
 * base (the task's own, and a legacy one that imports nothing the task touches) — and a task
 * that changed three source files. Per iteration: the gate run (`node --test`, real), then the
 * evidence its verdict reads (git's file list and diff, the import closure of each failing
 * test, the judge) — cold (first iteration of a run) and warm (the parse cache kept) — and the
 * base run, made once per task, shared over a task's iterations.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseGateOutput } from '../src/core/gates/parsers';
import { failureJudge } from '../src/core/gates/verdictEvidence';
import { readTreeEvidence } from '../src/core/loop/task/taskEvidence';

const SOURCES = 200;
const TEST_FILES = 100;
const TESTS_PER_FILE = 3;
const ROUNDS = 3;
/** Iterations a task takes, to share its one base run over. */
const ITERATIONS_PER_TASK = 3;

export interface VerdictCostResult {
  tests: number;
  gateRunMs: number;
  evidenceColdMs: number;
  evidenceWarmMs: number;
  /** The evidence of an iteration (warm) and its share of the task's base run, over the gate run it judges. */
  ratioPerIteration: number;
  /** The evidence alone (cold, the first iteration) over the gate run. */
  evidenceColdRatio: number;
}

async function makeRepository(dir: string): Promise<void> {
  const write = async (file: string, text: string) => {
    await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await fs.writeFile(path.join(dir, file), text);
  };
  await write('package.json', `${JSON.stringify({ name: 'shaped', private: true, scripts: { test: 'node --test' } })}\n`);
  for (let i = 0; i < SOURCES; i++) {
    const next = i % 10 === 9 ? '' : `const next = require('./m${i + 1}');\n`;
    await write(`src/m${i}.js`, `${next}exports.v${i} = (x) => x + ${i};\n`);
  }
  for (let t = 0; t < TEST_FILES; t++) {
    const start = (t * 7) % SOURCES;
    const body = Array.from(
      { length: TESTS_PER_FILE },
      (_, k) => `test('case ${t}.${k}', () => assert.equal(m.v${start}(${k}), ${k + start}));\n`,
    ).join('');
    await write(
      `test/t${t}.test.js`,
      `const test = require('node:test');\nconst assert = require('node:assert/strict');\nconst m = require('../src/m${start}');\n${body}`,
    );
  }
  // the task's own red test (src/m0 is what the task changes) and a legacy one importing nothing
  await write(
    'test/own.test.js',
    "const test = require('node:test');\nconst { v0 } = require('../src/m0');\ntest('own', () => { if (v0(1) !== 0) throw new Error('v0 is wrong'); });\n",
  );
  await write(
    'test/legacy.test.js',
    "const test = require('node:test');\ntest('legacy', () => { throw new Error('the date passed'); });\n",
  );
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'pipe' });
  git('init', '-q', '-b', 'main');
  git('add', '-A');
  git('-c', 'user.name=b', '-c', 'user.email=b@b', 'commit', '-qm', 'base');
  for (const i of [0, 5, 42]) await write(`src/m${i}.js`, `${await fs.readFile(path.join(dir, `src/m${i}.js`), 'utf8')}// changed\n`);
}

function gateRun(dir: string): { ms: number; output: string } {
  const started = performance.now();
  let output: string;
  try {
    output = execFileSync('sh', ['-c', 'node --test'], { cwd: dir, stdio: 'pipe', encoding: 'utf8' });
  } catch (error) {
    output = String((error as { stdout?: string }).stdout ?? '');
  }
  return { ms: performance.now() - started, output };
}

async function evidence(dir: string, failures: { name: string; file?: string }[]): Promise<number> {
  const started = performance.now();
  const e = await readTreeEvidence(dir, 'HEAD', { title: 'x', prompt: 'make v0 right', promise: 'v0 is right' });
  const judge = failureJudge(e.change, e.graph, { gate: [], task: [] });
  for (const f of failures) await judge(f);
  return performance.now() - started;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export async function benchVerdictCost(): Promise<VerdictCostResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-verdict-'));
  try {
    await makeRepository(dir);
    const runs: number[] = [];
    const cold: number[] = [];
    const warm: number[] = [];
    let tests = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const run = gateRun(dir);
      runs.push(run.ms);
      const parsed = parseGateOutput('tests', run.output, { cwd: dir }).tests;
      tests = parsed?.total ?? 0;
      const failures = (parsed?.failures ?? []).map((f) => ({ name: f.name, ...(f.file ? { file: path.relative(dir, f.file) } : {}) }));
      // cold: a fresh process's parse cache is empty; each round touches the files to miss it
      execFileSync('sh', ['-c', 'touch src/*.js test/*.js'], { cwd: dir });
      cold.push(await evidence(dir, failures));
      warm.push(await evidence(dir, failures));
    }
    const gateRunMs = median(runs);
    const evidenceWarmMs = median(warm);
    const evidenceColdMs = median(cold);
    return {
      tests,
      gateRunMs,
      evidenceColdMs,
      evidenceWarmMs,
      ratioPerIteration: (evidenceWarmMs + gateRunMs / ITERATIONS_PER_TASK) / gateRunMs,
      evidenceColdRatio: evidenceColdMs / gateRunMs,
    };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export function verdictCostLines(v: VerdictCostResult): string[] {
  return [
    `verdict evidence: ${v.tests} tests (node:test), a gate run ${v.gateRunMs.toFixed(0)} ms; the evidence its verdict reads (git's file list and diff, the closures of the failing tests) ${v.evidenceColdMs.toFixed(1)} ms cold, ${v.evidenceWarmMs.toFixed(1)} ms warm → ${(v.evidenceColdRatio * 100).toFixed(1)} % of the gate run cold`,
    `  per iteration, the evidence and its share of the task's one base run (${ITERATIONS_PER_TASK} iterations a task) over the gate run it judges: ${v.ratioPerIteration.toFixed(2)}×`,
  ];
}
