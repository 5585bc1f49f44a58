import { errorMessage } from '../../errors';
import { finishLabel, iterationLabel } from '../../reports/decision';
import { type AgentRun, type IterationReportInput, ReportWriter } from '../../reports/reportWriter';
import type { Task, TaskStatus } from '../../tasks/schema';
import type { Checkpoint } from '../../record/checkpoint';
import type { IterationStepResult } from './iterationStep';
import { observationsOf } from './securityFindings';
import type { TaskLoopServices } from './types';

type ReportServices = Pick<TaskLoopServices, 'paths' | 'config' | 'emit' | 'git' | 'awaitingMerge'>;

/** A task's reports: one per iteration (written again when the task ends right after it for a reason of its own), and the final one. */
export class TaskReports {
  private readonly writer: ReportWriter;
  /** The iteration report last written in this run, to correct its decision when the task ends right after. */
  private last: IterationReportInput | undefined;

  constructor(private readonly services: ReportServices) {
    this.writer = new ReportWriter(services.paths, services.config);
  }

  /** The iteration report's file, or undefined (and a warning) when it could not be written. */
  async writeIteration(
    task: Task,
    step: IterationStepResult,
    maxIterations: number,
    agents: AgentRun[],
    modelChanges: string[],
    councilPlan: string | undefined,
  ): Promise<string | undefined> {
    const finished = step.decision?.kind === 'finish' ? step.decision.status : undefined;
    const input: IterationReportInput = {
      task,
      record: step.record,
      maxIterations,
      gates: step.gates,
      decision: step.decision,
      agents,
      modelChanges,
      councilPlan,
      label: iterationLabel(step.record, finished, this.services.awaitingMerge === true),
    };
    // kept: should the task end right after for a reason found outside the iteration, the report is written again with it
    this.last = input;
    try {
      return await this.writer.writeIteration(input);
    } catch (error) {
      this.services.emit({
        type: 'warning',
        taskId: task.id,
        code: 'report-failed',
        message: `could not write the iteration report: ${errorMessage(error)}`,
      });
      return undefined;
    }
  }

  /**
   * The report of the iteration after which the task ended says what happened after it: when the
   * end came from outside the iteration (max iterations, the timeout, the budget, a stuck loop, a
   * safeguard), the report written at the iteration's end is written again with that decision.
   */
  async correctLast(cp: Checkpoint, status: TaskStatus, reason: string, deferred: boolean): Promise<void> {
    const last = this.last;
    if (!last || last.record.iteration !== cp.iteration) return;
    const label = finishLabel(status, /stopped by the user/.test(reason), deferred);
    if (label === last.label && (label === 'ITERATE' || last.record.decision === reason)) return;
    this.last = undefined;
    await this.writer.writeIteration({ ...last, label, ended: reason }).catch((error) =>
      this.services.emit({
        type: 'warning',
        taskId: cp.taskId,
        code: 'report-failed',
        message: `could not rewrite the iteration report: ${errorMessage(error)}`,
      }),
    );
  }

  /** The task's final report (`final.md`), announced; undefined (and a warning) when it could not be written. */
  async writeFinal(
    task: Task,
    status: TaskStatus,
    reason: string,
    maxIterations: number,
    checkpoint: Checkpoint,
    queued: boolean,
  ): Promise<string | undefined> {
    const { services } = this;
    try {
      const files = await services.git.changesSince(checkpoint.baseCommit).catch(() => ({ added: [], modified: [], deleted: [] }));
      const reportFile = await this.writer.writeFinal({
        task,
        status,
        reason,
        maxIterations,
        checkpoint,
        files,
        escalations: escalationLines(checkpoint),
        queued,
        observations: await observationsOf(services, task.id),
      });
      services.emit({ type: 'report.written', taskId: task.id, file: services.paths.relative(reportFile), final: true });
      return reportFile;
    } catch (error) {
      services.emit({
        type: 'warning',
        taskId: task.id,
        code: 'report-failed',
        message: `could not write the final report: ${errorMessage(error)}`,
      });
      return undefined;
    }
  }
}

function escalationLines(cp: Checkpoint): string[] {
  const lines = (cp.escalation?.history ?? []).map((e) => `iteration ${e.iteration}: ${e.from} → ${e.to} — ${e.reason}`);
  if (cp.councilPlan) lines.push(`bug council plan:\n\n${cp.councilPlan}`);
  return lines;
}
