/**
 * The commands that act on one task — Retry, Unblock, Cancel, Delete, Edit, Increase Max
 * Iterations, Rollback — from the tree's context menus, the panel's buttons, the
 * notifications or the palette. The argument is a tree node, a task id, or nothing (then the
 * person picks among the tasks the action applies to).
 */
import * as vscode from 'vscode';
import { z } from 'zod';
import { loadConfig } from '../core/config/load';
import { RalphError } from '../core/errors';
import type { GitService } from '../core/git/gitService';
import type { RalphPaths } from '../core/paths';
import type { TaskActions } from '../core/tasks/actions';
import type { Task, TaskStatus } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import { formatZodIssues } from '../core/util/zodIssues';
import type { Prompts } from '../ui/prompts';
import { TaskNode } from '../ui/taskTree';
import type { RunController } from './runController';

export interface TaskCommandServices {
  paths: RalphPaths;
  store: TaskStore;
  actions: TaskActions;
  git: GitService;
  runs: RunController;
  prompts: Prompts;
}

/** Which statuses each action applies to (the tree's menus in package.json say the same). */
export const ACTION_STATUSES = {
  run: ['todo', 'in_progress', 'halted'],
  retry: ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done'],
  unblock: ['blocked', 'needs_help'],
  cancel: ['todo', 'blocked', 'needs_help', 'timeout', 'failed', 'halted'],
  edit: ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
  increaseMax: ['todo', 'in_progress', 'timeout', 'halted', 'failed'],
  rollback: ['done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
  remove: ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
} as const satisfies Record<string, readonly TaskStatus[]>;

export type TaskActionName = keyof typeof ACTION_STATUSES;

const ACTION_VERB: Record<TaskActionName, string> = {
  run: 'run',
  retry: 'retried',
  unblock: 'unblocked',
  cancel: 'cancelled',
  edit: 'edited',
  increaseMax: 'given more iterations',
  rollback: 'rolled back',
  remove: 'deleted',
};

const EditFieldsSchema = z
  .strictObject({
    title: z.string().trim().min(1).optional(),
    prompt: z.string().trim().min(1).optional(),
    promise: z.string().trim().min(1).optional(),
    priority: z.number().optional(),
    maxIterations: z.number().int().min(1).optional(),
    allowGateChanges: z.union([z.boolean(), z.array(z.string().trim().min(1))]).optional(),
  })
  .refine((fields) => Object.keys(fields).length > 0, 'give at least one field to change');

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
export async function resolveTask(s: Pick<TaskCommandServices, 'store' | 'prompts'>, arg: unknown, action: TaskActionName, placeHolder: string): Promise<Task | undefined> {
  const id = taskIdOf(arg);
  if (id) return s.store.get(id);
  const allowed: readonly TaskStatus[] = ACTION_STATUSES[action];
  const tasks = (await s.store.list()).filter((t) => allowed.includes(t.status));
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage(`Ralph: no task can be ${ACTION_VERB[action]} now (that needs a task that is ${allowed.join(', ').replace(/_/g, ' ')}).`);
    return undefined;
  }
  return s.prompts.pickTask(tasks, placeHolder);
}

