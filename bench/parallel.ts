/**
 * The parallel figure of DESIGN §6: 8 independent tasks against the scripted server with a
 * fixed model latency per call (400 ms and 1 s), run with `loop.maxParallel` 1 and then 4
 * (agents in worktrees, work through the merge queue) → the speed-up; each task's agent runs the
 * project's suite (`npm test`, six node:test files) before COMPLETE, which is also its required
 * gate (issue 37): each run says how many times the suite ran per task, the machine's CPU-seconds
 * per task and its wall time over its CPU floor. And the queue's own cost per merge (from
 * `merging` to `merged`, the merged check's gate time excluded), before and after merge-tree.
 */
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseConfig } from '../src/core/config/load';
import { EventBus } from '../src/core/events';
import { useMergeTree } from '../src/core/git/mergeTree';
import { createModelClient } from '../src/core/llm/factory';
import { RalphRunner } from '../src/core/loop/run/runner';
import { RalphPaths } from '../src/core/paths';
import { type CommandRequest, type CommandResult, NodeCommandRunner } from '../src/core/commands/processRunner';
import { TaskStore } from '../src/core/tasks/store';
import { floorRatio, machineCpu } from './machineCpu';
import { type AgentKind, startModelProcess } from './modelProcess';
import { SUITE_COMMAND, SUITE_FILES, SUITE_GATE } from './suite';

export interface ParallelBenchResult {
  tasks: number;
  agents: number;
  /** The suite's command the tasks run (gate and agents); undefined: the bare queue. */
  suite: string | undefined;
  figures: ParallelFigures[];
  /** merging → merged, the merged check's gate time excluded: merge-tree and the chain (after) against worktree merges one at a time (before). */
  queueMsPerMerge: { after: { median: number; max: number }; before: { median: number; max: number } };
  /**
   * At the first latency, one more pair side by side: maxParallel 1 against 4 agents with
   * `merge.batchSize` 4 (one merged check covers up to four tasks, the landed commits inside a
   * batch unchecked alone); undefined without the suite.
   */
  batched?: {
    batchSize: number;
    latencyMs: number;
    sequentialMs: number;
    parallelMs: number;
    speedup: number;
    cost: RunCost;
    /** The same with `merge.concurrency` 1: one check at a time, the tasks waiting meanwhile one batch. */
    oneCheck: { parallelMs: number; speedup: number; cost: RunCost };
  };
}

const TASKS = 8;

export interface RunOptions {
  tasks?: number;
  maxParallel: number;
  latencyMs: number;
  /** Gates of the run (none: the bare queue). */
  gates?: unknown[];
  merge?: Record<string, unknown>;
  /** Files committed before the run (a test suite the gates run). */
  files?: Record<string, string>;
  /** Merges built in the merge worktree (the queue before merge-tree) instead of as objects. */
  worktreeMerges?: boolean;
  /** The test suite's command: each task's agent runs it before COMPLETE (`run_command`), and its runs are counted. */
  suite?: string;
  /** More of the `loop` section (maxParallel and maxIterations 3 are the bench's). */
  loop?: Record<string, unknown>;
  /** The scripted agent: one iteration and COMPLETE (default), or work in every iteration, COMPLETE in the last. */
  agent?: AgentKind;
  /** Task i's prompt (default: `WRITE f<i>.txt`, and `RUN <suite>` with a suite). */
  prompt?: (i: number) => string;
}

/** What one run of the bench measured. */
export interface OnceResult {
  ms: number;
  queueMs: number[];
  tailMs: number;
  startMs: number;
  /** Runs of the suite's command (the agents', the gates', the base runs, the merged checks), started for real. */
  suiteRuns: number;
  /** Runs of a part of the suite (the command with `--` and test files: affected tests, issue 34). */
  partRuns: number;
  /** The machine's CPU-seconds over the run (/proc/stat). */
  cpuSeconds: number;
}

