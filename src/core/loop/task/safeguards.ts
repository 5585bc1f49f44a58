import type { SafeguardAnswer, SafeguardCode } from '../../ports';
import type { Task } from '../../tasks/schema';
import type { Checkpoint } from '../../record/checkpoint';
import type { TaskLoopServices } from './types';

type SafeguardServices = Pick<TaskLoopServices, 'config' | 'store' | 'emit' | 'safeguards'>;

export interface SafeguardOutcome {
  cp: Checkpoint;
  task: Task;
  /** The task must end: the person (or the unattended policy) said stop. */
  stop?: { status: 'halted' | 'failed'; reason: string };
}

/**
 * The warnings of `safeguards` after an iteration: no commit for `noCommitWarnIterations`
 * iterations, `iterationWarnRatio` of the iteration limit used, `errorThreshold` consecutive
 * errors. Each asks the SafeguardPrompt (Continue / Stop / Increase max) and applies the answer.
 */
export async function checkSafeguards(
  services: SafeguardServices,
  task: Task,
  cp: Checkpoint,
  maxIterations: number,
): Promise<SafeguardOutcome> {
  const { safeguards } = services.config;
  const n = cp.iteration;
  let out: SafeguardOutcome = { cp, task };

  if (cp.consecutiveErrors >= safeguards.errorThreshold) {
    const answer = await ask(
      services,
      task,
      'error-threshold',
      `${cp.consecutiveErrors} consecutive iterations ended in errors (last: ${cp.history.at(-1)?.error ?? 'unknown'}); review them before going on`,
      n,
      maxIterations,
    );
    if (answer.action === 'stop')
      return {
        ...out,
        stop: {
          status: 'failed',
          reason: `${cp.consecutiveErrors} consecutive iterations failed; last error: ${cp.history.at(-1)?.error ?? 'unknown'}`,
        },
      };
    out = { ...out, cp: { ...out.cp, consecutiveErrors: 0 } };
  }

  const sinceCommit = iterationsWithoutCommit(cp);
  if (sinceCommit > 0 && sinceCommit % safeguards.noCommitWarnIterations === 0 && cp.warned.noCommitsAt !== n) {
    const answer = await ask(
      services,
      task,
      'no-commits',
      `no commits in ${sinceCommit} iterations: the agent may be stuck`,
      n,
      maxIterations,
    );
    out = { ...out, cp: { ...out.cp, warned: { ...out.cp.warned, noCommitsAt: n } } };
    if (answer.action === 'stop')
      return { ...out, stop: { status: 'halted', reason: `stopped after the warning: no commits in ${sinceCommit} iterations` } };
  }

  const threshold = Math.ceil(maxIterations * safeguards.iterationWarnRatio);
  if (n >= threshold && n < maxIterations && !out.cp.warned.ratio) {
    const answer = await ask(
      services,
      task,
      'iteration-ratio',
      `${n} of ${maxIterations} iterations used (${Math.round((n / maxIterations) * 100)}%)`,
      n,
      maxIterations,
    );
    out = { ...out, cp: { ...out.cp, warned: { ...out.cp.warned, ratio: true } } };
    if (answer.action === 'stop')
      return { ...out, stop: { status: 'halted', reason: `stopped after the warning: ${n} of ${maxIterations} iterations used` } };
    if (answer.action === 'increase') {
      const updated = await services.store.update(task.id, { maxIterations: maxIterations + answer.by });
      // a raised limit can be warned about again when its own ratio is reached
      out = { ...out, task: updated, cp: { ...out.cp, warned: { ...out.cp.warned, ratio: false } } };
    }
  }
  return out;
}

async function ask(
  services: SafeguardServices,
  task: Task,
  code: SafeguardCode,
  message: string,
  iteration: number,
  maxIterations: number,
): Promise<SafeguardAnswer> {
  services.emit({ type: 'warning', taskId: task.id, code, message, iteration, maxIterations });
  const answer = await services.safeguards.decide({ code, taskId: task.id, message, iteration, maxIterations });
  services.emit({
    type: 'warning.answered',
    taskId: task.id,
    code,
    action: answer.action === 'increase' ? `increase by ${answer.by}` : answer.action,
  });
  return answer;
}

function iterationsWithoutCommit(cp: Checkpoint): number {
  let count = 0;
  for (let i = cp.history.length - 1; i >= 0 && !cp.history[i].commit; i--) count++;
  return count;
}
