/**
 * Issue 23's throughput figure: 12 independent tasks, 4 agents, a required gate of ≈ 2 s that
 * is mostly waiting (a sleep and a small suite), 200 ms per model call. The whole run divided
 * by 12 back-to-back runs of the gate, measured side by side: the speculative chain
 * (`merge.concurrency` 4), the queue one task at a time (`merge.concurrency` 1), and the chain
 * with `merge.checkAhead` off (a task queued only after its own gates passed).
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { costOf, once, type RunCost } from './parallel';

const TASKS = 12;
const AGENTS = 4;
const LATENCY_MS = 200;
/** ≈ 2 s, mostly waiting: a sleep, then a suite that reads the files the tasks wrote. */
const SUITE_JS = `setTimeout(() => {
  const fs = require('fs');
  const files = fs.readdirSync('.').filter((f) => /^f\\d+\\.txt$/.test(f));
  for (const f of files) if (fs.readFileSync(f, 'utf8') !== f + '\\n') { console.error('bad ' + f); process.exit(1); }
  console.log(files.length + ' files ok');
}, 1900);
`;
/**
 * A required gate runs at each task's base (issue 19's integrity baseline, beside the first
 * iteration in a worktree), by the task's agent before it claims COMPLETE (its `run_command` of
 * the gate's command: the gate's run, issue 37), when the task completes, and in its merged
 * check — each tree once per run (the run's gate cache). Measured as kind `custom` and, besides,
 * as kind `tests`.
 */
const GATE = { name: 'suite', kind: 'custom', command: 'node suite.js', required: true };

export interface SlowGateResult {
  tasks: number;
  agents: number;
  latencyMs: number;
  gateMs: number;
  backToBackMs: number;
  /** `tailMs`: from the last task entering the queue to the run's end — the queue's own share of the run. `cost`: suite runs, CPU, floor. */
  chain: { concurrency: number; ms: number; ratio: number; tailMs: number; cost: RunCost };
  serial: { ms: number; ratio: number; tailMs: number; cost: RunCost };
  /** The chain again with the gate as kind `tests` (its output parsed as a test inventory). */
  chainTestsKind: { ms: number; ratio: number; cost: RunCost };
  /** The chain with `merge.checkAhead` off: a task joins the queue only once its own gates passed. */
  chainNotAhead: { ms: number; ratio: number; tailMs: number; cost: RunCost };
}

async function backToBack(): Promise<{ total: number; each: number }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-gate-'));
  try {
    await fs.writeFile(path.join(dir, 'suite.js'), SUITE_JS);
    const started = performance.now();
    for (let i = 0; i < TASKS; i++) execFileSync('sh', ['-c', GATE.command], { cwd: dir, stdio: 'ignore' });
    const total = performance.now() - started;
    return { total, each: total / TASKS };
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

export async function benchSlowGate(concurrency = Number(process.env.RALPH_BENCH_CONCURRENCY ?? AGENTS)): Promise<SlowGateResult> {
  const gate = await backToBack();
  const run = (merge: Record<string, unknown>, kind = GATE.kind) =>
    once(AGENTS, LATENCY_MS, { tasks: TASKS, gates: [{ ...GATE, kind }], files: { 'suite.js': SUITE_JS }, merge, suite: GATE.command });
  const chain = await run({ concurrency });
  const serial = await run({ concurrency: 1 });
  const testsKind = await run({ concurrency }, 'tests');
  const notAhead = await run({ concurrency, checkAhead: false });
  return {
    tasks: TASKS,
    agents: AGENTS,
    latencyMs: LATENCY_MS,
    gateMs: gate.each,
    backToBackMs: gate.total,
    chain: { concurrency, ms: chain.ms, ratio: chain.ms / gate.total, tailMs: chain.tailMs, cost: costOf(chain, TASKS) },
    serial: { ms: serial.ms, ratio: serial.ms / gate.total, tailMs: serial.tailMs, cost: costOf(serial, TASKS) },
    chainTestsKind: { ms: testsKind.ms, ratio: testsKind.ms / gate.total, cost: costOf(testsKind, TASKS) },
    chainNotAhead: { ms: notAhead.ms, ratio: notAhead.ms / gate.total, tailMs: notAhead.tailMs, cost: costOf(notAhead, TASKS) },
  };
}