/** Every command the run starts goes through here: the suite's runs are counted (its environment is the runner's, so the gate cache is unchanged). */
class CountingCommands extends NodeCommandRunner {
  runs = 0;
  parts = 0;
  constructor(private readonly suite: string | undefined) {
    super();
  }
  override run(req: CommandRequest): Promise<CommandResult> {
    if (this.suite !== undefined && req.command.trim() === this.suite) this.runs++;
    if (this.suite !== undefined && req.command.startsWith(`${this.suite} -- `)) this.parts++;
    return super.run(req);
  }
}

export async function once(maxParallel: number, latencyMs: number, options: Partial<RunOptions> = {}): Promise<OnceResult> {
  const tasks = options.tasks ?? TASKS;
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-bench-par-'));
  const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', 'bench');
  git('config', 'user.email', 'bench@localhost');
  await fs.writeFile(path.join(dir, 'README.md'), '# bench\n');
  for (const [rel, content] of Object.entries(options.files ?? {})) {
    await fs.mkdir(path.dirname(path.join(dir, rel)), { recursive: true });
    await fs.writeFile(path.join(dir, rel), content);
  }
  git('add', '-A');
  git('commit', '-qm', 'init');
  const server = await startModelProcess(latencyMs, options.agent);
  const config = parseConfig({
    llm: { baseUrl: server.url, models: ['bench-model'], maxRetries: 0 },
    loop: { ...options.loop, maxParallel, maxIterations: 3 },
    ...(options.gates ? { gates: options.gates } : {}),
    ...(options.merge ? { merge: options.merge } : {}),
  });
  useMergeTree(dir, options.worktreeMerges ? false : undefined);
  const store = new TaskStore(new RalphPaths(dir));
  const run = options.suite ? `\nRUN ${options.suite}` : '';
  for (let i = 0; i < tasks; i++)
    await store.add({
      title: `task ${i}`,
      prompt: options.prompt?.(i) ?? `WRITE f${i}.txt${run}`,
      promise: options.prompt ? `task ${i}'s module is written` : `f${i}.txt exists`,
    });
  const bus = new EventBus();
  const mergingAt = new Map<string, number>();
  const builtIn = new Map<string, number>();
  const greenAt = new Map<string, number>();
  let lastMerged = 0;
  const queueMs: number[] = [];
  const t0 = performance.now();
  let lastQueued = t0;
  /** Tasks whose last merge event was provisional (checked ahead of their own gates). */
  const ahead = new Set<string>();
  let firstIteration: number | undefined;
  bus.subscribe((event) => {
    if (event.type === 'iteration.started') firstIteration ??= performance.now();
    // RALPH_BENCH_TIMELINE=1: when each task's steps happened (to stderr), to see where a run's time goes;
    // `epoch`: in seconds since 1970, to lay beside git's own trace (GIT_TRACE2_EVENT)
    if (
      process.env.RALPH_BENCH_TIMELINE &&
      (event.type === 'merge' ||
        event.type.startsWith('task.') ||
        event.type.startsWith('gate.') ||
        event.type.startsWith('iteration.') ||
        event.type.startsWith('model.') ||
        event.type === 'worktree')
    ) {
      process.stderr.write(
        `${process.env.RALPH_BENCH_TIMELINE === 'epoch' ? (Date.now() / 1000).toFixed(3) : ((performance.now() - t0) / 1000).toFixed(2)} ${event.type} ${'taskId' in event ? event.taskId : ''} ${'state' in event ? event.state : ''} ${'iteration' in event ? event.iteration : ''}\n`,
      );
    }
    const now = performance.now();
    if (event.type !== 'merge') return;
    // a task's work is in the queue for good once its loop accepted COMPLETE: queued after its gates,
    // or (merge.checkAhead) its first event no longer provisional
    if (!event.provisional && (event.state === 'queued' || (ahead.has(event.taskId) && event.state !== 'failed'))) lastQueued = now;
    if (event.provisional) ahead.add(event.taskId);
    else ahead.delete(event.taskId);
    if (event.state === 'merging') mergingAt.set(event.taskId, now);
    if (event.state === 'checking' && !event.chain?.passed && !builtIn.has(event.taskId))
      builtIn.set(event.taskId, now - (mergingAt.get(event.taskId) ?? now));
    if (event.state === 'checking' && event.chain?.passed) greenAt.set(event.taskId, now);
    if (event.state === 'merged') {
      // the queue's own work for this task: building its merge, and landing it once it could land
      // (its prefix green and the task ahead landed) — the merged check and the wait in line excluded
      const couldLand = Math.max(greenAt.get(event.taskId) ?? 0, lastMerged);
      queueMs.push((builtIn.get(event.taskId) ?? 0) + (now - couldLand));
      lastMerged = now;
      builtIn.delete(event.taskId);
    }
    if (event.state === 'queued' || event.state === 'merging') builtIn.delete(event.taskId);
  });
  const commands = new CountingCommands(options.suite);
  const cpu = machineCpu();
  const started = performance.now();
  const summary = await new RalphRunner({
    workspace: dir,
    config,
    bus,
    model: createModelClient(config.llm, 'bench-key'),
    commands,
    store,
  }).run();
  const ended = performance.now();
  const cpuSeconds = cpu.stop();
  const ms = ended - started;
  await server.close();
  await fs.rm(dir, { recursive: true, force: true });
  const done = summary.results.filter((r) => r.status === 'done').length;
  useMergeTree(dir, undefined);
  if (done !== tasks) {
    const others = summary.results.filter((r) => r.status !== 'done').map((r) => `${r.taskId} ${r.status}: ${r.reason}`);
    throw new Error(`parallel bench: only ${done} of ${tasks} tasks done with maxParallel ${maxParallel} (${others.join('; ')})`);
  }
  // the run's tail: from the last task's loop accepting COMPLETE to the run's end (the queue alone)
  return {
    ms,
    queueMs,
    tailMs: ended - lastQueued,
    startMs: (firstIteration ?? started) - started,
    suiteRuns: commands.runs,
    partRuns: commands.parts,
    cpuSeconds,
  };
}

