import { RalphError } from '../errors';
import { runGit } from '../git/gitExec';
import { reviewRef } from './holdSchema';
import type { GitService } from '../git/gitService';
import type { Checkpoint, CheckpointStore } from './checkpoint';
import type { EditFields } from '../tasks/actionRules';
import { openQuestion, withAnswer } from '../tasks/questions';
import { dependencyBlocks } from '../tasks/select';
import type { Task, TaskStatus } from '../tasks/schema';
import type { TaskStore } from '../tasks/store';
import { RevertPlanner, type RollbackApplied, type RollbackPlan, type RollbackPlanner } from '../tasks/rollback';
import type { KeptWorktree, TaskWorktrees } from '../tasks/taskWorktrees';

export type LimitKind = 'iterations' | 'minutes';

/** The answers to a `verdict` question: the failing tests are part of the task, or unrelated to it (land without them). */
export type VerdictAnswer = 'part' | 'unrelated';

/** How an answer to a `verdict` question is kept in the task's history (and pinned in its context). */
export const VERDICT_WORDS: Record<VerdictAnswer, string> = {
  part: 'part of this task: keep working until these tests pass',
  unrelated: 'unrelated to this task: land without them (they are known failures of this task now)',
};

/** What Increase Limit raised: the limit, from and to (iterations, or minutes). */
export interface LimitRaised {
  task: Task;
  limit: LimitKind;
  from: number;
  to: number;
}

/** Which limit ended a timed-out task: minutes when its active time reached its time limit, else iterations. */
export function endedBy(
  task: Task,
  checkpoint: Checkpoint | undefined,
  defaults: { maxIterations: number; timeoutMinutes: number },
): LimitKind {
  const minutes = task.timeoutMinutes ?? defaults.timeoutMinutes;
  if (checkpoint && checkpoint.elapsedMs >= minutes * 60_000) return 'minutes';
  if (/task timeout/.test(task.blockedReason ?? '')) return 'minutes';
  return 'iterations';
}

export interface RollbackOutcome {
  task: Task;
  plan: RollbackPlan;
  applied: RollbackApplied;
  /** What was done, in one paragraph for the person. */
  message: string;
}

/**
 * What a person can do to a task from the tree, the panel or the CLI. Each action checks the
 * task's status first, so a menu shown for a stale tree cannot corrupt the store.
 */
export class TaskActions {
  private readonly planners: readonly RollbackPlanner[];

  constructor(
    private readonly store: TaskStore,
    private readonly checkpoints: CheckpointStore,
    git: Pick<GitService, 'root'>,
    /** Consulted in order before the default (revert the task's commits), e.g. for a task on its own branch. */
    planners: readonly RollbackPlanner[] = [],
    /** The kept worktrees of parallel tasks: Retry from the current tip, Clean Up Worktree. */
    private readonly worktrees?: TaskWorktrees,
  ) {
    this.planners = [...planners, new RevertPlanner(git.root)];
    this.root = git.root;
  }

  private readonly root: string;

