/**
 * Issue 34's figure: a suite of 300 node:test tests in 30 files whose whole run takes ≈ 30 s
 * (each test waits 100 ms, one file at a time — a suite that mostly waits, as one on a database
 * or a browser does), 6 tasks of 3 iterations each (each iteration changes the task's own module,
 * the last claims COMPLETE), 3 agents, a scripted model with a fixed latency. Side by side in
 * one run: the whole suite after every iteration with each task keeping its agent slot while its
 * gates run (before issue 34), affected tests alone, freed slots alone, both; and the floor —
 * the model's time and, per task, one whole run at COMPLETE and one merged check, no other gate
 * time. `loop.maxConcurrentGates` is 6 in every run (each agent's gates and a merged check): the
 * suite waits far more than it computes.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { costOf, once, type OnceResult, type RunCost } from './parallel';

const TASKS = 6;
const AGENTS = 3;
const FILES = 30;
const TESTS_PER_FILE = 10;
const TEST_MS = 100;
const CALLS_PER_ITERATION = 2;
const ITERATIONS = 3;
const COMMAND = 'npm test';

function project(): Record<string, string> {
  const files: Record<string, string> = {
    'package.json': `${JSON.stringify({ name: 'big-suite', private: true, scripts: { test: 'node --test --test-concurrency=1' } }, null, 2)}\n`,
  };
  for (let i = 0; i < FILES; i++) {
    files[`src/m${i}.js`] = 'exports.value = 0;\n';
    const tests = Array.from(
      { length: TESTS_PER_FILE },
      (_, t) => `test('m${i} case ${t}', async () => { await sleep(${TEST_MS}); assert.equal(typeof value, 'number'); });`,
    );
    files[`test/m${i}.test.js`] =
      `const test = require('node:test');\nconst assert = require('node:assert/strict');\nconst { value } = require('../src/m${i}');\nconst sleep = (ms) => new Promise((r) => setTimeout(r, ms));\n${tests.join('\n')}\n`;
  }
  return files;
}

export interface AffectedRun {
  label: string;
  scope: 'full' | 'affected';
  holdSlot: boolean;
  ms: number;
  /** Over the floor. */
  ratio: number;
  /** Whole runs and partial runs of the suite per task. */
  partRunsPerTask: number;
  cost: RunCost;
}

export interface AffectedGatesResult {
  tasks: number;
  agents: number;
  tests: number;
  latencyMs: number;
  /** One whole run of the suite, back to back outside Ralph (the median of 2). */
  wholeRunMs: number;
  /** ceil(tasks / agents) waves × (model time per task + 2 whole runs). */
  floorMs: number;
  runs: AffectedRun[];
  /** Today's run over both together. */
  speedup: number;
}

async function wholeRun(): Promise<number> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-suite-'));
  try {
    for (const [rel, content] of Object.entries(project())) {
      await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
      await fs.writeFile(path.join(dir, rel), content);
    }
    const times: number[] = [];
    for (let i = 0; i < 2; i++) {
      const started = performance.now();
      execFileSync('sh', ['-c', COMMAND], { cwd: dir, stdio: 'ignore' });
      times.push(performance.now() - started);
    }
    return Math.min(...times);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function benchAffectedGates(
  latencyMs = Number(process.env.RALPH_BENCH_AFFECTED_LATENCY_MS ?? 1000),
): Promise<AffectedGatesResult> {
  const whole = await wholeRun();
  const modelPerTask = ITERATIONS * CALLS_PER_ITERATION * latencyMs;
  const floorMs = Math.ceil(TASKS / AGENTS) * (modelPerTask + 2 * whole);
  const files = project();
  const shapes: { label: string; scope: 'full' | 'affected'; holdSlot: boolean }[] = [
    { label: 'whole suite, slots held (before)', scope: 'full', holdSlot: true },
    { label: 'affected tests, slots held', scope: 'affected', holdSlot: true },
    { label: 'whole suite, slots freed', scope: 'full', holdSlot: false },
    { label: 'affected tests, slots freed (both)', scope: 'affected', holdSlot: false },
  ];
  const runs: AffectedRun[] = [];
  for (const shape of shapes) {
    const result: OnceResult = await once(AGENTS, latencyMs, {
      tasks: TASKS,
      files,
      gates: [{ name: 'tests', kind: 'tests', command: COMMAND, required: true, scope: shape.scope }],
      loop: { maxConcurrentGates: 2 * AGENTS, holdSlotDuringGates: shape.holdSlot },
      suite: COMMAND,
      agent: 'iterations',
      prompt: (i) => `WRITE src/m${i}.js`,
    });
    runs.push({
      ...shape,
      ms: result.ms,
      ratio: result.ms / floorMs,
      partRunsPerTask: result.partRuns / TASKS,
      cost: costOf(result, TASKS),
    });
  }
  return {
    tasks: TASKS,
    agents: AGENTS,
    tests: FILES * TESTS_PER_FILE,
    latencyMs,
    wholeRunMs: whole,
    floorMs,
    runs,
    speedup: runs[0].ms / runs[3].ms,
  };
}

/** The section's lines for the bench's table. */
export function affectedGatesLines(r: AffectedGatesResult): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return [
    `affected tests (issue 34): ${r.tasks} tasks × 3 iterations, ${r.agents} agents, ${r.latencyMs} ms per model call, a ${r.tests}-test suite whose whole run takes ${s(r.wholeRunMs)}; floor (model time + a whole run at COMPLETE + a merged check per task) ${s(r.floorMs)}`,
    ...r.runs.map(
      (run) =>
        `  ${run.label.padEnd(36)} ${s(run.ms).padStart(8)} → ${run.ratio.toFixed(2)}× the floor; ${run.cost.suiteRunsPerTask.toFixed(2)} whole + ${run.partRunsPerTask.toFixed(2)} partial runs per task, ${run.cost.cpuSecondsPerTask.toFixed(2)} CPU-s per task`,
    ),
    `  both against before: ${r.speedup.toFixed(2)}× faster (targets: both within 1.3× the floor, ≥ 2× faster than before)`,
  ];
}
