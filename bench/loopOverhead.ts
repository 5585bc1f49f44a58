/**
 * Orchestrator overhead per iteration, model and gate time excluded (DESIGN §6: a few
 * milliseconds, flat as iterations grow; memory bounded over 1,000 iterations; issue #11:
 * within 1.5× its own floor).
 *
 * Runs one task for N iterations against the scripted OpenAI-compatible server (every reply a
 * PROGRESS signal), times each model call from the client side, and reports the whole cycle of
 * an iteration (from one `iteration.started` to the next: the checkpoints, the store, the git
 * check, the report, the events) minus its model time, for the first and last hundred
 * iterations, next to the floor (see overheadFloor.ts) sampled once inside every iteration's
 * model call; plus the older window (`iteration.started` → `iteration.finished`), and heap and
 * RSS growth.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { parseConfig } from '../src/core/config/load';
import { EventBus } from '../src/core/events';
import { createModelClient } from '../src/core/llm/factory';
import type { ChatRequest, ChatResponse, ModelClient } from '../src/core/llm/types';
import { RalphRunner } from '../src/core/loop/run/runner';
import { RalphPaths } from '../src/core/paths';
import { NodeCommandRunner } from '../src/core/commands/processRunner';
import { TaskStore } from '../src/core/tasks/store';
import { startScriptedServer } from '../test/fixtures/scriptedServer';
import { FloorSampler } from './overheadFloor';

class TimedClient implements ModelClient {
  inModelMs = 0;
  /** Set at each iteration's start: its first model call first takes one floor sample (model time, so excluded). */
  floorDue = false;
  constructor(
    private readonly inner: ModelClient,
    private readonly floor?: FloorSampler,
  ) {}
  async chat(request: ChatRequest): Promise<ChatResponse> {
    const started = performance.now();
    try {
      if (this.floorDue && this.floor) {
        this.floorDue = false;
        await this.floor.sample();
      }
      return await this.inner.chat(request);
    } finally {
      this.inModelMs += performance.now() - started;
    }
  }
}

export interface LoopBenchResult {
  iterations: number;
  /** `iteration.started` → `iteration.finished`, model time excluded (the figure before the whole cycle was measured). */
  overheadMs: { first100Median: number; last100Median: number; p95: number };
  /** One `iteration.started` to the next, model time excluded: everything the orchestrator does per iteration. */
  cycleMs: { first100Median: number; last100Median: number; median: number; p95: number };
  /** git status + the iteration's fsync'd state writes, sampled alongside every iteration. */
  floorMs: { median: number; p95: number };
  /** Median of cycle / floor, iteration by iteration (each pair measured within the same few milliseconds). */
  ratioToFloor: { median: number; p90: number };
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

  const server = await startScriptedServer({
    loop: true,
    steps: [{ content: 'working <ralph>PROGRESS:10</ralph>', usage: { prompt_tokens: 900, completion_tokens: 20 } }],
  });
  const config = parseConfig({
    llm: { baseUrl: server.url, models: ['bench-model'], maxRetries: 0 },
    loop: { maxIterations: iterations, taskTimeoutMinutes: 600, maxParallel: 1 },
  });
  const paths = new RalphPaths(dir);
  const store = new TaskStore(paths);
  const task = await store.add({ title: 'bench', prompt: 'spin', promise: 'never', maxIterations: iterations });
  const floor = new FloorSampler(dir, paths.state(task.id), paths.tasks);
  const model = new TimedClient(createModelClient(config.llm, 'bench-key'), floor);
  const bus = new EventBus();
  const overheads: number[] = [];
  const cycles: number[] = [];
  const floors: number[] = [];
  let iterationStarted = 0;
  let modelAtStart = 0;
  let floorsAtStart = 0;
  bus.subscribe((event) => {
    if (event.type === 'iteration.started') {
      const now = performance.now();
      if (iterationStarted > 0) {
        cycles.push(now - iterationStarted - (model.inModelMs - modelAtStart));
        floors.push(floor.samples[floorsAtStart] ?? Number.NaN);
      }
      iterationStarted = now;
      modelAtStart = model.inModelMs;
      floorsAtStart = floor.samples.length;
      model.floorDue = true;
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
  await floor.dispose();
  await fs.rm(dir, { recursive: true, force: true });

  const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * q)] ?? 0;
  const median = (xs: number[]) => quantile(xs, 0.5);
  const paired = cycles.map((c, i) => ({ c, f: floors[i] })).filter((p) => Number.isFinite(p.f) && p.f > 0);
  const ratios = paired.map((p) => p.c / p.f);
  return {
    iterations: overheads.length,
    overheadMs: {
      first100Median: median(overheads.slice(0, 100)),
      last100Median: median(overheads.slice(-100)),
      p95: quantile(overheads, 0.95),
    },
    cycleMs: {
      first100Median: median(cycles.slice(0, 100)),
      last100Median: median(cycles.slice(-100)),
      median: median(cycles),
      p95: quantile(cycles, 0.95),
    },
    floorMs: {
      median: median(paired.map((p) => p.f)),
      p95: quantile(
        paired.map((p) => p.f),
        0.95,
      ),
    },
    ratioToFloor: { median: median(ratios), p90: quantile(ratios, 0.9) },
    heapGrowthMb: (after.heapUsed - before.heapUsed) / 2 ** 20,
    rssGrowthMb: (after.rss - before.rss) / 2 ** 20,
  };
}