export interface ParallelFigures {
  latencyMs: number;
  /** The round whose speed-up is the median of the rounds: its two runs. */
  sequentialMs: number;
  parallelMs: number;
  /** The median of the rounds' speed-ups (each round: one run with 1 agent, then one with 4). */
  speedup: number;
  /** The smallest and the largest of the rounds' speed-ups: how noisy the machine was. */
  speedupRange: [number, number];
  rounds: number;
  /** What the median round's two runs cost (suite runs, CPU, floor). */
  sequentialCost: RunCost;
  parallelCost: RunCost;
  /**
   * The ceiling of this shape of run: the speed-up 4 agents would reach at no cost of their own
   * (no worktree, no merge, no contention), each wave as long as one task of the run one at a
   * time — (start + 8 tasks) / (start + 2 tasks), from the one-at-a-time run's start (to its first
   * iteration) and its time per task; the median of the rounds'.
   */
  ceiling: number;
}

/** What a run cost: the suite's runs and the machine's CPU-seconds per task, and its wall time over its CPU floor. */
export interface RunCost {
  suiteRunsPerTask: number;
  cpuSecondsPerTask: number;
  /** Wall time / (CPU-seconds / cores): 1 is a run that kept every core busy from start to end. */
  floorRatio: number;
}

export function costOf(run: OnceResult, tasks: number): RunCost {
  return {
    suiteRunsPerTask: run.suiteRuns / tasks,
    cpuSecondsPerTask: run.cpuSeconds / tasks,
    floorRatio: floorRatio(run.ms, run.cpuSeconds),
  };
}

/** The project every parallel run works on: the six-file suite by `npm test` (gate, and each agent's own run); `RALPH_BENCH_SUITE=off` for the bare queue of before. */
export function benchProject(): Partial<RunOptions> {
  return process.env.RALPH_BENCH_SUITE === 'off' ? {} : { files: SUITE_FILES, gates: [SUITE_GATE], suite: SUITE_COMMAND };
}

