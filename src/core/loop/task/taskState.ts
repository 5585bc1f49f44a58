import type { Question } from '../../tasks/questions';
import type { Task, TaskStatus } from '../../tasks/schema';
import type { Checkpoint } from '../../record/checkpoint';
import { boundOptionalText } from '../../util/bounded';
import type { TaskLoopServices } from './types';

/** The council's plan as the checkpoint keeps it. */
const COUNCIL_PLAN_MAX = 16_000;

/** Saves the task's checkpoint, with the live receipt, and announces it. */
export async function saveCheckpoint(
  services: Pick<TaskLoopServices, 'meter' | 'checkpoints' | 'emit' | 'paths'>,
  cp: Checkpoint,
): Promise<void> {
  // the receipt rides with the checkpoint: one atomic write, and a resume starts from it
  // save() parses the checkpoint into its own objects first thing: the live receipt needs no copy
  const receipt = services.meter.currentTaskId === cp.taskId ? services.meter.taskReceiptView : cp.receipt;
  // the council's plan is a model's text too: kept bounded like the records' texts
  const file = await services.checkpoints.save({ ...cp, receipt, councilPlan: boundOptionalText(cp.councilPlan, COUNCIL_PLAN_MAX) });
  services.emit({ type: 'checkpoint', taskId: cp.taskId, iteration: cp.iteration, file: services.paths.relative(file) });
}

/** Sets the task's status in the store (with its blocked reason and questions); a change of status is announced. */
export async function setTaskStatus(
  services: Pick<TaskLoopServices, 'store' | 'emit'>,
  task: Task,
  to: TaskStatus,
  reason: string,
  blockedReason?: string,
  questions?: Question[],
): Promise<Task> {
  const updated = await services.store.update(task.id, { status: to, blockedReason, ...(questions ? { questions } : {}) });
  if (task.status !== to) services.emit({ type: 'task.status', taskId: task.id, from: task.status, to, reason });
  return updated;
}

/** Now on the services' clock, as an ISO time. */
export function isoNow(services: Pick<TaskLoopServices, 'clock'>): string {
  return new Date(services.clock.now()).toISOString();
}
