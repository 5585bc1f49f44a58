import { errorMessage, type ModelFaultKind } from '../errors';
import type { RalphEventBody } from '../events';
import { addUsage, ZERO_USAGE } from '../llm/types';
import { proofLine } from '../gates/proof';
import { finishLabel, iterationLabel } from '../reports/decision';
import { type AgentRun, type IterationReportInput, ReportWriter } from '../reports/reportWriter';
import { BudgetExceededError } from '../spend/budget';
import { summarizeReceipt } from '../spend/receipt';
import { type Question, withQuestion } from '../tasks/questions';
import type { Task, TaskStatus } from '../tasks/schema';
import { ensureProgressFile } from '../workspace';
import { type Checkpoint, type IterationRecord, MAX_HISTORY, type PendingCommit } from '../record/checkpoint';
import { runIterationStep, type IterationStepResult } from './iterationStep';
import { boundPending, boundRecord } from './boundedRecord';
import { boundOptionalText } from '../util/bounded';
import { afterIteration, iterationFailed, modelFor } from './escalationStep';
import { syncFixTasks } from './fixTasks';
import { takeIntegrityBaseline } from './integrityStep';
import { checkSafeguards } from './safeguards';
import { runHaltReason } from './runHalt';
import { handleSecurityFindings, observationsOf } from './securityFindings';
import type { AskedQuestion, TaskLoopServices, TaskRunResult } from './types';

/** The council's plan as the checkpoint keeps it. */
const COUNCIL_PLAN_MAX = 16_000;

/** Statuses from which running a task resumes it from its checkpoint rather than starting over. */
const RESUMABLE: ReadonlySet<TaskStatus> = new Set(['in_progress', 'halted']);

/**
 * The Ralph loop for one task: fresh context every iteration, a checkpoint at every boundary,
 * a commit for every iteration that changed files, gates after each iteration, one completion
 * policy deciding the end, and a report per iteration plus a final one.
 */
export class TaskLoop {
  private readonly reports: ReportWriter;
  /** The iteration report last written in this run, to correct its decision when the task ends right after. */
  private lastReport: IterationReportInput | undefined;

  constructor(private readonly services: TaskLoopServices) {
    this.reports = new ReportWriter(services.paths, services.config);
  }