/**
 * The speed-up at each model latency (4 agents against 1, side by side, in `RALPH_BENCH_ROUNDS`
 * paired rounds — default 3 — of which the median is the figure: one pair alone moved by a
 * quarter on this shared machine), each run on the project with its suite (`benchProject`), with
 * what the median round's runs cost; and the queue's own cost per merge with 4 agents at the
 * first latency: merges built as objects (`merge-tree`, now) against merges built in the merge
 * worktree (the queue before it), side by side.
 */
export async function benchParallel(
  latencies = (process.env.RALPH_BENCH_LATENCY_MS ?? '400,1000').split(',').map(Number),
  rounds = Math.max(1, Number(process.env.RALPH_BENCH_ROUNDS ?? 3)),
): Promise<ParallelBenchResult> {
  const figures: ParallelFigures[] = [];
  const project = benchProject();
  let after: number[] = [];
  for (const latencyMs of latencies) {
    const pairs: (Omit<ParallelFigures, 'latencyMs' | 'speedupRange' | 'rounds'> & { speedup: number })[] = [];
    for (let round = 0; round < rounds; round++) {
      const sequential = await once(1, latencyMs, project);
      const parallel = await once(4, latencyMs, project);
      if (after.length === 0) after = parallel.queueMs;
      const perTask = (sequential.ms - sequential.startMs) / TASKS;
      const ceiling = sequential.ms / (sequential.startMs + perTask * Math.ceil(TASKS / 4));
      pairs.push({
        sequentialMs: sequential.ms,
        parallelMs: parallel.ms,
        speedup: sequential.ms / parallel.ms,
        ceiling,
        sequentialCost: costOf(sequential, TASKS),
        parallelCost: costOf(parallel, TASKS),
      });
    }
    const bySpeedup = [...pairs].sort((a, b) => a.speedup - b.speedup);
    const median = bySpeedup[Math.floor((bySpeedup.length - 1) / 2)];
    const ceilings = pairs.map((p) => p.ceiling).sort((a, b) => a - b);
    figures.push({
      ...median,
      latencyMs,
      speedupRange: [bySpeedup[0].speedup, bySpeedup[bySpeedup.length - 1].speedup],
      rounds,
      ceiling: ceilings[Math.floor((ceilings.length - 1) / 2)],
    });
  }
  const before = (await once(4, latencies[0], { worktreeMerges: true, merge: { concurrency: 1 } })).queueMs;
  return {
    tasks: TASKS,
    agents: 4,
    suite: project.suite,
    figures,
    queueMsPerMerge: { after: spread(after), before: spread(before) },
    ...(project.suite ? { batched: await batchedPair(project, latencies[0]) } : {}),
  };
}

/**
 * maxParallel 1, then 4 agents whose merged checks each cover up to 4 tasks (`merge.batchSize`),
 * then the same with one check at a time (`merge.concurrency` 1: the tasks that wait meanwhile
 * form the batches), side by side.
 */
async function batchedPair(project: Partial<RunOptions>, latencyMs: number): Promise<NonNullable<ParallelBenchResult['batched']>> {
  const batchSize = 4;
  const sequential = await once(1, latencyMs, project);
  const parallel = await once(4, latencyMs, { ...project, merge: { batchSize } });
  const oneCheck = await once(4, latencyMs, { ...project, merge: { batchSize, concurrency: 1 } });
  return {
    batchSize,
    latencyMs,
    sequentialMs: sequential.ms,
    parallelMs: parallel.ms,
    speedup: sequential.ms / parallel.ms,
    cost: costOf(parallel, TASKS),
    oneCheck: { parallelMs: oneCheck.ms, speedup: sequential.ms / oneCheck.ms, cost: costOf(oneCheck, TASKS) },
  };
}

function spread(values: number[]): { median: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { median: sorted[Math.floor(sorted.length / 2)] ?? 0, max: sorted.at(-1) ?? 0 };
}
