/**
 * Orchestrator overhead per iteration, model and gate time excluded (DESIGN §6: a few
 * milliseconds, flat as iterations grow; memory bounded over 1,000 iterations).
 *
 * Runs one task for N iterations against the scripted OpenAI-compatible server (every reply a
 * PROGRESS signal, the last one COMPLETE), times each model call from the client side, and
 * reports (iteration wall time − model time) for the first and last hundred iterations, plus
 * heap and RSS growth.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseConfig } from '../src/core/config/load';
import { EventBus } from '../src/core/events';
import { createModelClient } from '../src/core/llm/factory';
import type { ChatRequest, ChatResponse, ModelClient } from '../src/core/llm/types';
import { RalphRunner } from '../src/core/loop/runner';
import { RalphPaths } from '../src/core/paths';
import { NodeCommandRunner } from '../src/core/safety/processRunner';
import { TaskStore } from '../src/core/tasks/store';
import { startScriptedServer } from '../test/fixtures/scriptedServer';

class TimedClient implements ModelClient {
  inModelMs = 0;
  constructor(private readonly inner: ModelClient) {}
  async chat(request: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    try {
      return await this.inner.chat(request);
    } finally {
      this.inModelMs += performance.now() - started;
    }
  }
}

export interface LoopBenchResult {
  iterations: number;
  overheadMs: { first100Median: number; last100Median: number; p95: number };
  heapGrowthMb: number;
  rssGrowthMb: number;
}

export async function benchLoop(iterations: number): Promise<LoopBenchResult> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q');
  git('config', 'user.name', 'bench');
  git('config', 'user.email', 'bench@localhost');
  await fs.writeFile(path.join(dir, 'README.md'), '# bench\n');
  git('add', '-A');
  git('commit', '-qm', 'init');

  const server = await startScriptedServer({ loop: true, steps: [{ content: 'working <ralph>PROGRESS:10</ralph>', usage: { prompt_tokens: 900, completion_tokens: 20 } }] });
  const config = parseConfig({ llm: { baseUrl: server.url, models: ['bench-model'], maxRetries: 0 }, loop: { maxIterations: iterations, taskTimeoutMinutes: 600, maxParallel: 1 } });
  const store = new TaskStore(new RalphPaths(dir));
  await store.add({ title: 'bench', prompt: 'spin', promise: 'never', maxIterations: iterations });
  const model = new TimedClient(createModelClient(config.llm, 'bench-key'));
  const bus = new EventBus();
  const overheads: number[] = [];
  let iterationStarted = 0;
  let modelAtStart = 0;
  bus.subscribe((event) => {
    if (event.type === 'iteration.started') {
      iterationStarted = performance.now();
      modelAtStart = model.inModelMs;
    } else if (event.type === 'iteration.finished') {
      overheads.push(performance.now() - iterationStarted - (model.inModelMs - modelAtStart));
      // the scripted server lives in this process and records every request: not the product's memory
      server.requests.splice(0);
    }
  });
  global.gc?.();
  const before = process.memoryUsage();
  await new RalphRunner({ workspace: dir, config, bus, model, commands: new NodeCommandRunner(), store }).run();
  global.gc?.();
  const after = process.memoryUsage();
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });

  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  const sorted = [...overheads].sort((a, b) => a - b);
  return {
    iterations: overheads.length,
    overheadMs: { first100Median: median(overheads.slice(0, 100)), last100Median: median(overheads.slice(-100)), p95: sorted[Math.floor(sorted.length * 0.95)] ?? 0 },
    heapGrowthMb: (after.heapUsed - before.heapUsed) / 2 ** 20,
    rssGrowthMb: (after.rss - before.rss) / 2 ** 20,
  };
}
