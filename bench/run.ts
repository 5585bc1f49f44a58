/**
 * `npm run bench`: the speed and memory budgets of DESIGN §6, measured (never asserted in
 * tests — these machines are shared and noisy). Prints a table and writes bench/results.json.
 * RALPH_BENCH_ITERATIONS overrides the iteration count (default 1000). `npm run bench -- --only
 * agentCli,store` runs those sections alone and prints them (nothing written).
 */
import { execFile } from 'node:child_process';
import { promises as fs, readFileSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { agentCliLines, benchAgentCli } from './agentCli';
import { benchBigCommit, type BigCommitResult, bigCommitLines, bigCommitWithinBudget } from './bigCommit';
import { benchBigRun, type BigRunResult, bigRunLines, bigRunWithinBudget } from './bigRun';
import { benchLoop } from './loopOverhead';
import { benchParallel, type RunCost } from './parallel';
import { benchPromptCache } from './promptCache';
import { benchSlowGate } from './slowGate';
import { affectedGatesLines, benchAffectedGates } from './affectedGates';
import { FLOOR_WRITES } from './overheadFloor';
import { benchStore, STORE_OP_LABELS, STORE_OPS } from './storeScale';
import { benchVerdictCost, verdictCostLines } from './verdictCost';

const root = path.resolve(__dirname, '../..');

function bundleFacts() {
  const size = (file: string) => {
    try {
      return statSync(path.join(root, file)).size;
    } catch {
      return undefined;
    }
  };
  const extension = size('dist/extension.js');
  let webviewCodeInExtension = false;
  try {
    const text = readFileSync(path.join(root, 'dist/extension.js'), 'utf8');
    webviewCodeInExtension = /acquireVsCodeApi\(\)/.test(text);
  } catch {
    // not built
  }
  return { extensionBytes: extension, cliBytes: size('dist/cli.js'), webviewBytes: size('dist/webview/main.js'), webviewCodeInExtension };
}

const SECTIONS = {
  loop: () => benchLoop(Number(process.env.RALPH_BENCH_ITERATIONS ?? 1000)),
  parallel: () => benchParallel(),
  slowGate: () => benchSlowGate(),
  promptCache: () => benchPromptCache(),
  store: () => benchStore(),
  verdictCost: () => benchVerdictCost(),
  affectedGates: () => benchAffectedGates(),
  agentCli: () => benchAgentCli(),
  // the bare commit, then a whole `ralph run` of the same iteration (the built CLI)
  bigCommit: async (): Promise<BigCommitResult & { run: BigRunResult }> => ({ ...(await benchBigCommit()), run: await benchBigRun() }),
};
type Section = keyof typeof SECTIONS;

/**
 * Each section in a process of its own: one section's heap must not weigh on the next one's
 * figures (on Linux every git process is a fork of this one, whose cost grows with its memory:
 * after the 1,000-iteration loop, the parallel section's merges paid for the loop's garbage).
 * The figures that are ratios are still measured side by side within one section.
 */
function inOwnProcess<K extends Section>(section: K): Promise<Awaited<ReturnType<(typeof SECTIONS)[K]>>> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', __filename, '--section', section],
      { maxBuffer: 64 * 2 ** 20, env: process.env },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`bench section ${section} failed: ${stderr || error.message}`));
        else resolve(JSON.parse(stdout.trim().split('\n').at(-1) ?? 'null'));
      },
    );
  });
}