  async run(initial: Task, stop: AbortSignal): Promise<TaskRunResult> {
    const { services } = this;
    const baseMax = initial.maxIterations ?? services.config.loop.maxIterations;
    let timeoutMs = taskLimitMs(initial, services.config.loop.taskTimeoutMinutes);
    const timeoutReason = () => `task timeout (${minutes(timeoutMs)} min) reached`;
    let { task, cp } = await this.start(initial, baseMax);
    const based = await this.ensureIntegrityBaseline(task, cp, stop, timeoutMs);
    cp = based.cp;
    let maxIterations = baseMax;
    if (based.timedOut) return this.finish(task, cp, 'timeout', `${timeoutReason()} during the run of the required gates at the task's base (integrity baseline)`, maxIterations);
    for (;;) {
      await services.pause?.wait(stop);
      if (nextIteration(cp) > maxIterations || cp.elapsedMs >= timeoutMs) {
        // Increase Limit may have raised either limit while the task ran
        task = await services.store.get(task.id);
        maxIterations = Math.max(maxIterations, task.maxIterations ?? maxIterations);
        timeoutMs = Math.max(timeoutMs, taskLimitMs(task, services.config.loop.taskTimeoutMinutes));
      }
      const n = nextIteration(cp);
      if (stop.aborted) return this.finish(task, cp, 'halted', stoppedReason(stop), maxIterations);
      if (n > maxIterations) return this.finish(task, cp, 'timeout', `max iterations (${maxIterations}) reached`, maxIterations);
      if (cp.elapsedMs >= timeoutMs) return this.finish(task, cp, 'timeout', timeoutReason(), maxIterations);
      const overBudget = this.budgetExceeded();
      if (overBudget) return this.finish(task, cp, 'halted', overBudget, maxIterations);

      // killed after the model run of this iteration: finish it from the write-ahead record
      const replay = cp.phase === 'committing' && cp.pending?.iteration === n ? cp.pending : undefined;
      const chosen = replay ? { cp, model: replay.model } : modelFor(services, task, cp);
      cp = { ...chosen.cp, iteration: n, phase: replay ? 'committing' : 'running', pending: replay, updatedAt: this.isoNow() };
      await this.saveCheckpoint(cp);
      const agents: AgentRun[] = [];
      const escalationsBefore = cp.escalation?.history.length ?? 0;
      const running = cp;
      let written = replay;
      const beforeCommit = async (pending: PendingCommit) => {
        written = boundPending(pending);
        await this.saveCheckpoint({ ...running, phase: 'committing', pending: written, updatedAt: this.isoNow() });
      };
      services.meter.beginIteration(n, maxIterations);
      const step = await runIterationStep(this.collectingAgents(agents), { task, cp, iteration: n, maxIterations, model: chosen.model, remainingMs: timeoutMs - cp.elapsedMs, limitMs: timeoutMs, stop, replay, beforeCommit });
      if (step.uncommitted && written) return this.haltUncommitted(task, { ...running, phase: 'committing', pending: written, updatedAt: this.isoNow() }, step, maxIterations);
      cp = this.recordIteration(cp, step);
      // a command the rules still ask about, with nobody there to ask: the person answers it as the task's question
      const asked = step.decision?.kind === 'finish' && step.decision.status === 'done' ? undefined : services.commandQuestions?.take();
      // one task-store write per iteration, once it has ended: the iterations run, the progress and
      // the signal; written alongside the checkpoint and the report (no order between the three)
      const ended = cp.history[cp.history.length - 1];
      const stored = services.store.update(task.id, { iterations: n, progress: ended.progress ?? task.progress, lastSignal: ended.signal ?? task.lastSignal });
      stored.catch(() => undefined); // awaited with the checkpoint below: a failure is thrown from there
      await syncFixTasks(services, task, step.gates);
      await handleSecurityFindings(services, task, n, step.gates);
      const overBudgetNow = this.budgetExceeded();
      // no escalation or council after the last iteration the task may have (or may pay for): nothing would use them
      const finishing = step.decision?.kind === 'finish' || step.record.outcome === 'stopped' || step.timedOut || n >= maxIterations || overBudgetNow !== undefined || asked !== undefined;
      if (!finishing) {
        const escalated = await afterIteration(services, task, cp, step.gates, stop);
        cp = escalated.cp;
        if (escalated.halt) {
          task = await this.endIteration(task, stored, cp, step, maxIterations, agents, escalationsBefore);
          return this.finish(task, cp, 'halted', escalated.halt, maxIterations);
        }
      }
      const record = cp.history[cp.history.length - 1];
      task = await this.endIteration(task, stored, cp, step, maxIterations, agents, escalationsBefore);

      if (record.outcome === 'stopped') return this.finish(task, cp, 'halted', stoppedReason(stop), maxIterations);
      if (step.decision?.kind === 'finish') return this.finish(task, cp, step.decision.status, step.decision.reason, maxIterations, step.fault, undefined, step.gates?.critical === true && step.decision.status === 'halted');
      if (asked) return this.finish(task, cp, 'needs_help', asked.question, maxIterations, undefined, asked);
      if (overBudgetNow) return this.finish(task, cp, 'halted', overBudgetNow, maxIterations);
      if (step.timedOut || cp.elapsedMs >= timeoutMs) return this.finish(task, cp, 'timeout', timeoutReason(), maxIterations);
      const guarded = await checkSafeguards(services, task, cp, maxIterations);
      cp = guarded.cp;
      task = guarded.task;
      maxIterations = task.maxIterations ?? maxIterations;
      if (guarded.stop) return this.finish(task, cp, guarded.stop.status, guarded.stop.reason, maxIterations);
    }
  }

  /** Loads the task's checkpoint (or starts a fresh one), marks the task in progress and announces it. */
  private async start(initial: Task, maxIterations: number): Promise<{ task: Task; cp: Checkpoint }> {
    const { services } = this;
    const existing = await services.checkpoints.load(initial.id, {
      onCorrupt: 'throw',
      onWarning: (message) => services.emit({ type: 'warning', taskId: initial.id, code: 'checkpoint-restored', message }),
    });
    const resumed = existing !== undefined && RESUMABLE.has(initial.status);
    const cp: Checkpoint = resumed ? { ...existing, runId: services.runId } : await this.freshCheckpoint(initial);
    const task = await this.setStatus(initial, 'in_progress', resumed ? 'resumed from checkpoint' : 'started');
    await ensureProgressFile(services.work ?? services.paths, task);

    services.emit({ type: 'task.started', taskId: task.id, title: task.title, iteration: nextIteration(cp), maxIterations, resumed });

    services.meter.beginTask(task.id, cp.modelUsage, cp.receipt);
    services.commandQuestions?.begin(task);
    return { task, cp };
  }

