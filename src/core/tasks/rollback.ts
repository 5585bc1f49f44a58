import { findTaskCommits, REVERTS_TRAILER, type TaskCommit } from '../git/taskCommits';
import { revertCommits } from '../git/taskRevert';
import type { Task } from './schema';

/** What a rollback did, in words for the person and as data for callers. */
export interface RollbackApplied {
  /** The new commit that undid the task's changes, when one was made. */
  commit?: string;
  files: string[];
  summary: string;
}

/**
 * How one task's changes will be undone, shown before anything happens. The default plan
 * reverts the task's commits on the current branch; a task still on its own unmerged branch
 * or worktree (parallel runs) can be planned by another planner that drops the branch instead.
 */
export interface RollbackPlan {
  taskId: string;
  /** `revert` (the default), or the kind another planner adds, e.g. `drop-branch`. */
  kind: string;
  /** The commits that will be undone, oldest first (empty: nothing to undo). */
  commits: TaskCommit[];
  /** One line per thing that will be undone, for the confirmation. */
  describe: string[];
  apply(): Promise<RollbackApplied>;
}

/** Plans the rollback of a task it is responsible for; undefined leaves the task to the next planner. */
export interface RollbackPlanner {
  plan(task: Task): Promise<RollbackPlan | undefined>;
}

/** Reverts the task's commits on HEAD in one new commit; never rewrites history. */
export class RevertPlanner implements RollbackPlanner {
  constructor(private readonly root: string) {}

  async plan(task: Task): Promise<RollbackPlan> {
    const commits = await findTaskCommits(this.root, task.id);
    const describe = commits.map((c) => `${c.sha.slice(0, 7)} ${c.subject}`);
    return {
      taskId: task.id,
      kind: 'revert',
      commits,
      describe,
      apply: async () => {
        if (commits.length === 0) return { files: [], summary: `no commits of ${task.id} are in the history; there was nothing to revert` };
        const message = [
          `ralph(${task.id}): rollback`,
          '',
          `Reverts the ${commits.length === 1 ? 'commit' : `${commits.length} commits`} of task ${task.id} "${task.title}"; later work is kept.`,
          '',
          ...commits.map((c) => `${REVERTS_TRAILER}: ${c.sha}`),
        ].join('\n');
        // `.ralph/` (config, .gitignore) is left alone: it lands in the first task's commit only
        // because nobody committed it before; the task's own progress notes go with its work
        const result = await revertCommits(this.root, commits, message, { exclude: '.ralph', include: [`.ralph/progress/${task.id}.md`] });
        const list = describe.join(', ');
        const summary = result.commit
          ? `reverted ${commits.length === 1 ? 'commit' : `${commits.length} commits`} ${list} in ${result.commit.slice(0, 7)} "ralph(${task.id}): rollback" (${result.files.length} file${result.files.length === 1 ? '' : 's'}: ${abbreviateList(result.files)}); later commits are kept`
          : `the changes of ${list} were already undone by later commits; nothing to revert`;
        return { ...result, summary };
      },
    };
  }
}

function abbreviateList(items: readonly string[], max = 8): string {
  return items.length <= max ? items.join(', ') : `${items.slice(0, max).join(', ')} and ${items.length - max} more`;
}

/** The confirmation's detail: exactly which commits are undone, and that nothing else is. */
export function rollbackConfirmation(plan: RollbackPlan): string {
  if (plan.commits.length === 0 && plan.kind !== 'revert') {
    return `${plan.describe.join('\n')}\nThe task goes back to to do with a fresh iteration counter.`;
  }
  if (plan.commits.length === 0) {
    return `No commits of ${plan.taskId} are in the history, so nothing is reverted; the task goes back to to do with a fresh iteration counter.`;
  }
  const what =
    plan.kind === 'revert'
      ? `A new commit reverts ${plan.commits.length === 1 ? 'this commit' : `these ${plan.commits.length} commits`} of ${plan.taskId}:`
      : `This undoes ${plan.taskId}'s work:`;
  return `${what}\n${plan.describe.map((line) => `  ${line}`).join('\n')}\nCommits of other tasks and your own stay; nothing is reset. If the revert conflicts with later work, nothing changes. The task goes back to to do.`;
}
