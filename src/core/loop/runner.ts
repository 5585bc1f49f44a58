import { randomBytes } from 'node:crypto';
import { ToolRegistry } from '../agent/toolRegistry';
import { createDelegationTools, Delegator } from '../agent/delegation';
import { CORE_TOOLS } from '../agent/tools';
import type { RalphConfig } from '../config/schema';
import { errorMessage, RalphError, TaskNotFoundError } from '../errors';
import { type EventBus, EventEmitter, type RalphEventBody } from '../events';
import { ProcessGateRunner } from '../gates/runGates';
import type { GateRunner } from '../gates/types';
import { GitService } from '../git/gitService';
import type { ModelClient, RetryNotice } from '../llm/types';
import { RalphPaths } from '../paths';
import { type ApprovalPrompt, type Clock, type Logger, refuseApprovals, type SafeguardPrompt, silentLogger, systemClock, unattendedSafeguards } from '../ports';
import { MeteredModelClient, SpendMeter } from '../safety/budget';
import { PolicyCommandRunner } from '../safety/policyCommandRunner';
import type { CommandRunner } from '../safety/processRunner';
import { WorkspaceScope } from '../safety/workspaceScope';
import type { TaskStatus } from '../tasks/schema';
import { type DependencyBlock, dependencyBlocks, pendingDependencies, selectNextTask } from '../tasks/select';
import { TaskStore } from '../tasks/store';
import { ensureRalphDir } from '../workspace';
import { CheckpointStore } from './checkpoint';
import { PauseGate } from './pauseGate';
import { RunLog } from './runLog';
import { RunLock } from './runLock';
import { TaskLoop } from './taskLoop';
import type { TaskRunResult } from './types';

export interface RunnerDeps {
  workspace: string;
  config: RalphConfig;
  model: ModelClient;
  commands: CommandRunner;
  /** Runs the quality gates; defaults to child processes (the CLI), the extension passes the Tasks API. */
  gates?: GateRunner;
  bus: EventBus;
  /** Share the caller's store so its change listeners (the tree) see every write at once. */
  store?: TaskStore;
  clock?: Clock;
  logger?: Logger;
  /** Asked before every caio action and every gated command (push, pull request, semi-auto…); default: refuse. */
  approval?: ApprovalPrompt;
  /** Answers safeguard warnings; default: unattended (`safeguards.onWarning`, repeated errors stop). */
  safeguards?: SafeguardPrompt;
}

export interface RunOptions {
  /** Run this one task (resuming it when interrupted or halted); otherwise autopilot over ready tasks. */
  taskId?: string;
  /** Take over a run lock whose holder is not a live Ralph run on this host (`ralph run --force`). */
  forceLock?: boolean;
}

export interface RunSummary {
  runId: string;
  results: TaskRunResult[];
  reason: string;
  logFile: string;
  /** Todo tasks an autopilot run left because their `dependsOn` can never be met (cycle, itself, a missing id). */
  unrunnable: DependencyBlock[];
}

/** Statuses a task can be explicitly (re)started from. */
const STARTABLE: ReadonlySet<TaskStatus> = new Set(['todo', 'in_progress', 'halted']);

/**
 * One run of the loop over a workspace: holds the run lock, runs a task or the autopilot
 * (ready tasks one after another until none is ready), logs every event, and stops cleanly.
 */
export class RalphRunner {
  private readonly abort = new AbortController();
  private readonly pauseGate = new PauseGate();
  private active = false;
  private emitActive: ((body: RalphEventBody) => void) | undefined;
  private ownStore: TaskStore | undefined;
  readonly paths: RalphPaths;

  constructor(private readonly deps: RunnerDeps) {
    this.paths = new RalphPaths(deps.workspace);
  }

  get running(): boolean {
    return this.active;
  }

  /** Ends the current iteration cleanly (the model call and commands are aborted) and saves state. */
  stop(): void {
    this.abort.abort();
  }

  get paused(): boolean {
    return this.pauseGate.isPaused;
  }

  /** Finishes the current step, then waits until `resume()` (or `stop()`). */
  pause(): void {
    if (this.pauseGate.pause()) this.emitActive?.({ type: 'run.paused' });
  }

  resume(): void {
    if (this.pauseGate.resume()) this.emitActive?.({ type: 'run.resumed' });
  }

  /** The model client's retry notices, as `model.retry` events of the current run. */
  reportRetry(notice: RetryNotice): void {
    this.emitActive?.({ type: 'model.retry', ...notice });
  }

