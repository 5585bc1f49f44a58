/**
 * The parallel figure of DESIGN §6: 8 independent tasks against the scripted server with a
 * fixed model latency per call, run with `loop.maxParallel` 1 and then 4 (agents in worktrees,
 * work through the merge queue) → the speed-up; and the queue's own cost per merge (from
 * `merging` to `merged`, the merged check's gate time excluded).
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseConfig } from '../src/core/config/load';
import { EventBus } from '../src/core/events';
import { createModelClient } from '../src/core/llm/factory';
import { RalphRunner } from '../src/core/loop/runner';
import { RalphPaths } from '../src/core/paths';
import { NodeCommandRunner } from '../src/core/commands/processRunner';
import { TaskStore } from '../src/core/tasks/store';
import { type Step, startScriptedServer } from '../test/fixtures/scriptedServer';

export interface ParallelBenchResult {
  tasks: number;
  latencyMs: number;
  sequentialMs: number;
  parallelMs: number;
  agents: number;
  speedup: number;
  queueMsPerMerge: { median: number; max: number };
}

const TASKS = 8;

/** Writes the file its task names, then completes; every answer after `latencyMs`. */
function agent(latencyMs: number): Step {
  return async (request) => {
    await new Promise((resolve) => setTimeout(resolve, latencyMs));
    const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
    const file = /WRITE (\S+)/.exec(typeof user?.content === 'string' ? user.content : '')?.[1] ?? 'x.txt';
    if ((request.body?.messages ?? []).at(-1)?.role === 'tool') return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'written', promiseEvidence: file } }] };
    return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }] };
  };
}

async function once(maxParallel: number, latencyMs: number): Promise<{ ms: number; queueMs: number[] }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-par-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'bench');
  git('config', 'user.email', 'bench@localhost');
  await fs.writeFile(path.join(dir, 'README.md'), '# bench\n');
  git('add', '-A');
  git('commit', '-qm', 'init');
  const server = await startScriptedServer({ loop: true, steps: [agent(latencyMs)], defaultUsage: { prompt_tokens: 900, completion_tokens: 20 } });
  const config = parseConfig({ llm: { baseUrl: server.url, models: ['bench-model'], maxRetries: 0 }, loop: { maxParallel, maxIterations: 3 } });
  const store = new TaskStore(new RalphPaths(dir));
  for (let i = 0; i < TASKS; i++) await store.add({ title: `task ${i}`, prompt: `WRITE f${i}.txt`, promise: `f${i}.txt exists` });
  const bus = new EventBus();
  const mergingAt = new Map<string, number>();
  const gateMs = new Map<string, number>();
  const queueMs: number[] = [];
  bus.subscribe((event) => {
    if (event.type === 'merge' && event.state === 'merging') mergingAt.set(event.taskId, performance.now());
    if (event.type === 'gate.finished' && event.iteration === undefined && event.taskId) gateMs.set(event.taskId, (gateMs.get(event.taskId) ?? 0) + event.durationMs);
    if (event.type === 'merge' && event.state === 'merged') queueMs.push(performance.now() - (mergingAt.get(event.taskId) ?? 0) - (gateMs.get(event.taskId) ?? 0));
  });
  const started = performance.now();
  const summary = await new RalphRunner({ workspace: dir, config, bus, model: createModelClient(config.llm, 'bench-key'), commands: new NodeCommandRunner(), store }).run();
  const ms = performance.now() - started;
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });
  const done = summary.results.filter((r) => r.status === 'done').length;
  if (done !== TASKS) throw new Error(`parallel bench: only ${done} of ${TASKS} tasks done with maxParallel ${maxParallel}`);
  return { ms, queueMs };
}

export async function benchParallel(latencyMs = Number(process.env.RALPH_BENCH_LATENCY_MS ?? 1000)): Promise<ParallelBenchResult> {
  const sequential = await once(1, latencyMs);
  const parallel = await once(4, latencyMs);
  const sorted = [...parallel.queueMs].sort((a, b) => a - b);
  return {
    tasks: TASKS,
    latencyMs,
    sequentialMs: sequential.ms,
    parallelMs: parallel.ms,
    agents: 4,
    speedup: sequential.ms / parallel.ms,
    queueMsPerMerge: { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 },
  };
}
