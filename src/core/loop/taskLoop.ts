import { buildIterationMessages } from '../agent/context';
import { runIteration } from '../agent/iteration';
import type { ToolRegistry } from '../agent/toolRegistry';
import type { ToolContext } from '../agent/tools/types';
import type { RalphConfig } from '../config/schema';
import { errorMessage } from '../errors';
import type { RalphEventBody } from '../events';
import type { GitService } from '../git/gitService';
import { addUsage, type ModelClient, ZERO_USAGE } from '../llm/types';
import type { RalphPaths } from '../paths';
import type { Clock, Logger } from '../ports';
import type { CommandRunner } from '../safety/processRunner';
import type { WorkspaceScope } from '../safety/workspaceScope';
import { decisiveSignal } from '../signals/parser';
import { formatSignal } from '../signals/types';
import type { Task, TaskStatus } from '../tasks/schema';
import type { TaskStore } from '../tasks/store';
import { readTextIfExists } from '../util/atomicWrite';
import { ensureProgressFile } from '../workspace';
import { type Checkpoint, type CheckpointStore, type IterationRecord, MAX_HISTORY } from './checkpoint';
import { decideCompletion } from './completionPolicy';

export interface TaskLoopServices {
  runId: string;
  paths: RalphPaths;
  config: RalphConfig;
  store: TaskStore;
  checkpoints: CheckpointStore;
  git: GitService;
  model: ModelClient;
  registry: ToolRegistry;
  commands: CommandRunner;
  scope: WorkspaceScope;
  clock: Clock;
  logger: Logger;
  emit(body: RalphEventBody): void;
}

export interface TaskRunResult {
  taskId: string;
  status: TaskStatus;
  reason: string;
  iterations: number;
}

/** Statuses from which running a task resumes it from its checkpoint rather than starting over. */
const RESUMABLE: ReadonlySet<TaskStatus> = new Set(['in_progress', 'halted']);

/**
 * The Ralph loop for one task: fresh context every iteration, a checkpoint at every boundary,
 * a commit for every iteration that changed files, and one completion policy deciding the end.
 */
export class TaskLoop {
  constructor(private readonly s: TaskLoopServices) {}

  async run(initial: Task, stop: AbortSignal): Promise<TaskRunResult> {
    const { s } = this;
    const maxIterations = initial.maxIterations ?? s.config.loop.maxIterations;
    const timeoutMs = s.config.loop.taskTimeoutMinutes * 60_000;
    const existing = await s.checkpoints.load(initial.id);
    const resumed = existing !== undefined && RESUMABLE.has(initial.status);
    let cp: Checkpoint = resumed ? { ...existing, runId: s.runId } : await this.freshCheckpoint(initial);
    let task = await this.setStatus(initial, 'in_progress', resumed ? 'resumed from checkpoint' : 'started');
    await ensureProgressFile(s.paths, task);

    s.emit({ type: 'task.started', taskId: task.id, title: task.title, iteration: nextIteration(cp), maxIterations, resumed });

    for (;;) {
      const n = nextIteration(cp);
      if (stop.aborted) return this.finish(task, cp, 'halted', 'stopped by the user; state saved');
      if (n > maxIterations) return this.finish(task, cp, 'timeout', `max iterations (${maxIterations}) reached`);
      if (cp.elapsedMs >= timeoutMs) return this.finish(task, cp, 'timeout', `task timeout (${s.config.loop.taskTimeoutMinutes} min) reached`);

      cp = { ...cp, iteration: n, phase: 'running', updatedAt: this.isoNow() };
      await this.saveCheckpoint(cp);
      task = await s.store.update(task.id, { iterations: n });
      const { record, timedOut } = await this.runOneIteration(task, cp, n, maxIterations, timeoutMs - cp.elapsedMs, stop);

      cp = {
        ...cp,
        phase: 'between',
        elapsedMs: cp.elapsedMs + record.durationMs,
        commits: cp.commits + (record.commit ? 1 : 0),
        consecutiveErrors: record.outcome === 'error' ? cp.consecutiveErrors + 1 : 0,
        usage: addUsage(cp.usage, record.usage),
        history: [...cp.history, record].slice(-MAX_HISTORY),
        updatedAt: this.isoNow(),
      };
      task = await s.store.update(task.id, { progress: record.progress ?? task.progress, lastSignal: record.signal ?? task.lastSignal });
      await this.saveCheckpoint(cp);
      s.emit({
        type: 'iteration.finished',
        taskId: task.id,
        iteration: n,
        outcome: record.outcome,
        signal: record.signal,
        durationMs: record.durationMs,
        commit: record.commit,
        usage: record.usage,
        error: record.error,
      });

      switch (record.outcome) {
        case 'complete':
          return this.finish(task, cp, 'done', record.feedback[0] ?? 'completed');
        case 'blocked':
          return this.finish(task, cp, 'blocked', record.feedback[0] ?? 'blocked');
        case 'needs_help':
          return this.finish(task, cp, 'needs_help', record.feedback[0] ?? 'needs help');
        case 'stopped':
          return this.finish(task, cp, 'halted', 'stopped by the user; state saved');
        default:
          break;
      }
      if (timedOut || cp.elapsedMs >= timeoutMs) {
        return this.finish(task, cp, 'timeout', `task timeout (${s.config.loop.taskTimeoutMinutes} min) reached`);
      }
      if (cp.consecutiveErrors >= s.config.safeguards.errorThreshold) {
        return this.finish(task, cp, 'failed', `${cp.consecutiveErrors} consecutive iterations failed; last error: ${record.error ?? 'unknown'}`);
      }
    }
  }

