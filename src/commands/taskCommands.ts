/**
 * The commands that act on one task — Retry, Unblock, Cancel, Delete, Edit, Increase Max
 * Iterations, Rollback — from the tree's context menus, the panel's buttons, the
 * notifications or the palette. The argument is a tree node, a task id, or nothing (then the
 * person picks among the tasks the action applies to).
 */
import * as vscode from 'vscode';
import type { ConfigService } from '../core/config/service';
import { RalphError, RollbackBlockedError } from '../core/errors';
import { ACTION_STATUSES, ACTION_VERB, type EditFields, EditFieldsSchema, type TaskActionName } from '../core/tasks/actionRules';
import { askTaskSettings } from './taskFields';
import type { GitService } from '../core/git/gitService';
import { RunLock } from '../core/loop/run/runLock';
import type { RalphPaths } from '../core/paths';
import type { TaskActions } from '../core/record/actions';
import { rollbackConfirmation } from '../core/tasks/rollback';
import type { Task, TaskStatus } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import { formatZodIssues } from '../core/util/zodIssues';
import type { Prompts } from '../ui/dialogs';
import { TaskNode } from '../ui/taskTree';
import type { RunController } from './runController';

export interface TaskCommandServices {
  paths: RalphPaths;
  /** The workspace's one ConfigService (the façade's, core/ralph.ts). */
  config: ConfigService;
  store: TaskStore;
  actions: TaskActions;
  git: GitService;
  runs: RunController;
  prompts: Prompts;
  /** A task's worktree was removed or dropped: the tree and the panel read it again. */
  worktreeChanged(taskId: string): void;
}

/** How Retry treats a kept worktree: an argument (`'fresh'`, `{ fresh: true }`…) or the person's choice. */
function retryModeOf(arg: unknown): 'continue' | 'fresh' | undefined {
  if (arg === 'fresh' || arg === 'continue') return arg;
  if (arg && typeof arg === 'object' && typeof (arg as { fresh?: unknown }).fresh === 'boolean')
    return (arg as { fresh: boolean }).fresh ? 'fresh' : 'continue';
  return undefined;
}

export { ACTION_STATUSES, type TaskActionName };

/** An information message from Ralph, with its action buttons. */
export const say = (text: string, ...items: string[]) => vscode.window.showInformationMessage(`Ralph: ${text}`, ...items);

/** The task id a command argument names: a tree node, a task, or an id. */
export function taskIdOf(arg: unknown): string | undefined {
  if (arg instanceof TaskNode) return arg.task.id;
  if (typeof arg === 'string' && arg.trim()) return arg.trim();
  if (arg && typeof arg === 'object') {
    const record = arg as { id?: unknown; task?: { id?: unknown } };
    if (typeof record.id === 'string') return record.id;
    if (typeof record.task?.id === 'string') return record.task.id;
  }
  return undefined;
}

/** The task the argument names, or the one the person picks among those the action applies to. */
export async function resolveTask(
  s: Pick<TaskCommandServices, 'store' | 'prompts'>,
  arg: unknown,
  action: TaskActionName,
  placeHolder: string,
): Promise<Task | undefined> {
  const id = taskIdOf(arg);
  if (id) return s.store.get(id);
  const allowed: readonly TaskStatus[] = ACTION_STATUSES[action];
  const tasks = (await s.store.list()).filter((t) => allowed.includes(t.status));
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage(
      `Ralph: no task can be ${ACTION_VERB[action]} now (that needs a task that is ${allowed.join(', ').replace(/_/g, ' ')}).`,
    );
    return undefined;
  }
  return s.prompts.pickTask(tasks, placeHolder);
}

async function retryTask(s: TaskCommandServices, arg?: unknown, how?: unknown) {
  const task = await resolveTask(s, arg, 'retry', 'Retry which task?');
  if (!task) return undefined;
  const kept = await s.actions.worktreeOf(task.id);
  let mode = retryModeOf(how) ?? (kept ? undefined : 'continue');
  if (!mode && kept) {
    const dirty =
      kept.uncommitted.length > 0 ? ` and ${kept.uncommitted.length} uncommitted change${kept.uncommitted.length === 1 ? '' : 's'}` : '';
    mode = await s.prompts.choose(`Retry ${task.id}: it has a worktree (${kept.relative})`, [
      {
        id: 'continue',
        label: '$(debug-continue) Continue in its worktree',
        detail: `Keeps ${kept.relative} on ${kept.branch} with its commits${dirty}; a fresh iteration counter.`,
      },
      {
        id: 'fresh',
        label: '$(refresh) Start fresh from the current tip',
        detail: `Drops ${kept.relative} and the branch ${kept.branch}${dirty}; the task starts over from the target branch as it is now.`,
      },
    ]);
    if (!mode) return undefined;
  }
  const updated = await s.actions.retry(task.id, { fresh: mode === 'fresh' });
  if (mode === 'fresh' && kept) s.worktreeChanged(task.id);
  const where = kept ? (mode === 'fresh' ? ' It starts over from the current tip.' : ` It continues in ${kept.relative}.`) : '';
  void say(`${task.id} is back to do with a fresh iteration counter.${where}`, 'Run Now').then((choice) => {
    if (choice) void vscode.commands.executeCommand('ralph.runSelectedTask', task.id);
  });
  return updated;
}

