/**
 * Feeds the panel model: every bus event, the task store's changes (so the cards follow Retry,
 * Unblock… at once), the final reports' text, and — once, when the panel first needs it — the
 * tasks and checkpoints on disk, so a panel opened after a window reload or a CLI run shows the
 * past iterations. No `vscode` import.
 */
import * as path from 'node:path';
import type { RalphConfig } from '../../core/config/schema';
import type { EventBus, RalphEvent } from '../../core/events';
import { estimateCostUsd } from '../../core/llm/pricing';
import type { Checkpoint, CheckpointStore } from '../../core/record/checkpoint';
import type { RalphPaths } from '../../core/paths';
import type { Task } from '../../core/tasks/schema';
import type { TaskStore } from '../../core/tasks/store';
import { readTextIfExists } from '../../core/util/atomicWrite';
import type { CheckpointSeed, TaskSeed } from '../../protocol/panelInput';
import { LIMITS } from '../../protocol/panelState';
import { clip } from '../../protocol/taskUpdates';
import { currentRemote } from '../../protocol/remoteLook';
import type { PanelModel } from './panelModel';
import { proofLine } from '../../core/gates/proof';

export interface PanelFeederDeps {
  model: PanelModel;
  bus: EventBus;
  store: TaskStore;
  checkpoints: CheckpointStore;
  paths: RalphPaths;
  prices: () => RalphConfig['llm']['prices'];
  /** The run's `llm.provider` (default "openai"): editor models are priced only by `llm.prices`. */
  provider?: () => RalphConfig['llm']['provider'];
  now?: () => number;
}

export class PanelFeeder {
  private readonly subscriptions: { dispose(): void }[] = [];
  private loaded: Promise<void> | undefined;

  constructor(private readonly deps: PanelFeederDeps) {
    this.subscriptions.push(deps.bus.subscribe((event) => this.onEvent(event)));
    this.subscriptions.push(deps.store.onDidChange((tasks) => this.syncTasks(tasks, false)));
  }

  /** Once per session: adopt the tasks that ran (checkpoint or iterations) with their history and final report. */
  loadFromDisk(): Promise<void> {
    this.loaded ??= this.adopt().catch(() => undefined);
    return this.loaded;
  }

  dispose(): void {
    for (const s of this.subscriptions.splice(0)) s.dispose();
  }

  private onEvent(event: RalphEvent): void {
    this.deps.model.ingest(event);
    if (event.type === 'report.written' && event.final) void this.readReport(event.taskId, event.file);
  }

  private syncTasks(tasks: readonly Task[], adopt: boolean, checkpoints?: Map<string, Checkpoint>): void {
    const seeds = tasks.map((task) => taskSeed(task, checkpoints?.get(task.id), this.deps.prices(), this.deps.provider?.()));
    this.deps.model.apply({ type: 'panel.sync', time: this.isoNow(), tasks: seeds, adopt });
    // a task just held for review: its checked result (target, merged check) is in its checkpoint
    if (!checkpoints)
      void this.syncReviews(
        tasks.filter((t) => t.status === 'review' && !this.deps.model.state.tasks.find((v) => v.id === t.id)?.reviewHold),
      );
  }

  private async syncReviews(tasks: readonly Task[]): Promise<void> {
    if (tasks.length === 0) return;
    const found = new Map<string, Checkpoint>();
    for (const task of tasks) {
      const cp = await this.deps.checkpoints.load(task.id).catch(() => undefined);
      if (cp?.review) found.set(task.id, cp);
    }
    if (found.size > 0)
      this.syncTasks(
        tasks.filter((t) => found.has(t.id)),
        false,
        found,
      );
  }

  private async adopt(): Promise<void> {
    const { store, checkpoints, paths } = this.deps;
    if (!(await store.exists())) return;
    const tasks = await store.list();
    const found = new Map<string, Checkpoint>();
    for (const task of tasks) {
      if (task.status === 'todo' && task.iterations === 0) continue;
      const cp = await checkpoints.load(task.id);
      if (cp) found.set(task.id, cp);
    }
    const ran = tasks
      .filter((t) => found.has(t.id) || t.iterations > 0 || currentRemote(t.status, t.remote) !== undefined)
      .sort((a, b) => (found.get(a.id)?.updatedAt ?? a.updatedAt).localeCompare(found.get(b.id)?.updatedAt ?? b.updatedAt))
      .slice(-LIMITS.tasks);
    if (ran.length === 0) return;
    this.syncTasks(ran, true, found);
    for (const task of ran) {
      const final = path.join(paths.reportsDir(task.id), 'final.md');
      await this.readReport(task.id, paths.relative(final));
    }
  }

