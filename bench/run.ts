/**
 * `npm run bench`: the speed and memory budgets of DESIGN §6, measured (never asserted in
 * tests — these machines are shared and noisy). Prints a table and writes bench/results.json.
 * RALPH_BENCH_ITERATIONS overrides the iteration count (default 1000).
 */
import { promises as fs, statSync } from 'node:fs';
import * as path from 'node:path';
import { benchLoop } from './loopOverhead';
import { benchParallel } from './parallel';
import { benchPromptCache } from './promptCache';
import { FLOOR_WRITES } from './overheadFloor';
import { benchStore, STORE_OP_LABELS, STORE_OPS } from './storeScale';

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
    const text = require('node:fs').readFileSync(path.join(root, 'dist/extension.js'), 'utf8') as string;
    webviewCodeInExtension = /acquireVsCodeApi\(\)/.test(text);
  } catch {
    // not built
  }
  return { extensionBytes: extension, cliBytes: size('dist/cli.js'), webviewBytes: size('dist/webview/main.js'), webviewCodeInExtension };
}

async function main(): Promise<void> {
  const iterations = Number(process.env.RALPH_BENCH_ITERATIONS ?? 1000);
  const loop = await benchLoop(iterations);
  const parallel = await benchParallel();
  const promptCache = await benchPromptCache();
  const store = await benchStore();
  const bundle = bundleFacts();
  const results = { date: new Date().toISOString(), node: process.version, loop, parallel, promptCache, store, bundle };
  console.log(`loop: ${loop.iterations} iterations`);
  console.log(`  orchestrator overhead per iteration (model time excluded): median ${loop.overheadMs.first100Median.toFixed(2)} ms (first 100), ${loop.overheadMs.last100Median.toFixed(2)} ms (last 100), p95 ${loop.overheadMs.p95.toFixed(2)} ms`);
  console.log(`  whole cycle per iteration (one iteration.started to the next, model time excluded): median ${loop.cycleMs.median.toFixed(2)} ms (first 100 ${loop.cycleMs.first100Median.toFixed(2)}, last 100 ${loop.cycleMs.last100Median.toFixed(2)}), p95 ${loop.cycleMs.p95.toFixed(2)} ms`);
  console.log(`  floor (one git status + ${FLOOR_WRITES.length} fsync'd atomic state writes, one after another: ${FLOOR_WRITES.join(', ')}), sampled alongside each iteration: median ${loop.floorMs.median.toFixed(2)} ms, p95 ${loop.floorMs.p95.toFixed(2)} ms`);
  console.log(`  whole cycle / floor, iteration by iteration: median ${loop.ratioToFloor.median.toFixed(2)}×, p90 ${loop.ratioToFloor.p90.toFixed(2)}× (target ≤ 1.5×)`);
  console.log(`  heap growth ${loop.heapGrowthMb.toFixed(1)} MB, RSS growth ${loop.rssGrowthMb.toFixed(1)} MB over the run`);
  console.log(`parallel: ${parallel.tasks} independent tasks, ${parallel.latencyMs} ms per model call: maxParallel 1 ${(parallel.sequentialMs / 1000).toFixed(1)} s, ${parallel.agents} agents ${(parallel.parallelMs / 1000).toFixed(1)} s → ${parallel.speedup.toFixed(2)}× (target ≥ 3.5×)`);
  console.log(`  merge queue's own cost per merge (gate time excluded): median ${parallel.queueMsPerMerge.median.toFixed(0)} ms, max ${parallel.queueMsPerMerge.max.toFixed(0)} ms`);
  console.log(`prompt cache: ${promptCache.scenario}: ${promptCache.requests} requests, ${promptCache.promptTokens} prompt tokens; stable prefix ${(promptCache.stablePrefixShare * 100).toFixed(1)}% of prompt tokens, cached as reported by the (scripted) provider ${(promptCache.cachedShare * 100).toFixed(1)}%${promptCache.prefixBroken ? `; ${promptCache.prefixBroken} requests did NOT start with their stable prefix` : ''}`);
  console.log(`task store: ${store.small} vs ${store.large} tasks (${(store.largeFileBytes / 2 ** 20).toFixed(1)} MB file), ${store.rounds} rounds side by side; median ms and the ${store.large}/${store.small} ratio`);
  for (const op of STORE_OPS) {
    const f = store.ops[op];
    console.log(`  ${STORE_OP_LABELS[op].padEnd(34)} ${f.smallMs.toFixed(2).padStart(8)} ms ${f.largeMs.toFixed(2).padStart(9)} ms  ${f.ratio.toFixed(1).padStart(6)}×`);
  }
  console.log(`  update one task at ${store.large} / a bare fsync'd write of that file: ${store.updateOverBareWrite.toFixed(2)}× (the write is the format's bound: one JSON document)`);
  console.log(`bundle: extension ${kb(bundle.extensionBytes)}, cli ${kb(bundle.cliBytes)}, webview ${kb(bundle.webviewBytes)}; webview code in the extension bundle: ${bundle.webviewCodeInExtension ? 'YES (bad)' : 'no'}`);
  await fs.writeFile(path.join(root, 'bench', 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
}

function kb(bytes: number | undefined): string {
  return bytes === undefined ? 'not built' : `${Math.round(bytes / 1024)} KB`;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