  private async runOneIteration(
    task: Task,
    cp: Checkpoint,
    n: number,
    maxIterations: number,
    remainingMs: number,
    stop: AbortSignal,
  ): Promise<{ record: IterationRecord; timedOut: boolean }> {
    const { s } = this;
    const model = s.config.llm.models[0];
    const startedAt = s.clock.now();
    s.emit({ type: 'iteration.started', taskId: task.id, iteration: n, maxIterations, model });

    const timeout = AbortSignal.timeout(Math.max(1, remainingMs));
    const signal = AbortSignal.any([stop, timeout]);
    const progressNotes = (await readTextIfExists(s.paths.progress(task.id))) ?? '';
    const recentCommits = await s.git.log(5).catch(() => []);
    const messages = buildIterationMessages({
      task,
      iteration: n,
      maxIterations,
      progressFile: s.paths.relative(s.paths.progress(task.id)),
      progressNotes,
      previous: cp.history.at(-1),
      recentCommits,
    });
    const toolContext: ToolContext = {
      scope: s.scope,
      commands: s.commands,
      commit: (message) => s.git.commitAll(message),
      commandTimeoutMs: s.config.commands.timeoutMs,
      maxOutputChars: s.config.commands.maxOutputChars,
      signal,
    };
    const run = await runIteration(messages, {
      model: s.model,
      modelName: model,
      temperature: s.config.llm.temperature,
      registry: s.registry,
      toolContext,
      maxSteps: s.config.llm.maxStepsPerIteration,
      taskId: task.id,
      iteration: n,
      signal,
      emit: s.emit,
    });

    const commit = await this.commitIteration(task, n);
    const signalGiven = decisiveSignal(run.signals);
    const feedback: string[] = [];
    if (run.stepLimitHit) feedback.push(`The previous iteration hit the step limit (${s.config.llm.maxStepsPerIteration} model calls) before finishing; work in smaller steps and keep notes.`);
    if (run.toolErrors > 0) feedback.push(`${run.toolErrors} of ${run.toolCalls} tool calls failed in the previous iteration.`);

    const base = {
      iteration: n,
      startedAt: new Date(startedAt).toISOString(),
      durationMs: Math.max(0, s.clock.now() - startedAt),
      model,
      signal: signalGiven ? formatSignal(signalGiven) : undefined,
      progress: lastProgress(run.signals),
      commit: commit?.sha,
      filesChanged: commit?.files ?? [],
      error: run.error,
      summary: run.finalText ? abbreviate(run.finalText, 600) : undefined,
      usage: run.usage,
    };
    if (run.stopped) {
      if (stop.aborted) return { record: { ...base, outcome: 'stopped', feedback }, timedOut: false };
      const error = 'the task timeout was reached during the iteration';
      return { record: { ...base, outcome: 'error', error, feedback }, timedOut: true };
    }
    const decision = decideCompletion({ signal: signalGiven, errored: run.error !== undefined });
    if (decision.kind === 'finish') {
      const outcome = decision.status === 'done' ? 'complete' : decision.status;
      const progress = decision.status === 'done' ? 100 : base.progress;
      return { record: { ...base, outcome, progress, feedback: [decision.reason, ...feedback] }, timedOut: false };
    }
    const outcome = run.error ? 'error' : 'continue';
    return { record: { ...base, outcome, feedback: [...decision.feedback, ...feedback] }, timedOut: false };
  }

