import { errorMessage } from '../../errors';
import type { IntegrityBaseline } from '../../gates/integrity';
import { gatesFor } from '../../gates/taskCheck';
import { RalphPaths } from '../../paths';
import type { Task } from '../../tasks/schema';
import { RUN_AT_BASE, takeIntegrityBaseline } from './integrityStep';
import { inScratchWorktree } from './scratchWorktree';
import type { TaskLoopServices } from './types';

type AsideServices = Pick<TaskLoopServices, 'config' | 'gates' | 'baseGates' | 'paths' | 'work' | 'clock' | 'emit'>;

/** Whether a required gate of `task` runs at the base (its baseline is a run of the suite, not only a read of its definition). */
export function runsAtBase(task: Task, services: Pick<TaskLoopServices, 'config'>): boolean {
  return gatesFor(task, services.config.gates).some((g) => g.required && RUN_AT_BASE.has(g.kind));
}

/**
 * The integrity baseline of a task in its own worktree, taken beside its first iteration (issue
 * 23: the agent does not wait for a whole run of the suite before it starts): the base is a
 * commit, so the gates run at it in a scratch worktree of that commit
 * (`.ralph/worktrees/_base-<id>`, the shared folders linked, removed afterwards) while the agent
 * works in its own. The first gates of the task wait for it (`ready`). The run's gate cache
 * shares it among the tasks that start on the same commit.
 */
export class AsideBaseline {
  private readonly abort = new AbortController();
  /** The baseline, or undefined when it was stopped or could not be taken (said as a warning then). */
  readonly ready: Promise<IntegrityBaseline | undefined>;
  private ended = false;

  constructor(
    private readonly services: AsideServices,
    private readonly task: Task,
    base: string,
    stop: AbortSignal,
  ) {
    const signal = AbortSignal.any([stop, this.abort.signal]);
    this.ready = this.take(base, signal)
      .catch((error: unknown) => this.missing(`the scratch worktree at the base failed: ${errorMessage(error)}`, signal))
      .finally(() => {
        this.ended = true;
      });
  }

  /** Whether the run at the base has ended (its baseline taken, or not to be had). */
  get settled(): boolean {
    return this.ended;
  }

  /** The task ended first: the run stops, and its scratch worktree is gone when this resolves. */
  async close(): Promise<void> {
    this.abort.abort();
    await this.ready;
  }

  private async take(base: string, signal: AbortSignal): Promise<IntegrityBaseline | undefined> {
    const { services, task } = this;
    const take = async (scratch: string) =>
      (await takeIntegrityBaseline(
        { ...services, gates: services.baseGates ?? services.gates, work: new RalphPaths(scratch) },
        task,
        signal,
      )) ?? this.missing('the run of the gates at the base was stopped', signal);
    return inScratchWorktree(services, `_base-${task.id}`, base, take, (why) => this.missing(why, signal));
  }

  private missing(why: string, signal: AbortSignal): undefined {
    if (!signal.aborted)
      this.services.emit({
        type: 'warning',
        taskId: this.task.id,
        code: 'integrity-baseline-missing',
        message: `no gate baseline for ${this.task.id} (${why}): its gates are not compared with the task's base`,
      });
    return undefined;
  }
}
