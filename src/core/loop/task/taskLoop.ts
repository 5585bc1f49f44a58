import type { ModelFaultKind } from '../../errors';
import type { RalphEventBody } from '../../events';
import { proofLine } from '../../gates/proof';
import type { AgentRun } from '../../reports/reportWriter';
import { BudgetExceededError } from '../../spend/budget';
import { summarizeReceipt } from '../../spend/receipt';
import { withQuestion } from '../../tasks/questions';
import type { Task, TaskStatus } from '../../tasks/schema';
import type { Checkpoint, IterationRecord, PendingCommit } from '../../record/checkpoint';
import { runIterationStep, type IterationStepResult } from './iterationStep';
import { boundPending } from './boundedRecord';
import { afterIteration, modelFor } from './escalationStep';
import { syncFixTasks } from './fixTasks';
import type { AsideBaseline } from './baselineAside';
import { endIteration, recordIteration } from './iterationEnd';
import { checkSafeguards } from './safeguards';
import { runHaltReason } from '../runHalt';
import { handleSecurityFindings } from './securityFindings';
import { integrityBaselineAtStart, nextIteration, startTask } from './taskStart';
import { TaskReports } from './taskReports';
import { isoNow, saveCheckpoint, setTaskStatus } from './taskState';
import type { AskedQuestion, TaskLoopServices, TaskRunResult } from './types';

/** Where a task's loop stands between iterations: the task as stored, its checkpoint, and its limits (Increase Limit raises them). */
interface TaskRun {
  task: Task;
  cp: Checkpoint;
  maxIterations: number;
  timeoutMs: number;
  stop: AbortSignal;
}

/** How a task ends beyond its status and reason: the provider fault, the question asked, a critical finding. */
interface FinishDetail {
  fault?: ModelFaultKind;
  question?: AskedQuestion;
  critical?: boolean;
}

/**
 * The Ralph loop for one task: fresh context every iteration, a checkpoint at every boundary,
 * a commit for every iteration that changed files, gates after each iteration, one completion
 * policy deciding the end, and a report per iteration plus a final one.
 */
export class TaskLoop {
  private readonly reports: TaskReports;
  /** The integrity baseline being taken beside the first iteration (a task in a worktree). */
  private aside: AsideBaseline | undefined;

  constructor(private readonly services: TaskLoopServices) {
    this.reports = new TaskReports(services);
  }

  async run(initial: Task, stop: AbortSignal): Promise<TaskRunResult> {
    try {
      return await this.runTask(initial, stop);
    } finally {
      // ended before its baseline was taken: the run at the base stops, its scratch goes (this loop may run another task next)
      const aside = this.aside;
      this.aside = undefined;
      await aside?.close();
    }
  }

  private async runTask(initial: Task, stop: AbortSignal): Promise<TaskRunResult> {
    const { services } = this;
    const maxIterations = initial.maxIterations ?? services.config.loop.maxIterations;
    const timeoutMs = taskLimitMs(initial, services.config.loop.taskTimeoutMinutes);
    const { task, cp } = await startTask(services, initial, maxIterations);
    const based = await integrityBaselineAtStart(services, task, cp, stop, timeoutMs);
    this.aside = based.aside;
    const run: TaskRun = { task, cp: based.cp, maxIterations, timeoutMs, stop };
    if (based.environment) return this.finish(run, 'halted', based.environment);
    if (based.timedOut)
      return this.finish(
        run,
        'timeout',
        `${timeoutReason(timeoutMs)} during the run of the required gates at the task's base (integrity baseline)`,
      );
    for (;;) {
      const unslotted = (await this.limitReached(run)) ?? (await this.withSlot(run));
      if (unslotted) return unslotted;
      await services.pause?.wait(stop);
      const ended = (await this.limitReached(run)) ?? (await this.iterate(run));
      if (ended) return ended;
    }
  }

  /**
   * A parallel run's agent slot before the conversation: given away while the last gates ran, it
   * is taken back here, before a pause is waited out (a task sent back by its gates keeps its turn
   * ahead of any task started meanwhile). A wait for it ends at once on a stop; after a wait, the
   * limits are looked at again (a stop, what the other agents spent meanwhile). The wait counts
   * against no limit of the task.
   */
  private async withSlot(run: TaskRun): Promise<TaskRunResult | undefined> {
    const waited = await this.services.slot?.take(run.stop);
    return waited || run.stop.aborted ? this.limitReached(run) : undefined;
  }