  private async readReport(taskId: string, file: string): Promise<void> {
    const text = await readTextIfExists(path.join(this.deps.paths.workspace, file)).catch(() => undefined);
    if (text !== undefined)
      this.deps.model.apply({ type: 'panel.report', taskId, file, final: true, text: text.slice(0, LIMITS.reportChars) });
  }

  private isoNow(): string {
    return new Date((this.deps.now ?? Date.now)()).toISOString();
  }
}

/** A task of the store (and its checkpoint) as the panel's `panel.sync` input. */
export function taskSeed(
  task: Task,
  cp: Checkpoint | undefined,
  prices: RalphConfig['llm']['prices'],
  provider?: RalphConfig['llm']['provider'],
): TaskSeed {
  return {
    id: task.id,
    title: task.title,
    status: task.status,
    maxIterations: task.maxIterations,
    iterations: task.iterations,
    progress: task.progress,
    lastSignal: task.lastSignal,
    blockedReason: task.blockedReason,
    updatedAt: task.updatedAt,
    ...remoteSeed(task),
    ...(task.questions?.length
      ? {
          questions: task.questions
            .slice(-LIMITS.questions)
            .map((q) => ({ ...q, question: clip(q.question), ...(q.answer !== undefined ? { answer: clip(q.answer) } : {}) })),
        }
      : {}),
    ...(cp ? { checkpoint: checkpointSeed(cp, prices, provider) } : {}),
    ...(task.check ? { check: task.check } : {}),
    ...(cp?.proof ? { proof: proofLine(cp.proof) } : {}),
  };
}

/** The forge's state of the task as the panel shows it; nothing once it is stale (see currentRemote). */
function remoteSeed(task: Task): Pick<TaskSeed, 'remote'> {
  const remote = currentRemote(task.status, task.remote);
  return remote ? { remote: { state: remote.state, url: remote.url, ...(remote.detail ? { detail: remote.detail } : {}) } } : {};
}

function checkpointSeed(cp: Checkpoint, prices: RalphConfig['llm']['prices'], provider?: RalphConfig['llm']['provider']): CheckpointSeed {
  let costUsd = 0;
  let unpricedTokens = 0;
  let includedTokens = 0;
  if (cp.receipt) {
    // the receipt priced cached input at its own rate: the same figure as the completion card
    for (const line of Object.values(cp.receipt.byModel)) {
      costUsd += line.estimatedUsd;
      if (line.unpricedCalls > 0 && line.unpricedCalls === line.calls) unpricedTokens += line.promptTokens + line.completionTokens;
      if (line.includedCalls > 0 && line.includedCalls === line.calls) includedTokens += line.promptTokens + line.completionTokens;
    }
  } else {
    for (const [model, usage] of Object.entries(cp.modelUsage)) {
      const cost = estimateCostUsd(model, usage, prices, provider);
      if (cost !== undefined) costUsd += cost;
      else if (provider === 'vscode') includedTokens += usage.promptTokens + usage.completionTokens;
      else unpricedTokens += usage.promptTokens + usage.completionTokens;
    }
  }
  return {
    elapsedMs: cp.elapsedMs,
    commits: cp.commits,
    tokens: cp.usage.totalTokens,
    costUsd,
    unpricedTokens,
    ...(includedTokens > 0 ? { includedTokens } : {}),
    ...(cp.review
      ? {
          reviewHold: {
            target: cp.review.target,
            reason: clip(cp.review.reason),
            gates: cp.review.gates.map((g) => ({ name: g.name, passed: g.passed, summary: clip(g.summary, 300) })),
            heldAt: cp.review.heldAt,
            ...(cp.review.files ? { files: cp.review.files.slice(0, 20) } : {}),
          },
        }
      : {}),
    history: cp.history.map((r) => ({
      n: r.iteration,
      startedAt: r.startedAt,
      durationMs: r.durationMs,
      model: r.model,
      outcome: r.outcome,
      signal: r.signal,
      progress: r.progress,
      commit: r.commit,
      error: r.error,
      tokens: r.usage.totalTokens,
      gates: r.gates.map((g) => ({ passed: g.passed })),
    })),
  };
}