async function cleanUpWorktree(s: TaskCommandServices, arg?: unknown, confirmDiscard?: unknown) {
  const task = await resolveTask(s, arg, 'cleanup', 'Clean up the worktree of which task?');
  if (!task) return undefined;
  const kept = await s.actions.worktreeOf(task.id);
  if (!kept) {
    void say(`${task.id} has no worktree to clean up.`);
    return undefined;
  }
  let discard = false;
  if (kept.uncommitted.length > 0) {
    const files =
      kept.uncommitted.slice(0, 12).join('\n') + (kept.uncommitted.length > 12 ? `\n… and ${kept.uncommitted.length - 12} more` : '');
    discard =
      confirmDiscard === true ||
      (await s.prompts.confirm(
        `The worktree of ${task.id} has uncommitted changes`,
        `${kept.relative} holds changes that were never committed; removing it loses them:\n${files}\n\nThe branch ${kept.branch} and its commits stay.`,
        'Discard Changes and Remove',
      ));
    if (!discard) {
      void say(`the worktree of ${task.id} was not removed: it has uncommitted changes in ${kept.relative}.`);
      return undefined;
    }
  }
  const removed = await s.actions.cleanUpWorktree(task.id, { discardUncommitted: discard });
  s.worktreeChanged(task.id);
  void say(
    `removed the worktree ${removed.relative}; the branch ${removed.branch} keeps its commits and ${task.id} stays ${task.status.replace('_', ' ')}.`,
  );
  return removed;
}

async function editTask(s: TaskCommandServices, arg?: unknown, fields?: unknown) {
  const task = await resolveTask(s, arg, 'edit', 'Edit which task?');
  if (!task) return undefined;
  if (fields !== undefined) {
    const parsed = EditFieldsSchema.safeParse(fields);
    if (!parsed.success) throw new RalphError(`Invalid task fields: ${formatZodIssues(parsed.error).join('; ')}`, 'invalid-task');
    return s.actions.edit(task.id, parsed.data);
  }
  const asked = await askEdits(s.prompts, task);
  if (!asked) return undefined;
  Object.assign(asked, await askTaskSettings(s.prompts, task, await s.store.list(), await s.config.load().catch(() => undefined)));
  if (Object.keys(asked).length === 0) return task;
  const updated = await s.actions.edit(task.id, asked);
  void say(`${task.id} updated (${Object.keys(asked).join(', ')}).`);
  return updated;
}

/** Increase Limit: raises the limit that ended the task — its iterations, or its minutes after a time-out by the clock — and says which. */
async function increaseMaxIterations(s: TaskCommandServices, arg?: unknown, by?: unknown) {
  const task = await resolveTask(s, arg, 'increaseMax', 'Raise the limit of which task?');
  if (!task) return undefined;
  const config = await s.config.load();
  const defaults = { maxIterations: config.loop.maxIterations, timeoutMinutes: config.loop.taskTimeoutMinutes };
  const limit = await s.actions.limitToRaise(task.id, defaults);
  let amount = typeof by === 'number' ? by : undefined;
  if (amount === undefined) {
    const minutes = limit === 'minutes';
    const text = await s.prompts.input({
      title: `Ralph: Increase Limit of ${task.id}`,
      prompt: minutes
        ? `${task.id} timed out on its time limit (${task.timeoutMinutes ?? config.loop.taskTimeoutMinutes} min). Add how many minutes?`
        : `${task.id} may run ${task.maxIterations ?? config.loop.maxIterations} iterations (${task.iterations} used). Add how many?`,
      value: minutes ? String(config.loop.taskTimeoutMinutes) : '10',
      validateInput: (value) =>
        minutes
          ? /^\s*\d+(?:\.\d+)?\s*$/.test(value) && Number(value) > 0
            ? undefined
            : 'A number of minutes above 0'
          : /^\s*[1-9]\d{0,3}\s*$/.test(value)
            ? undefined
            : 'A whole number from 1 to 9999',
    });
    if (text === undefined) return undefined;
    amount = Number(text.trim());
  }
  const raised = await s.actions.increaseLimit(task.id, { by: amount, limit }, defaults);
  const what =
    raised.limit === 'iterations'
      ? `may now run ${raised.to} iterations (was ${raised.from})`
      : `may now run for ${raised.to} minutes (was ${raised.from})`;
  void say(
    `${task.id} ${what}${task.status === 'timeout' ? ` — its ${raised.limit === 'iterations' ? 'iteration' : 'time'} limit ended it; it resumes at the next Start` : ''}.`,
  );
  return raised.task;
}