  /** Before an iteration: the task's end when it was stopped or a limit (iterations, time, budget) is reached. */
  private async limitReached(run: TaskRun): Promise<TaskRunResult | undefined> {
    const { services } = this;
    if (nextIteration(run.cp) > run.maxIterations || run.cp.elapsedMs >= run.timeoutMs) {
      // Increase Limit may have raised either limit while the task ran; only the limits are taken
      // (the store is guarded: what a command changed there was put back before this read), the
      // task's words (its promise, its prompt) stay the ones it started with
      const stored = await services.store.get(run.task.id);
      run.maxIterations = Math.max(run.maxIterations, stored.maxIterations ?? run.maxIterations);
      run.timeoutMs = Math.max(run.timeoutMs, taskLimitMs(stored, services.config.loop.taskTimeoutMinutes));
    }
    if (run.stop.aborted) return this.finish(run, 'halted', stoppedReason(run.stop));
    if (nextIteration(run.cp) > run.maxIterations) return this.finish(run, 'timeout', `max iterations (${run.maxIterations}) reached`);
    if (run.cp.elapsedMs >= run.timeoutMs) return this.finish(run, 'timeout', timeoutReason(run.timeoutMs));
    const overBudget = this.budgetExceeded();
    if (overBudget) return this.finish(run, 'halted', overBudget);
    return undefined;
  }

  /** One iteration, its checkpoint written ahead of its commit; the task's end when it ended the task. */
  private async iterate(run: TaskRun): Promise<TaskRunResult | undefined> {
    const { services } = this;
    const n = nextIteration(run.cp);
    // killed after the model run of this iteration: finish it from the write-ahead record
    const replay = run.cp.phase === 'committing' && run.cp.pending?.iteration === n ? run.cp.pending : undefined;
    const onStep = modelFor(services, run.task, run.cp);
    const chosen = replay ? { cp: run.cp, model: replay.model, agent: onStep.agent } : onStep;
    const running: Checkpoint = {
      ...chosen.cp,
      iteration: n,
      phase: replay ? 'committing' : 'running',
      pending: replay,
      updatedAt: isoNow(services),
    };
    run.cp = running;
    await saveCheckpoint(services, running);
    const agents: AgentRun[] = [];
    const escalationsBefore = running.escalation?.history.length ?? 0;
    let written = replay;
    const beforeCommit = async (pending: PendingCommit) => {
      written = boundPending(pending);
      await saveCheckpoint(services, { ...running, phase: 'committing', pending: written, updatedAt: isoNow(services) });
    };
    services.meter.beginIteration(n, run.maxIterations);
    const step = await runIterationStep(this.collectingAgents(agents), {
      task: run.task,
      cp: running,
      iteration: n,
      maxIterations: run.maxIterations,
      model: chosen.model,
      agent: chosen.agent,
      remainingMs: run.timeoutMs - running.elapsedMs,
      limitMs: run.timeoutMs,
      stop: run.stop,
      replay,
      beforeCommit,
      baseline: running.integrity ? undefined : this.aside,
    });
    if (step.uncommitted && written)
      return this.haltUncommitted({ ...run, cp: { ...running, phase: 'committing', pending: written, updatedAt: isoNow(services) } }, step);
    run.cp = recordIteration(services, running, step);
    return this.afterStep(run, step, agents, escalationsBefore);
  }

  /**
   * After the iteration's step: the task store's write, fix tasks and security findings, escalation
   * (unless the task ends here), the iteration's records, then whether and how the task ends.
   */
  private async afterStep(
    run: TaskRun,
    step: IterationStepResult,
    agents: AgentRun[],
    escalationsBefore: number,
  ): Promise<TaskRunResult | undefined> {
    const { services } = this;
    const { task, stop } = run;
    const n = run.cp.iteration;
    // a command the rules still ask about, with nobody there to ask: the person answers it as the task's question
    const asked = step.decision?.kind === 'finish' && step.decision.status === 'done' ? undefined : services.commandQuestions?.take();
    // one task-store write per iteration, once it has ended: the iterations run, the progress and
    // the signal; written alongside the checkpoint and the report (no order between the three)
    const ended = run.cp.history[run.cp.history.length - 1];
    const stored = services.store.update(task.id, {
      iterations: n,
      progress: ended.progress ?? task.progress,
      lastSignal: ended.signal ?? task.lastSignal,
    });
    stored.catch(() => undefined); // awaited with the checkpoint below: a failure is thrown from there
    await syncFixTasks(services, task, step.gates);
    await handleSecurityFindings(services, task, n, step.gates);
    const overBudgetNow = this.budgetExceeded();
    // no escalation or council after the last iteration the task may have (or may pay for): nothing would use them
    const finishing =
      step.decision?.kind === 'finish' ||
      step.record.outcome === 'stopped' ||
      step.timedOut ||
      n >= run.maxIterations ||
      overBudgetNow !== undefined ||
      asked !== undefined;
    const end = () => endIteration(services, this.reports, { ...run, stored, step, agents, escalationsBefore });
    if (!finishing) {
      const escalated = await afterIteration(services, task, run.cp, step.gates, stop);
      run.cp = escalated.cp;
      if (escalated.halt) {
        run.task = await end();
        return this.finish(run, 'halted', escalated.halt);
      }
    }
    const record = run.cp.history[run.cp.history.length - 1];
    run.task = await end();

    if (record.outcome === 'stopped') return this.finish(run, 'halted', stoppedReason(stop));
    if (step.decision?.kind === 'finish') {
      const critical = step.gates?.critical === true && step.decision.status === 'halted';
      const question = step.decision.question;
      return this.finish(run, step.decision.status, step.decision.reason, {
        fault: step.fault,
        critical,
        ...(question ? { question } : {}),
      });
    }
    if (asked) return this.finish(run, 'needs_help', asked.question, { question: asked });
    if (overBudgetNow) return this.finish(run, 'halted', overBudgetNow);
    if (step.timedOut || run.cp.elapsedMs >= run.timeoutMs) return this.finish(run, 'timeout', timeoutReason(run.timeoutMs));
    const guarded = await checkSafeguards(services, run.task, run.cp, run.maxIterations);
    run.cp = guarded.cp;
    run.task = guarded.task;
    run.maxIterations = run.task.maxIterations ?? run.maxIterations;
    if (guarded.stop) return this.finish(run, guarded.stop.status, guarded.stop.reason);
    return undefined;
  }