  /**
   * Saves the checkpoint, writes the iteration report, waits for the task store's write
   * (`stored`) and announces the end of the iteration; returns the task as stored.
   */
  private async endIteration(
    task: Task,
    stored: Promise<Task>,
    cp: Checkpoint,
    step: IterationStepResult,
    maxIterations: number,
    agents: AgentRun[],
    escalationsBefore: number,
  ): Promise<Task> {
    const { services } = this;
    const record = cp.history[cp.history.length - 1];
    const modelChanges = (cp.escalation?.history ?? []).slice(escalationsBefore).map((e) => `${e.from} → ${e.to}: ${e.reason}`);
    const councilPlan = cp.councilPlan && record.feedback.some((f) => f.startsWith('Bug council plan')) ? cp.councilPlan : undefined;
    // files that do not depend on each other: written side by side, their fsyncs waited for together
    const [, report, updated] = await Promise.all([this.saveCheckpoint(cp), this.writeIterationReport(task, { ...step, record }, maxIterations, agents, modelChanges, councilPlan), stored]);
    if (report) services.emit({ type: 'report.written', taskId: task.id, iteration: record.iteration, file: services.paths.relative(report), final: false });
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
    services.emit({ type: 'budget', taskId: task.id, costUsd: totals.costUsd, tokens: totals.tokens, taskCostUsd: services.meter.taskTotals.costUsd, taskTokens: services.meter.taskTotals.tokens });
    return updated;
  }

  /**
   * The iteration's commit met a git lock that stayed held: the iteration is not over. The
   * checkpoint keeps its write-ahead record (phase `committing`), so the next run commits this
   * same iteration's work under its own number, without a new model call, and judges it then.
   */
  private async haltUncommitted(task: Task, cp: Checkpoint, step: IterationStepResult, maxIterations: number): Promise<TaskRunResult> {
    const reason = step.decision?.kind === 'finish' ? step.decision.reason : (step.record.error ?? 'the iteration could not be committed');
    this.services.emit({ type: 'iteration.finished', taskId: task.id, iteration: step.record.iteration, outcome: 'error', signal: step.record.signal, durationMs: step.record.durationMs, usage: step.record.usage, error: reason });
    const result = await this.finish(task, cp, 'halted', reason, maxIterations);
    return step.runHalt ? { ...result, runHalt: step.runHalt } : result;
  }

  /**
   * Before iteration 1 the working tree is the task's base: what the required gates check is
   * recorded then, once, and kept across resumes. A checkpoint from before this existed, taken
   * after work began, has no base to compare with: said once, then the gates are judged as before.
   */
  private async ensureIntegrityBaseline(task: Task, cp: Checkpoint, stop: AbortSignal, timeoutMs: number): Promise<{ cp: Checkpoint; timedOut?: boolean }> {
    if (cp.integrity || stop.aborted) return { cp };
    if (cp.iteration > 0 || cp.phase === 'running') {
      this.services.emit({ type: 'warning', taskId: task.id, code: 'integrity-baseline-missing', message: `no gate baseline for ${task.id} (its checkpoint predates it): its gates are not compared with the task's base` });
      return { cp };
    }
    // the run at the base counts against the task's time limit like any iteration: a gate that hangs there cannot outlast it
    const deadline = AbortSignal.timeout(Math.max(1, timeoutMs - cp.elapsedMs));
    const started = this.services.clock.now();
    const integrity = await takeIntegrityBaseline(this.services, task, AbortSignal.any([stop, deadline]));
    const spent = { ...cp, elapsedMs: cp.elapsedMs + Math.max(0, this.services.clock.now() - started), updatedAt: this.isoNow() };
    if (!integrity) {
      if (!deadline.aborted || stop.aborted) return { cp: spent };
      await this.saveCheckpoint(spent);
      return { cp: spent, timedOut: true };
    }
    const next = { ...spent, integrity };
    await this.saveCheckpoint(next);
    return { cp: next };
  }

  private budgetExceeded(): string | undefined {
    try {
      this.services.meter.check();
      return undefined;
    } catch (error) {
      if (error instanceof BudgetExceededError) return `${error.message}; state saved`;
      throw error;
    }
  }

