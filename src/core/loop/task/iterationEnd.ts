import { addUsage } from '../../llm/types';
import type { AgentRun } from '../../reports/reportWriter';
import type { Task } from '../../tasks/schema';
import { type Checkpoint, MAX_HISTORY } from '../../record/checkpoint';
import { boundRecord } from './boundedRecord';
import { iterationFailed } from './escalationStep';
import type { IterationStepResult } from './iterationStep';
import type { TaskReports } from './taskReports';
import { isoNow, saveCheckpoint } from './taskState';
import type { TaskLoopServices } from './types';

/** An iteration that has ended, as its end writes and announces it. */
export interface EndedIteration {
  task: Task;
  /** The task store's write of the iteration (iterations run, progress, signal), waited for with the other writes. */
  stored: Promise<Task>;
  cp: Checkpoint;
  step: IterationStepResult;
  maxIterations: number;
  /** The sub-agents the iteration delegated to, for its report. */
  agents: AgentRun[];
  /** How many model changes the checkpoint held before the iteration: the ones after are this iteration's. */
  escalationsBefore: number;
}

/** The checkpoint with the iteration's record and what it spent, between iterations again. */
export function recordIteration(
  services: Pick<TaskLoopServices, 'meter' | 'clock'>,
  cp: Checkpoint,
  step: IterationStepResult,
): Checkpoint {
  const { record } = step;
  // every model call of the task (sub-agents, summaries, the council included) went through the meter
  const modelUsage = structuredClone(services.meter.taskTotals.byModel);
  const optionalGateIterations = { ...cp.optionalGateIterations };
  if (step.decision?.kind === 'continue') {
    for (const name of step.decision.optionalGatesRetried) optionalGateIterations[name] = (optionalGateIterations[name] ?? 0) + 1;
  }
  return {
    ...cp,
    ...(step.integrity && !cp.integrity ? { integrity: step.integrity } : {}),
    phase: 'between',
    pending: undefined,
    elapsedMs: cp.elapsedMs + record.durationMs,
    commits: cp.commits + (record.commit ? 1 : 0),
    consecutiveErrors: record.outcome === 'error' ? cp.consecutiveErrors + 1 : 0,
    history: [...cp.history, boundRecord({ ...record, failed: iterationFailed(record, cp.history.at(-1)) })].slice(-MAX_HISTORY),
    usage: addUsage(cp.usage, record.usage),
    modelUsage,
    optionalGateIterations,
    proof: record.proof ?? cp.proof,
    updatedAt: isoNow(services),
  };
}

/**
 * Saves the checkpoint, writes the iteration report, waits for the task store's write
 * (`stored`) and announces the end of the iteration; returns the task as stored.
 */
export async function endIteration(services: TaskLoopServices, reports: TaskReports, ended: EndedIteration): Promise<Task> {
  const { task, cp, step, maxIterations, agents } = ended;
  const record = cp.history[cp.history.length - 1];
  const modelChanges = (cp.escalation?.history ?? []).slice(ended.escalationsBefore).map((e) => `${e.from} → ${e.to}: ${e.reason}`);
  const councilPlan = cp.councilPlan && record.feedback.some((f) => f.startsWith('Bug council plan')) ? cp.councilPlan : undefined;
  // files that do not depend on each other: written side by side, their fsyncs waited for together
  const [, report, updated] = await Promise.all([
    saveCheckpoint(services, cp),
    reports.writeIteration(task, { ...step, record }, maxIterations, agents, modelChanges, councilPlan),
    ended.stored,
  ]);
  if (report)
    services.emit({
      type: 'report.written',
      taskId: task.id,
      iteration: record.iteration,
      file: services.paths.relative(report),
      final: false,
    });
  await services.disk?.afterIteration();
  services.emit({
    type: 'iteration.finished',
    taskId: task.id,
    iteration: record.iteration,
    outcome: record.outcome,
    signal: record.signal,
    durationMs: record.durationMs,
    commit: record.commit,
    usage: record.usage,
    error: record.error,
  });
  const totals = services.meter.runTotals;
  services.emit({
    type: 'budget',
    taskId: task.id,
    costUsd: totals.costUsd,
    tokens: totals.tokens,
    taskCostUsd: services.meter.taskTotals.costUsd,
    taskTokens: services.meter.taskTotals.tokens,
  });
  return updated;
}