  /**
   * timeout / failed / halted / cancelled / blocked / needs_help / done → todo with a fresh
   * iteration counter. A kept worktree is continued in by default; `fresh` drops it and its
   * branch first, so the task starts over from the target's current tip.
   */
  async retry(id: string, options: { fresh?: boolean } = {}): Promise<Task> {
    const task = await this.expect(id, ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done', 'review'], 'retried');
    // a result held for review is not kept: the task starts over
    if (task.status === 'review') await runGit(this.root, ['update-ref', '-d', reviewRef(id)]);
    if (options.fresh) {
      if (!this.worktrees) throw new RalphError('retrying from the current tip needs the worktree manager', 'no-worktrees');
      await this.worktrees.dropForFresh(id);
    }
    await this.checkpoints.clear(id);
    return this.store.update(task.id, {
      status: 'todo',
      iterations: 0,
      progress: undefined,
      lastSignal: undefined,
      blockedReason: undefined,
    });
  }

  /** blocked / needs_help → todo, keeping the iteration count and checkpoint (the answer is in the prompt or notes). */
  async unblock(id: string): Promise<Task> {
    const task = await this.expect(id, ['blocked', 'needs_help'], 'unblocked');
    const checkpoint = await this.checkpoints.load(id);
    // resumable from its checkpoint: `halted` resumes, `todo` would start over
    return this.store.update(task.id, { status: checkpoint ? 'halted' : 'todo', blockedReason: undefined });
  }

  /** The task's kept worktree (and its uncommitted files), if it has one. */
  async worktreeOf(id: string): Promise<KeptWorktree | undefined> {
    return this.worktrees?.find(id);
  }

  /**
   * Clean Up Worktree: removes the kept worktree of a task that ended (failed, timeout, halted,
   * blocked, needs_help, cancelled), keeping its branch and its status. Uncommitted changes in
   * it refuse the clean-up (UncommittedWorkError) unless `discardUncommitted`.
   */
  async cleanUpWorktree(id: string, options: { discardUncommitted: boolean }): Promise<KeptWorktree> {
    await this.expect(id, ['failed', 'timeout', 'halted', 'blocked', 'needs_help', 'cancelled'], 'cleaned up');
    if (!this.worktrees) throw new RalphError('cleaning up worktrees needs the worktree manager', 'no-worktrees');
    return this.worktrees.cleanUp(id, options);
  }

  async cancel(id: string): Promise<Task> {
    const task = await this.expect(id, ['todo', 'blocked', 'needs_help', 'timeout', 'failed', 'halted'], 'cancelled');
    return this.store.update(task.id, { status: 'cancelled' });
  }

  /** Raises the task's iteration limit; a timed-out task becomes resumable again. */
  async increaseMaxIterations(id: string, by: number, defaultMax: number): Promise<Task> {
    return (
      await this.increaseLimit(id, { by, limit: 'iterations' }, { maxIterations: defaultMax, timeoutMinutes: Number.POSITIVE_INFINITY })
    ).task;
  }

  /** Which limit Increase Limit raises for this task by default: the one that ended it (iterations otherwise). */
  async limitToRaise(id: string, defaults: { maxIterations: number; timeoutMinutes: number }): Promise<LimitKind> {
    const task = await this.store.get(id);
    return task.status === 'timeout' ? endedBy(task, await this.checkpoints.load(id), defaults) : 'iterations';
  }

  /**
   * Increase Limit: raises whichever limit ended the task — its iterations, or its minutes (a
   * time-out by the clock) — or the one named; a timed-out task becomes resumable from its
   * checkpoint. Says which limit it raised, from what to what.
   */
  async increaseLimit(
    id: string,
    request: { by?: number; limit?: LimitKind },
    defaults: { maxIterations: number; timeoutMinutes: number },
  ): Promise<LimitRaised> {
    const task = await this.store.get(id);
    const checkpoint = await this.checkpoints.load(id);
    const limit = request.limit ?? (task.status === 'timeout' ? endedBy(task, checkpoint, defaults) : 'iterations');
    const by = request.by ?? (limit === 'iterations' ? 10 : defaults.timeoutMinutes);
    if (!(by > 0) || (limit === 'iterations' && !Number.isInteger(by)))
      throw new RalphError(
        limit === 'iterations' ? 'the increase must be a whole number of at least 1' : 'the increase must be a number of minutes above 0',
        'invalid-increase',
      );
    const resumable = task.status === 'timeout' && checkpoint !== undefined ? { status: 'halted' as const, blockedReason: undefined } : {};
    if (limit === 'iterations') {
      const from = task.maxIterations ?? defaults.maxIterations;
      const to = Math.max(from, task.iterations) + by;
      return { task: await this.store.update(task.id, { maxIterations: to, ...resumable }), limit, from, to };
    }
    const from = task.timeoutMinutes ?? defaults.timeoutMinutes;
    const used = (checkpoint?.elapsedMs ?? 0) / 60_000;
    const to = Math.round((Math.max(from, used) + by) * 100) / 100;
    return { task: await this.store.update(task.id, { timeoutMinutes: to, ...resumable }), limit, from, to };
  }

  /**
   * Answers the task's open question (NEEDS_HELP, a block, a gated command nobody could
   * approve): the answer joins its question history, is pinned in every later iteration's
   * context, and the task is ready again — resumed from its checkpoint (in its worktree in a
   * parallel run) by the next Start, or by the running autopilot.
   */
  async answer(id: string, text: string, options: { approved?: boolean; verdict?: VerdictAnswer } = {}): Promise<Task> {
    const task = await this.expect(id, ['needs_help', 'blocked'], 'answered');
    const answer = text.trim();
    const open = openQuestion(task.questions);
    if (!answer && options.approved === undefined && options.verdict === undefined)
      throw new RalphError('the answer is empty; say what the agent should know or do', 'invalid-answer');
    if (options.approved !== undefined && open?.kind !== 'command')
      throw new RalphError(`task ${id} does not wait for a command's approval; answer its question in words`, 'invalid-answer');
    if (options.verdict !== undefined && open?.kind !== 'verdict')
      throw new RalphError(`task ${id} does not ask whether failing tests are part of it; answer its question in words`, 'invalid-answer');
    const said = options.verdict ? `${VERDICT_WORDS[options.verdict]}${answer ? `: ${answer}` : ''}` : answer;
    const words = said || (options.approved ? 'approved' : 'not approved');
    const questions = withAnswer(task.questions, {
      text: words,
      at: new Date().toISOString(),
      approved: options.approved,
      question: task.blockedReason ?? 'the task stopped for help',
    });
    // unrelated: the tests asked about become the task's known failures, not held against it any more
    const known =
      options.verdict === 'unrelated' ? { knownFailures: [...new Set([...(task.knownFailures ?? []), ...(open?.tests ?? [])])] } : {};
    const checkpoint = await this.checkpoints.load(id);
    return this.store.update(task.id, { status: checkpoint ? 'halted' : 'todo', blockedReason: undefined, questions, ...known });
  }

  async edit(id: string, fields: EditFields): Promise<Task> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before editing`, 'task-running');
    if (fields.dependsOn) await this.checkDependencies(task.id, fields.dependsOn);
    const { check, knownFailures, ...rest } = fields;
    // `check: null` (the editor) or an empty string (the CLI) removes the task's check command; an empty list its known failures
    return this.store.update(task.id, {
      ...rest,
      ...(check !== undefined ? { check: check || undefined } : {}),
      ...(knownFailures !== undefined ? { knownFailures: knownFailures.length ? knownFailures : undefined } : {}),
    });
  }

  /** A dependency must be in the store, not the task itself, and close no cycle. */
  private async checkDependencies(id: string, dependsOn: readonly string[]): Promise<void> {
    const tasks = await this.store.list();
    for (const dep of dependsOn) {
      if (dep === id) throw new RalphError(`task ${id} cannot depend on itself`, 'invalid-task');
      if (!tasks.some((t) => t.id === dep))
        throw new RalphError(`task ${id} cannot depend on "${dep}", which is not in the store`, 'unknown-dependency');
    }
    const trial = tasks.map((t) => (t.id === id ? { ...t, status: 'todo' as const, dependsOn: [...dependsOn] } : t));
    const block = dependencyBlocks(trial).get(id);
    if (block?.kind === 'invalid')
      throw new RalphError(`task ${id} cannot depend on ${dependsOn.join(', ')}: ${block.message}`, 'invalid-task');
  }

  async remove(id: string): Promise<void> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before deleting`, 'task-running');
    await this.store.remove(id);
    await this.checkpoints.clear(id);
  }

  /**
   * What a rollback of the task would undo — its own commits, found in the history — for the
   * confirmation. Nothing changes until `rollback` is called with this plan.
   */
  async planRollback(id: string): Promise<RollbackPlan> {
    const task = await this.store.get(id);
    if (task.status === 'in_progress') throw new RalphError(`task ${id} is running; stop it before rolling back`, 'task-running');
    for (const planner of this.planners) {
      const plan = await planner.plan(task);
      if (plan) return plan;
    }
    throw new RalphError(`no way to roll back task ${id}`, 'no-rollback');
  }

  /**
   * Undoes exactly this task's changes (by default: reverts its commits in one new commit,
   * keeping every later commit of other tasks and of the person), then puts the task back to
   * `todo`. When the person confirmed a plan, the rollback is refused if the task's commits
   * changed since. A revert that conflicts or would touch uncommitted work changes nothing
   * (RollbackBlockedError names the files and who changed them).
   */
  async rollback(id: string, confirmed?: RollbackPlan): Promise<RollbackOutcome> {
    const plan = await this.planRollback(id);
    if (
      confirmed &&
      (confirmed.kind !== plan.kind || confirmed.commits.map((c) => c.sha).join() !== plan.commits.map((c) => c.sha).join())
    ) {
      throw new RalphError(
        `the commits of task ${id} changed since the rollback was confirmed; nothing was changed, look at it again`,
        'rollback-changed',
      );
    }
    const applied = await plan.apply();
    await this.checkpoints.clear(id);
    const task = await this.store.update(id, {
      status: 'todo',
      iterations: 0,
      progress: undefined,
      lastSignal: undefined,
      blockedReason: undefined,
    });
    const dependents = (await this.store.list())
      .filter((t) => t.dependsOn.includes(id) && t.status !== 'todo')
      .map((t) => `${t.id} (${t.status})`);
    const notes = dependents.length > 0 ? ` Tasks that depend on it keep their status: ${dependents.join(', ')}.` : '';
    return { task, plan, applied, message: `${id}: ${applied.summary}. ${id} is back to todo.${notes}` };
  }

  private async expect(id: string, allowed: TaskStatus[], verb: string): Promise<Task> {
    const task = await this.store.get(id);
    if (!allowed.includes(task.status)) throw new RalphError(`task ${id} is ${task.status}; it cannot be ${verb}`, 'invalid-transition');
    return task;
  }
}