  private recordIteration(cp: Checkpoint, step: IterationStepResult): Checkpoint {
    const { record } = step;
    // every model call of the task (sub-agents, summaries, the council included) went through the meter
    const modelUsage = structuredClone(this.services.meter.taskTotals.byModel);
    const optionalGateIterations = { ...cp.optionalGateIterations };
    if (step.decision?.kind === 'continue') {
      for (const name of step.decision.optionalGatesRetried) optionalGateIterations[name] = (optionalGateIterations[name] ?? 0) + 1;
    }
    return {
      ...cp,
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
      updatedAt: this.isoNow(),
    };
  }

  /** The services with an emit that also notes each delegation for the iteration report. */
  private collectingAgents(agents: AgentRun[]): TaskLoopServices {
    const emit = (body: RalphEventBody) => {
      const event = body as { type: string; target?: string; status?: string; objective?: string; model?: string };
      if (event.type === 'delegation.result' && event.target) {
        agents.push({ agent: event.target, model: event.model ?? '', status: event.status ?? '', detail: event.objective ?? '' });
      }
      this.services.emit(body);
    };
    return { ...this.services, emit };
  }

  /** The iteration report's file, or undefined (and a warning) when it could not be written. */
  private async writeIterationReport(task: Task, step: IterationStepResult, maxIterations: number, agents: AgentRun[], modelChanges: string[], councilPlan: string | undefined): Promise<string | undefined> {
    const finished = step.decision?.kind === 'finish' ? step.decision.status : undefined;
    const input: IterationReportInput = { task, record: step.record, maxIterations, gates: step.gates, decision: step.decision, agents, modelChanges, councilPlan, label: iterationLabel(step.record, finished, this.services.awaitingMerge === true) };
    // kept: should the task end right after for a reason found outside the iteration, the report is written again with it
    this.lastReport = input;
    try {
      return await this.reports.writeIteration(input);
    } catch (error) {
      this.services.emit({ type: 'warning', taskId: task.id, code: 'report-failed', message: `could not write the iteration report: ${errorMessage(error)}` });
      return undefined;
    }
  }

  private async finish(task: Task, cp: Checkpoint, status: TaskStatus, reason: string, maxIterations: number, fault?: ModelFaultKind, question?: AskedQuestion, critical = false): Promise<TaskRunResult> {
    const { services } = this;
    const receipt = services.meter.currentTaskId === cp.taskId ? services.meter.taskReceipt : cp.receipt;
    await this.saveCheckpoint({ ...cp, receipt, updatedAt: this.isoNow() });
    const blockedReason = status === 'blocked' || status === 'needs_help' || status === 'halted' ? reason : undefined;
    // in a worktree, COMPLETE is not done: the merge queue marks the task done once its work is on the target
    const deferred = status === 'done' && services.awaitingMerge === true;
    // NEEDS_HELP and BLOCKED are questions for the person: kept in the task's history, answered from the panel, tree or CLI
    const asks = status === 'needs_help' || status === 'blocked' ? (question ?? { kind: 'help' as const, question: reason }) : undefined;
    const questions = asks ? withQuestion((await services.store.get(task.id)).questions, { ...asks, askedAt: this.isoNow(), iteration: cp.iteration }) : undefined;
    // queued for the merge, the task stays as the iteration's end stored it (in progress, no reason): nothing to write
    const unchanged = deferred && task.status === 'in_progress' && task.blockedReason === undefined;
    const updated = unchanged ? task : await this.setStatus(task, deferred ? 'in_progress' : status, reason, blockedReason, questions);
    await this.correctLastReport(cp, status, reason, deferred);
    let reportFile: string | undefined;
    try {
      const files = await services.git.changesSince(cp.baseCommit).catch(() => ({ added: [], modified: [], deleted: [] }));
      reportFile = await this.reports.writeFinal({ task: updated, status, reason, maxIterations, checkpoint: { ...cp, receipt }, files, escalations: escalationLines(cp), queued: deferred, observations: await observationsOf(services, task.id) });
      services.emit({ type: 'report.written', taskId: task.id, file: services.paths.relative(reportFile), final: true });
    } catch (error) {
      services.emit({ type: 'warning', taskId: task.id, code: 'report-failed', message: `could not write the final report: ${errorMessage(error)}` });
    }
    await services.disk?.prune();
    const proof = cp.proof ? { proof: proofLine(cp.proof) } : {};
    if (!deferred) services.emit({ type: 'task.finished', taskId: task.id, status, iterations: updated.iterations, reason, ...(fault ? { fault } : {}), ...(receipt ? { receipt: summarizeReceipt(receipt) } : {}), ...proof });
    return { taskId: task.id, status, reason, iterations: updated.iterations, reportFile, ...(fault ? { fault } : {}), ...(critical ? { critical } : {}) };
  }