async function main(): Promise<void> {
  const loop = await inOwnProcess('loop');
  const parallel = await inOwnProcess('parallel');
  const slowGate = await inOwnProcess('slowGate');
  const promptCache = await inOwnProcess('promptCache');
  const store = await inOwnProcess('store');
  const verdictCost = await inOwnProcess('verdictCost');
  const affectedGates = await inOwnProcess('affectedGates');
  const agentCli = await inOwnProcess('agentCli');
  const bigCommit = await inOwnProcess('bigCommit');
  const bundle = bundleFacts();
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    load: os.loadavg(),
    loop,
    parallel,
    slowGate,
    promptCache,
    store,
    verdictCost,
    affectedGates,
    agentCli,
    bigCommit,
    bundle,
  };
  console.log(`loop: ${loop.iterations} iterations`);
  console.log(
    `  orchestrator overhead per iteration (model time excluded): median ${loop.overheadMs.first100Median.toFixed(2)} ms (first 100), ${loop.overheadMs.last100Median.toFixed(2)} ms (last 100), p95 ${loop.overheadMs.p95.toFixed(2)} ms`,
  );
  console.log(
    `  whole cycle per iteration (one iteration.started to the next, model time excluded): median ${loop.cycleMs.median.toFixed(2)} ms (first 100 ${loop.cycleMs.first100Median.toFixed(2)}, last 100 ${loop.cycleMs.last100Median.toFixed(2)}), p95 ${loop.cycleMs.p95.toFixed(2)} ms`,
  );
  console.log(
    `  floor (one git status + ${FLOOR_WRITES.length} fsync'd atomic state writes, one after another: ${FLOOR_WRITES.join(', ')}), sampled alongside each iteration: median ${loop.floorMs.median.toFixed(2)} ms, p95 ${loop.floorMs.p95.toFixed(2)} ms`,
  );
  console.log(
    `  whole cycle / floor, iteration by iteration: median ${loop.ratioToFloor.median.toFixed(2)}×, p90 ${loop.ratioToFloor.p90.toFixed(2)}× (target ≤ 1.5×)`,
  );
  console.log(`  heap growth ${loop.heapGrowthMb.toFixed(1)} MB, RSS growth ${loop.rssGrowthMb.toFixed(1)} MB over the run`);
  console.log(
    `machine load (1/5/15 min): ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' / ')} on ${os.cpus().length} CPUs`,
  );
  for (const line of parallelLines(parallel, slowGate)) console.log(line);
  console.log(
    `prompt cache: ${promptCache.scenario}: ${promptCache.requests} requests, ${promptCache.promptTokens} prompt tokens; stable prefix ${(promptCache.stablePrefixShare * 100).toFixed(1)}% of prompt tokens, cached as reported by the (scripted) provider ${(promptCache.cachedShare * 100).toFixed(1)}%${promptCache.prefixBroken ? `; ${promptCache.prefixBroken} requests did NOT start with their stable prefix` : ''}`,
  );
  console.log(
    `task store: ${store.small} vs ${store.large} tasks (${(store.largeFileBytes / 2 ** 20).toFixed(1)} MB file), ${store.rounds} rounds side by side; median ms and the ${store.large}/${store.small} ratio`,
  );
  for (const op of STORE_OPS) {
    const f = store.ops[op];
    console.log(
      `  ${STORE_OP_LABELS[op].padEnd(34)} ${f.smallMs.toFixed(2).padStart(8)} ms ${f.largeMs.toFixed(2).padStart(9)} ms  ${f.ratio.toFixed(1).padStart(6)}×`,
    );
  }
  console.log(
    `  update one task at ${store.large} / a bare fsync'd write of that file: ${store.updateOverBareWrite.toFixed(2)}× (the write is the format's bound: one JSON document)`,
  );
  for (const line of verdictCostLines(verdictCost)) console.log(line);
  for (const line of affectedGatesLines(affectedGates)) console.log(line);
  for (const line of agentCliLines(agentCli)) console.log(line);
  for (const line of bigCommitAndRunLines(bigCommit)) console.log(line);
  console.log(
    `bundle: extension ${kb(bundle.extensionBytes)}, cli ${kb(bundle.cliBytes)}, webview ${kb(bundle.webviewBytes)}; webview code in the extension bundle: ${bundle.webviewCodeInExtension ? 'YES (bad)' : 'no'}`,
  );
  await fs.writeFile(path.join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  overBudget('bigCommit', bigCommit);
}

/** The parallel figures and the merge queue's throughput (issues 23, 37), one line each. */
export function parallelLines(
  parallel: Awaited<ReturnType<typeof benchParallel>>,
  slow: Awaited<ReturnType<typeof benchSlowGate>>,
): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const m = (x: { median: number; max: number }) => `median ${x.median.toFixed(0)} ms, max ${x.max.toFixed(0)} ms`;
  const suite = parallel.suite ? `each agent runs \`${parallel.suite}\` (six node:test files), also the required gate` : 'no gate';
  return [
    `CPU: the machine's, from /proc/stat over each run, whoever spent it (on a shared machine the neighbours' too: then indicative only); a run's CPU floor = that CPU spread over ${os.cpus().length} cores`,
    ...parallel.figures.flatMap((f) => [
      `parallel: ${parallel.tasks} independent tasks, ${f.latencyMs} ms per model call, ${suite}: maxParallel 1 ${s(f.sequentialMs)}, ${parallel.agents} agents ${s(f.parallelMs)} → ${f.speedup.toFixed(2)}× (median of ${f.rounds} paired rounds, ${f.speedupRange[0].toFixed(2)}–${f.speedupRange[1].toFixed(2)}; target ≥ 2.5× with the suite on 2 cores, DESIGN §6 3.6×; at no parallel cost at all: ${f.ceiling.toFixed(2)}×)`,
      `  maxParallel 1: ${cost(f.sequentialCost)}`,
      `  ${parallel.agents} agents: ${cost(f.parallelCost)}${parallel.suite ? ' (targets at 400 ms: ≤ 2 suite runs, ≤ 2.5 CPU-s per task)' : ''}`,
    ]),
    ...(parallel.batched
      ? [
          `  ${parallel.agents} agents with merge.batchSize ${parallel.batched.batchSize} (one merged check covers up to ${parallel.batched.batchSize} tasks), ${parallel.batched.latencyMs} ms, its own pair: maxParallel 1 ${s(parallel.batched.sequentialMs)}, ${s(parallel.batched.parallelMs)} → ${parallel.batched.speedup.toFixed(2)}×; ${cost(parallel.batched.cost)}`,
          `    the same with merge.concurrency 1 (one check at a time, the tasks waiting meanwhile one batch): ${s(parallel.batched.oneCheck.parallelMs)} → ${parallel.batched.oneCheck.speedup.toFixed(2)}×; ${cost(parallel.batched.oneCheck.cost)}`,
        ]
      : []),
    `  merge queue's own cost per merge (gate time excluded): merge-tree chain ${m(parallel.queueMsPerMerge.after)}; worktree merges one at a time (before) ${m(parallel.queueMsPerMerge.before)}`,
    `merge throughput: ${slow.tasks} tasks, ${slow.agents} agents, ${slow.latencyMs} ms per call, a ${s(slow.gateMs)} gate each agent also runs itself; ${slow.tasks} gate runs back to back ${s(slow.backToBackMs)}`,
    `  chain (merge.concurrency ${slow.chain.concurrency}) ${s(slow.chain.ms)} → ${slow.chain.ratio.toFixed(2)} of back to back (target ≤ 0.5; issue 37 ≤ 0.75); ${cost(slow.chain.cost)}`,
    `  one at a time (merge.concurrency 1) ${s(slow.serial.ms)} → ${slow.serial.ratio.toFixed(2)}; ${cost(slow.serial.cost)}`,
    `  with merge.checkAhead off (queued only after its own gates passed) ${s(slow.chainNotAhead.ms)} → ${slow.chainNotAhead.ratio.toFixed(2)}; ${cost(slow.chainNotAhead.cost)}`,
    `  after the last task's loop accepted COMPLETE, the run ended ${s(slow.chain.tailMs)} later with the chain, ${s(slow.chainNotAhead.tailMs)} without checks ahead, ${s(slow.serial.tailMs)} one at a time`,
    `  the chain with the gate as kind "tests" (its output read as a test inventory) ${s(slow.chainTestsKind.ms)} → ${slow.chainTestsKind.ratio.toFixed(2)}; ${cost(slow.chainTestsKind.cost)}`,
  ];
}