  /**
   * The iteration's commit met a git lock that stayed held: the iteration is not over. The
   * checkpoint keeps its write-ahead record (phase `committing`), so the next run commits this
   * same iteration's work under its own number, without a new model call, and judges it then.
   */
  private async haltUncommitted(run: TaskRun, step: IterationStepResult): Promise<TaskRunResult> {
    const reason = step.decision?.kind === 'finish' ? step.decision.reason : (step.record.error ?? 'the iteration could not be committed');
    this.services.emit({
      type: 'iteration.finished',
      taskId: run.task.id,
      iteration: step.record.iteration,
      outcome: 'error',
      signal: step.record.signal,
      durationMs: step.record.durationMs,
      usage: step.record.usage,
      error: reason,
    });
    const result = await this.finish(run, 'halted', reason);
    return step.runHalt ? { ...result, runHalt: step.runHalt } : result;
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

  private async finish(
    run: Pick<TaskRun, 'task' | 'cp' | 'maxIterations'>,
    status: TaskStatus,
    reason: string,
    detail: FinishDetail = {},
  ): Promise<TaskRunResult> {
    const { services } = this;
    const { task, cp, maxIterations } = run;
    const { fault, question, critical = false } = detail;
    const receipt = services.meter.currentTaskId === cp.taskId ? services.meter.taskReceipt : cp.receipt;
    const saved = saveCheckpoint(services, { ...cp, receipt, updatedAt: isoNow(services) });
    saved.catch(() => undefined); // awaited below, before the status changes and with the reports
    const blockedReason = status === 'blocked' || status === 'needs_help' || status === 'halted' ? reason : undefined;
    // in a worktree, COMPLETE is not done: the merge queue marks the task done once its work is on the target
    const deferred = status === 'done' && services.awaitingMerge === true;
    // NEEDS_HELP and BLOCKED are questions for the person: kept in the task's history, answered from the panel, tree or CLI
    const asks = status === 'needs_help' || status === 'blocked' ? (question ?? { kind: 'help' as const, question: reason }) : undefined;
    const questions = asks
      ? withQuestion((await services.store.get(task.id)).questions, { ...asks, askedAt: isoNow(services), iteration: cp.iteration })
      : undefined;
    // queued for the merge, the task stays as the iteration's end stored it (in progress, no reason): nothing to write
    const unchanged = deferred && task.status === 'in_progress' && task.blockedReason === undefined;
    if (!unchanged) await saved;
    const updated = unchanged
      ? task
      : await setTaskStatus(services, task, deferred ? 'in_progress' : status, reason, blockedReason, questions);
    // the reports read nothing of the checkpoint's file: written beside it
    const [, , reportFile] = await Promise.all([
      saved,
      this.reports.correctLast(cp, status, reason, deferred),
      this.reports.writeFinal(updated, status, reason, maxIterations, { ...cp, receipt }, deferred),
    ]);
    await services.disk?.taskEnded();
    const proof = cp.proof ? { proof: proofLine(cp.proof) } : {};
    if (!deferred)
      services.emit({
        type: 'task.finished',
        taskId: task.id,
        status,
        iterations: updated.iterations,
        reason,
        ...(fault ? { fault } : {}),
        ...(receipt ? { receipt: summarizeReceipt(receipt) } : {}),
        ...proof,
      });
    return {
      taskId: task.id,
      status,
      reason,
      iterations: updated.iterations,
      reportFile,
      ...(fault ? { fault } : {}),
      ...(critical ? { critical } : {}),
    };
  }
}

/** The task's time limit in ms: its own `timeoutMinutes` (raised by Increase Limit), else the configured one. */
export function taskLimitMs(task: Pick<Task, 'timeoutMinutes'>, configured: number): number {
  return (task.timeoutMinutes ?? configured) * 60_000;
}

function timeoutReason(timeoutMs: number): string {
  return `task timeout (${minutes(timeoutMs)} min) reached`;
}

function minutes(ms: number): string {
  return String(Math.round((ms / 60_000) * 100) / 100);
}

/** Why the task stopped: the user, or the run halting itself (the abort's reason says which). */
function stoppedReason(stop: AbortSignal): string {
  const halted = runHaltReason(stop);
  return `${halted ?? 'stopped by the user'}; state saved`;
}

export { nextIteration };
export type { IterationRecord, TaskLoopServices, TaskRunResult };