  /**
   * The report of the iteration after which the task ended says what happened after it: when the
   * end came from outside the iteration (max iterations, the timeout, the budget, a stuck loop, a
   * safeguard), the report written at the iteration's end is written again with that decision.
   */
  private async correctLastReport(cp: Checkpoint, status: TaskStatus, reason: string, deferred: boolean): Promise<void> {
    const last = this.lastReport;
    if (!last || last.record.iteration !== cp.iteration) return;
    const label = finishLabel(status, /stopped by the user/.test(reason), deferred);
    if (label === last.label && (label === 'ITERATE' || last.record.decision === reason)) return;
    this.lastReport = undefined;
    await this.reports.writeIteration({ ...last, label, ended: reason }).catch((error) => this.services.emit({ type: 'warning', taskId: cp.taskId, code: 'report-failed', message: `could not rewrite the iteration report: ${errorMessage(error)}` }));
  }

  private async setStatus(task: Task, to: TaskStatus, reason: string, blockedReason?: string, questions?: Question[]): Promise<Task> {
    const updated = await this.services.store.update(task.id, { status: to, blockedReason, ...(questions ? { questions } : {}) });
    if (task.status !== to) this.services.emit({ type: 'task.status', taskId: task.id, from: task.status, to, reason });
    return updated;
  }

  private async freshCheckpoint(task: Task): Promise<Checkpoint> {
    return {
      version: 1,
      taskId: task.id,
      runId: this.services.runId,
      iteration: 0,
      phase: 'between',
      pending: undefined,
      elapsedMs: 0,
      baseCommit: await this.services.git.headSha().catch(() => undefined),
      commits: 0,
      consecutiveErrors: 0,
      usage: ZERO_USAGE,
      modelUsage: {},
      optionalGateIterations: {},
      warned: { ratio: false },
      history: [],
      updatedAt: this.isoNow(),
    };
  }

  private async saveCheckpoint(cp: Checkpoint): Promise<void> {
    // the receipt rides with the checkpoint: one atomic write, and a resume starts from it
    // save() parses the checkpoint into its own objects first thing: the live receipt needs no copy
    const receipt = this.services.meter.currentTaskId === cp.taskId ? this.services.meter.taskReceiptView : cp.receipt;
    // the council's plan is a model's text too: kept bounded like the records' texts
    const file = await this.services.checkpoints.save({ ...cp, receipt, councilPlan: boundOptionalText(cp.councilPlan, COUNCIL_PLAN_MAX) });
    this.services.emit({ type: 'checkpoint', taskId: cp.taskId, iteration: cp.iteration, file: this.services.paths.relative(file) });
  }

  private isoNow(): string {
    return new Date(this.services.clock.now()).toISOString();
  }
}

/** The task's time limit in ms: its own `timeoutMinutes` (raised by Increase Limit), else the configured one. */
export function taskLimitMs(task: Pick<Task, 'timeoutMinutes'>, configured: number): number {
  return (task.timeoutMinutes ?? configured) * 60_000;
}

function minutes(ms: number): string {
  return String(Math.round((ms / 60_000) * 100) / 100);
}

function escalationLines(cp: Checkpoint): string[] {
  const lines = (cp.escalation?.history ?? []).map((e) => `iteration ${e.iteration}: ${e.from} → ${e.to} — ${e.reason}`);
  if (cp.councilPlan) lines.push(`bug council plan:\n\n${cp.councilPlan}`);
  return lines;
}

/** Why the task stopped: the user, or the run halting itself (the abort's reason says which). */
function stoppedReason(stop: AbortSignal): string {
  const halted = runHaltReason(stop);
  return `${halted ?? 'stopped by the user'}; state saved`;
}

/** A checkpoint taken mid-iteration resumes that same iteration; one between iterations, the next. */
export function nextIteration(cp: Checkpoint): number {
  return cp.phase === 'between' ? cp.iteration + 1 : cp.iteration;
}

export type { IterationRecord, TaskLoopServices, TaskRunResult };