async function rollbackTask(s: TaskCommandServices, arg?: unknown) {
  const task = await resolveTask(s, arg, 'rollback', 'Roll back which task?');
  if (!task) return undefined;
  if (s.runs.running)
    throw new RalphError(
      'Ralph is running; stop it before rolling back a task (its commits would interleave with the revert).',
      'task-running',
    );
  const plan = await s.actions.planRollback(task.id);
  const confirmed = await s.prompts.confirm(`Roll back ${task.id} "${task.title}"?`, rollbackConfirmation(plan), 'Roll Back');
  if (!confirmed) return undefined;
  // the run lock keeps a run (here or in a terminal) from committing while the revert is applied
  const lock = await RunLock.acquire(s.paths, `rollback-${task.id}-${Date.now().toString(36)}`);
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Ralph: rolling back ${task.id}` },
      () => s.actions.rollback(task.id, plan),
    );
    void say(result.message);
    return result;
  } catch (error) {
    if (!(error instanceof RollbackBlockedError)) throw error;
    // the files and who changed them need more room than a notification line
    void vscode.window.showErrorMessage(`Ralph: ${task.id} was not rolled back; nothing was changed.`, {
      modal: true,
      detail: error.message,
    });
    return undefined;
  } finally {
    await lock.release();
  }
}

export function createTaskCommands(s: TaskCommandServices) {
  return {
    retryTask: (arg?: unknown, how?: unknown) => retryTask(s, arg, how),
    cleanUpWorktree: (arg?: unknown, confirmDiscard?: unknown) => cleanUpWorktree(s, arg, confirmDiscard),
    unblockTask: async (arg?: unknown) => {
      const task = await resolveTask(s, arg, 'unblock', 'Unblock which task?');
      if (!task) return undefined;
      const updated = await s.actions.unblock(task.id);
      void say(`${task.id} is unblocked (${updated.status === 'halted' ? 'it resumes from its checkpoint' : 'back to do'}).`);
      return updated;
    },
    cancelTask: async (arg?: unknown) => {
      const task = await resolveTask(s, arg, 'cancel', 'Cancel which task?');
      if (!task) return undefined;
      return s.actions.cancel(task.id);
    },
    deleteTask: async (arg?: unknown) => {
      const task = await resolveTask(s, arg, 'remove', 'Delete which task?');
      if (!task) return false;
      const confirmed = await s.prompts.confirm(
        `Delete task ${task.id} "${task.title}"?`,
        'The task and its checkpoint are removed from .ralph/. Its commits and reports stay.',
        'Delete',
      );
      if (!confirmed) return false;
      await s.actions.remove(task.id);
      return true;
    },
    editTask: (arg?: unknown, fields?: unknown) => editTask(s, arg, fields),
    increaseMaxIterations: (arg?: unknown, by?: unknown) => increaseMaxIterations(s, arg, by),
    rollbackTask: (arg?: unknown) => rollbackTask(s, arg),
  };
}

/** Title, request and promise, each pre-filled; only what changed is returned (undefined: cancelled). */
async function askEdits(prompts: Prompts, task: Task): Promise<EditFields | undefined> {
  const required = (what: string) => (text: string) => (text.trim() ? undefined : `${what} is required`);
  const fields = [
    ['title', 'The short title', 'A title'],
    ['prompt', 'The exact request for the agent (kept verbatim)', 'The request'],
    ['promise', 'The promise: what must be true for the task to count as done', 'The promise'],
  ] as const;
  const changes: EditFields = {};
  for (const [index, [key, prompt, what]] of fields.entries()) {
    const value = await prompts.input({
      title: `Ralph: Edit ${task.id} (${index + 1}/3)`,
      prompt,
      value: task[key],
      validateInput: required(what),
    });
    if (value === undefined) return undefined;
    if (value.trim() !== task[key]) changes[key] = value.trim();
  }
  return changes;
}