  private async commitIteration(task: Task, n: number): Promise<{ sha: string; files: string[] } | undefined> {
    const { s } = this;
    if (!s.config.loop.commitEachIteration) return undefined;
    try {
      const message = `ralph(${task.id}): iteration ${n}`;
      const commit = await s.git.commitAll(message);
      if (commit) s.emit({ type: 'git.commit', taskId: task.id, iteration: n, sha: commit.sha, message, files: commit.files });
      return commit;
    } catch (error) {
      s.emit({ type: 'warning', taskId: task.id, code: 'commit-failed', message: `could not commit iteration ${n}: ${errorMessage(error)}` });
      return undefined;
    }
  }

  private async finish(task: Task, cp: Checkpoint, status: TaskStatus, reason: string): Promise<TaskRunResult> {
    const { s } = this;
    await this.saveCheckpoint({ ...cp, phase: cp.phase, updatedAt: this.isoNow() });
    const blockedReason = status === 'blocked' || status === 'needs_help' ? reason : undefined;
    const updated = await this.setStatus(task, status, reason, blockedReason);
    s.emit({ type: 'task.finished', taskId: task.id, status, iterations: updated.iterations, reason });
    return { taskId: task.id, status, reason, iterations: updated.iterations };
  }

  private async setStatus(task: Task, to: TaskStatus, reason: string, blockedReason?: string): Promise<Task> {
    const updated = await this.s.store.update(task.id, { status: to, blockedReason });
    if (task.status !== to) this.s.emit({ type: 'task.status', taskId: task.id, from: task.status, to, reason });
    return updated;
  }

  private async freshCheckpoint(task: Task): Promise<Checkpoint> {
    return {
      version: 1,
      taskId: task.id,
      runId: this.s.runId,
      iteration: 0,
      phase: 'between',
      elapsedMs: 0,
      baseCommit: await this.s.git.headSha().catch(() => undefined),
      commits: 0,
      consecutiveErrors: 0,
      usage: ZERO_USAGE,
      history: [],
      updatedAt: this.isoNow(),
    };
  }

  private async saveCheckpoint(cp: Checkpoint): Promise<void> {
    const file = await this.s.checkpoints.save(cp);
    this.s.emit({ type: 'checkpoint', taskId: cp.taskId, iteration: cp.iteration, file: this.s.paths.relative(file) });
  }

  private isoNow(): string {
    return new Date(this.s.clock.now()).toISOString();
  }
}

/** A checkpoint taken mid-iteration resumes that same iteration; one between iterations, the next. */
export function nextIteration(cp: Checkpoint): number {
  return cp.phase === 'running' ? cp.iteration : cp.iteration + 1;
}

function lastProgress(signals: readonly { kind: string; percent?: number }[]): number | undefined {
  const progress = [...signals].reverse().find((s) => s.kind === 'PROGRESS');
  return progress?.percent;
}

function abbreviate(text: string, max: number): string {
  const flat = text.trim();
  return flat.length <= max ? flat : `${flat.slice(0, max)}…`;
}