  async run(options: RunOptions = {}): Promise<RunSummary> {
    if (this.active) throw new RalphError('this runner is already running', 'busy');
    this.active = true;
    const runId = newRunId(this.deps.clock ?? systemClock);
    const log = new RunLog(this.paths.runLog(runId));
    const emitter = new EventEmitter(runId, this.deps.bus, (this.deps.clock ?? systemClock).now);
    const subscription = this.deps.bus.subscribe((event) => {
      if (event.runId === runId) log.append(event);
    });
    const emit = (body: RalphEventBody) => void emitter.emit(body);
    this.emitActive = emit;
    let lock: RunLock | undefined;
    const results: TaskRunResult[] = [];
    let reason = 'no ready tasks';
    let unrunnable: DependencyBlock[] = [];
    try {
      await ensureRalphDir(this.paths);
      lock = await RunLock.acquire(this.paths, runId, {
        force: options.forceLock,
        onTakeover: (message) => emit({ type: 'warning', code: 'run-lock-taken-over', message }),
      });
      const loop = await this.buildLoop(runId, emit);
      const store = this.store();
      const first = options.taskId ? await this.startableTask(store, options.taskId) : undefined;
      emit({ type: 'run.started', workspace: this.deps.workspace, taskIds: first ? [first.id] : [] });

      const attempted = new Set<string>();
      let next = first ?? selectNextTask(await store.list(), attempted);
      while (next) {
        attempted.add(next.id);
        const result = await loop.run(next, this.abort.signal);
        results.push(result);
        if (this.abort.signal.aborted) {
          reason = 'stopped by the user';
          break;
        }
        if (options.taskId) {
          reason = `task ${next.id} ended ${result.status}`;
          break;
        }
        next = selectNextTask(await store.list(), attempted);
        reason = next ? reason : 'no more ready tasks';
      }
      if (options.taskId === undefined) {
        const blocks = [...dependencyBlocks(await store.list()).values()];
        unrunnable = blocks.filter((b) => b.kind === 'invalid');
        for (const block of unrunnable) emit({ type: 'warning', taskId: block.taskId, code: 'dependency-invalid', message: `${block.taskId} can never start: ${block.message}` });
        if (results.length === 0) reason = blocks.length > 0 ? `no ready tasks: ${blocks.map((b) => b.message).join('; ')}` : 'no ready tasks';
      }
    } catch (error) {
      reason = errorMessage(error);
      emit({ type: 'error', message: reason });
      throw error;
    } finally {
      emit({ type: 'run.finished', results: results.map((r) => ({ taskId: r.taskId, status: r.status })), reason });
      subscription.dispose();
      await log.close();
      await lock?.release();
      this.emitActive = undefined;
      this.active = false;
    }
    return { runId, results, reason, logFile: log.file, unrunnable };
  }

  private store(): TaskStore {
    return this.deps.store ?? (this.ownStore ??= new TaskStore(this.paths, this.deps.clock));
  }

  private async startableTask(store: TaskStore, taskId: string) {
    const tasks = await store.list();
    const task = tasks.find((t) => t.id === taskId);
    if (!task) throw new TaskNotFoundError(taskId);
    if (!STARTABLE.has(task.status)) {
      throw new RalphError(`task ${taskId} is ${task.status}; only todo, in_progress or halted tasks can be run (retry it first)`, 'not-startable');
    }
    const pending = pendingDependencies(task, tasks);
    if (pending.length > 0) {
      const block = dependencyBlocks(tasks).get(taskId);
      const why = block?.kind === 'invalid' ? `it can never start: ${block.message}; fix its dependsOn in .ralph/tasks.json` : `it waits for ${pending.join(', ')} to be done`;
      throw new RalphError(`task ${taskId} cannot run: ${why}`, 'dependencies-pending');
    }
    return task;
  }

  private async buildLoop(runId: string, emit: (body: RalphEventBody) => void): Promise<TaskLoop> {
    const { deps, paths } = this;
    const git = new GitService(deps.workspace);
    if (!(await git.isRepo())) {
      throw new RalphError(`${deps.workspace} is not a git repository; run \`git init\` (or \`ralph init\`) first`, 'not-a-repo');
    }
    const meter = new SpendMeter(deps.config);
    const model = new MeteredModelClient(deps.model, meter);
    const approval = deps.approval ?? refuseApprovals;
    return new TaskLoop({
      runId,
      paths,
      config: deps.config,
      store: this.store(),
      checkpoints: new CheckpointStore(paths),
      git,
      model,
      meter,
      safeguards: deps.safeguards ?? unattendedSafeguards(deps.config.safeguards.onWarning),
      registry: new ToolRegistry([...CORE_TOOLS, ...createDelegationTools(new Delegator({ config: deps.config, model, approval }))]),
      commands: new PolicyCommandRunner(deps.commands, deps.config, approval, emit),
      gates: deps.gates ?? new ProcessGateRunner(deps.commands),
      scope: new WorkspaceScope(deps.workspace),
      clock: deps.clock ?? systemClock,
      logger: deps.logger ?? silentLogger,
      emit,
      pause: this.pauseGate,
    });
  }
}

function newRunId(clock: Clock): string {
  const stamp = new Date(clock.now()).toISOString().replace(/[-:]/g, '').replace(/\..*$/, '');
  return `${stamp}-${randomBytes(3).toString('hex')}`;
}
