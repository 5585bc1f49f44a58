import type { Task, TaskStatus } from '../../tasks/schema';
import { ensureProgressFile } from '../../workspace';
import { type Checkpoint, freshCheckpoint } from '../../record/checkpoint';
import { AsideBaseline, runsAtBase } from './baselineAside';
import { environmentAtBase } from './environmentStop';
import { takeIntegrityBaseline } from './integrityStep';
import { isoNow, saveCheckpoint, setTaskStatus } from './taskState';
import type { TaskLoopServices } from './types';

/** Statuses from which running a task resumes it from its checkpoint rather than starting over. */
const RESUMABLE: ReadonlySet<TaskStatus> = new Set(['in_progress', 'halted']);

/** Loads the task's checkpoint (or starts a fresh one), marks the task in progress and announces it. */
export async function startTask(services: TaskLoopServices, initial: Task, maxIterations: number): Promise<{ task: Task; cp: Checkpoint }> {
  const existing = await services.checkpoints.load(initial.id, {
    onCorrupt: 'throw',
    onWarning: (message) => services.emit({ type: 'warning', taskId: initial.id, code: 'checkpoint-restored', message }),
  });
  const resumed = existing !== undefined && RESUMABLE.has(initial.status);
  const cp: Checkpoint = resumed
    ? { ...existing, runId: services.runId }
    : freshCheckpoint(initial.id, services.runId, await services.git.headSha().catch(() => undefined), isoNow(services));
  const task = await setTaskStatus(services, initial, 'in_progress', resumed ? 'resumed from checkpoint' : 'started');
  await ensureProgressFile(services.work ?? services.paths, task);

  services.emit({ type: 'task.started', taskId: task.id, title: task.title, iteration: nextIteration(cp), maxIterations, resumed });

  services.meter.beginTask(task.id, cp.modelUsage, cp.receipt);
  services.commandQuestions?.begin(task, cp.baseCommit);
  return { task, cp };
}

/**
 * What the required gates check at the task's base, recorded once and kept across resumes: in a
 * worktree (the base a commit) taken beside the first iterations (`AsideBaseline`, also after a
 * resume that lacks it); in place, before iteration 1, while the working tree is the base. A
 * checkpoint from before this existed, taken after work began in place, has no base to compare with.
 */
export async function integrityBaselineAtStart(
  services: TaskLoopServices,
  task: Task,
  cp: Checkpoint,
  stop: AbortSignal,
  timeoutMs: number,
): Promise<{ cp: Checkpoint; timedOut?: boolean; aside?: AsideBaseline; environment?: string }> {
  if (cp.integrity || stop.aborted) return { cp };
  // the run at the base counts against the task's time limit like any iteration: a gate that hangs there cannot outlast it
  const deadline = AbortSignal.timeout(Math.max(1, timeoutMs - cp.elapsedMs));
  if (services.work && cp.baseCommit && runsAtBase(task, services)) {
    return { cp, aside: new AsideBaseline(services, task, cp.baseCommit, AbortSignal.any([stop, deadline])) };
  }
  if (cp.iteration > 0 || cp.phase === 'running') {
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'integrity-baseline-missing',
      message: `no gate baseline for ${task.id} (its checkpoint predates it): its gates are not compared with the task's base`,
    });
    return { cp };
  }
  const started = services.clock.now();
  const integrity = await takeIntegrityBaseline(services, task, AbortSignal.any([stop, deadline]));
  const spent = { ...cp, elapsedMs: cp.elapsedMs + Math.max(0, services.clock.now() - started), updatedAt: isoNow(services) };
  if (!integrity) {
    if (!deadline.aborted || stop.aborted) return { cp: spent };
    await saveCheckpoint(services, spent);
    return { cp: spent, timedOut: true };
  }
  // a gate that cannot run here stops the task before its first iteration; the baseline is not kept (taken again once set right)
  const environment = environmentAtBase(integrity);
  if (environment) return { cp: spent, environment };
  const next = { ...spent, integrity };
  await saveCheckpoint(services, next);
  return { cp: next };
}

/** A checkpoint taken mid-iteration resumes that same iteration; one between iterations, the next. */
export function nextIteration(cp: Checkpoint): number {
  return cp.phase === 'between' ? cp.iteration + 1 : cp.iteration;
}