export function createTaskCommands(s: TaskCommandServices) {
  const say = (text: string, ...items: string[]) => vscode.window.showInformationMessage(`Ralph: ${text}`, ...items);
  return {
    retryTask: async (arg?: unknown) => {
      const task = await resolveTask(s, arg, 'retry', 'Retry which task?');
      if (!task) return undefined;
      const updated = await s.actions.retry(task.id);
      void say(`${task.id} is back to do with a fresh iteration counter.`, 'Run Now').then((choice) => {
        if (choice) void vscode.commands.executeCommand('ralph.runSelectedTask', task.id);
      });
      return updated;
    },
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
      const confirmed = await s.prompts.confirm(`Delete task ${task.id} "${task.title}"?`, 'The task and its checkpoint are removed from .ralph/. Its commits and reports stay.', 'Delete');
      if (!confirmed) return false;
      await s.actions.remove(task.id);
      return true;
    },
    editTask: async (arg?: unknown, fields?: unknown) => {
      const task = await resolveTask(s, arg, 'edit', 'Edit which task?');
      if (!task) return undefined;
      if (fields !== undefined) {
        const parsed = EditFieldsSchema.safeParse(fields);
        if (!parsed.success) throw new RalphError(`Invalid task fields: ${formatZodIssues(parsed.error).join('; ')}`, 'invalid-task');
        return s.actions.edit(task.id, parsed.data);
      }
      const asked = await askEdits(s.prompts, task);
      if (!asked) return undefined;
      if (Object.keys(asked).length === 0) return task;
      const updated = await s.actions.edit(task.id, asked);
      void say(`${task.id} updated (${Object.keys(asked).join(', ')}).`);
      return updated;
    },
    increaseMaxIterations: async (arg?: unknown, by?: unknown) => {
      const task = await resolveTask(s, arg, 'increaseMax', 'Raise the iteration limit of which task?');
      if (!task) return undefined;
      const config = await loadConfig(s.paths);
      const current = task.maxIterations ?? config.loop.maxIterations;
      let amount = typeof by === 'number' ? by : undefined;
      if (amount === undefined) {
        const text = await s.prompts.input({
          title: `Ralph: Increase Max Iterations of ${task.id}`,
          prompt: `${task.id} may run ${current} iterations (${task.iterations} used). Add how many?`,
          value: '10',
          validateInput: (value) => (/^\s*[1-9]\d{0,3}\s*$/.test(value) ? undefined : 'A whole number from 1 to 9999'),
        });
        if (text === undefined) return undefined;
        amount = Number(text.trim());
      }
      const updated = await s.actions.increaseMaxIterations(task.id, amount, config.loop.maxIterations);
      void say(`${task.id} may now run ${updated.maxIterations} iterations${updated.status === 'halted' && task.status === 'timeout' ? '; run it to resume' : ''}.`);
      return updated;
    },
    rollbackTask: async (arg?: unknown) => {
      const task = await resolveTask(s, arg, 'rollback', 'Roll back which task?');
      if (!task) return undefined;
      if (s.runs.running) throw new RalphError('Ralph is running; stop it before rolling back a task (a rollback resets the working tree).', 'task-running');
      const commit = await s.actions.rollbackTarget(task.id);
      const subject = (await s.git.log(200).catch(() => [])).find((c) => c.sha === commit || c.sha.startsWith(commit) || commit.startsWith(c.sha))?.message;
      const short = commit.slice(0, 7);
      const confirmed = await s.prompts.confirm(
        `Roll back ${task.id} "${task.title}" to commit ${short}?`,
        `The working tree is reset to ${short}${subject ? ` "${subject}"` : ''}, the commit before the task started (git reset --hard). Every change since — by the loop or by you, committed or not — is discarded. The task goes back to do.`,
        'Roll Back',
      );
      if (!confirmed) return undefined;
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Ralph: rolling ${task.id} back to ${short}` },
        () => s.actions.rollback(task.id),
      );
      void say(`${task.id} rolled back to ${short}; it is back to do.`);
      return result;
    },
  };
}

/** Title, request and promise, each pre-filled; only what changed is returned (undefined: cancelled). */
async function askEdits(prompts: Prompts, task: Task): Promise<Partial<Pick<Task, 'title' | 'prompt' | 'promise'>> | undefined> {
  const required = (what: string) => (text: string) => (text.trim() ? undefined : `${what} is required`);
  const fields = [
    ['title', 'The short title', 'A title'],
    ['prompt', 'The exact request for the agent (kept verbatim)', 'The request'],
    ['promise', 'The promise: what must be true for the task to count as done', 'The promise'],
  ] as const;
  const changes: Partial<Pick<Task, 'title' | 'prompt' | 'promise'>> = {};
  for (const [index, [key, prompt, what]] of fields.entries()) {
    const value = await prompts.input({ title: `Ralph: Edit ${task.id} (${index + 1}/3)`, prompt, value: task[key], validateInput: required(what) });
    if (value === undefined) return undefined;
    if (value.trim() !== task[key]) changes[key] = value.trim();
  }
  return changes;
}