/** A run's cost on one line: suite runs and CPU-seconds per task, wall time over the CPU floor. */
function cost(c: RunCost): string {
  return `${c.suiteRunsPerTask.toFixed(2)} suite runs per task, ${c.cpuSecondsPerTask.toFixed(2)} CPU-s per task, ${c.floorRatio.toFixed(2)}× its CPU floor`;
}

function kb(bytes: number | undefined): string {
  return bytes === undefined ? 'not built' : `${Math.round(bytes / 1024)} KB`;
}

/** `--parallel-only`: the parallel and slow-gate sections alone, printed, nothing written (to look at them without the whole bench). */
async function parallelOnly(): Promise<void> {
  const parallel = await inOwnProcess('parallel');
  const slowGate = await inOwnProcess('slowGate');
  for (const line of parallelLines(parallel, slowGate)) console.log(line);
}

/**
 * The budgets the bench enforces (the others it prints): a section over its budget makes the
 * bench fail (exit 1) once everything is printed.
 */
function overBudget(name: Section, result: unknown): void {
  const big = result as BigCommitResult & { run: BigRunResult };
  if (name === 'bigCommit' && (!bigCommitWithinBudget(big) || !bigRunWithinBudget(big.run))) {
    console.error(
      `bench: the big commit or the whole run of it is over its budget (peak resident memory ≤ ${big.budgetMb} MB, every file committed)`,
    );
    process.exitCode = 1;
  }
}

/** The lines of the sections `--only` can name alone. */
const ONLY_LINES: Partial<Record<Section, (result: never) => string[]>> = {
  agentCli: agentCliLines,
  verdictCost: verdictCostLines,
  affectedGates: affectedGatesLines,
  bigCommit: bigCommitAndRunLines,
};

/** The bare commit's lines, then the whole run's. */
function bigCommitAndRunLines(r: BigCommitResult & { run: BigRunResult }): string[] {
  return [...bigCommitLines(r), ...bigRunLines(r.run)];
}

/** `--only a,b`: those sections alone, each in its own process, printed (as JSON when it has no lines of its own), nothing written. */
async function only(names: string[]): Promise<void> {
  for (const name of names) {
    if (!(name in SECTIONS)) throw new Error(`no bench section "${name}" (sections: ${Object.keys(SECTIONS).join(', ')})`);
    const result = await inOwnProcess(name as Section);
    const lines = ONLY_LINES[name as Section];
    for (const line of lines ? lines(result as never) : [`${name}: ${JSON.stringify(result)}`]) console.log(line);
    overBudget(name as Section, result);
  }
}

const at = process.argv.indexOf('--section');
const section = at >= 0 ? (process.argv[at + 1] as Section) : undefined;
const onlyAt = process.argv.indexOf('--only');
const whole =
  onlyAt >= 0
    ? () => only((process.argv[onlyAt + 1] ?? '').split(',').filter(Boolean))
    : process.argv.includes('--parallel-only')
      ? parallelOnly
      : main;
(section ? SECTIONS[section]().then((result) => console.log(JSON.stringify(result))) : whole()).catch((error) => {
  console.error(error);
  process.exit(1);
});
