import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { errorMessage, LockError, RalphError, RollbackBlockedError } from '../core/errors';
import { RunLock } from '../core/loop/run/runLock';
import type { RalphPaths } from '../core/paths';
import { openRalph } from '../core/ralph';
import { actionRefusal, EditFieldsSchema, type TaskActionName } from '../core/tasks/actionRules';
import type { TaskActions } from '../core/record/actions';
import { rollbackConfirmation } from '../core/tasks/rollback';
import type { Task } from '../core/tasks/schema';
import { formatZodIssues } from '../core/util/zodIssues';
import type { CliIo } from './io';
import { actAsJson } from './jsonResult';
import { DESTRUCTIVE, type TaskActionCommand, type TaskActionVerb } from './command';

/** Exit codes of `ralph task <action>` (the verbs' definition, verbSpec.ts EXITS, says the same). */
export const ACTION_EXIT = { ok: 0, notDone: 1, usage: 2, notConfirmed: 4 } as const;

const RULE_OF: Record<TaskActionVerb, TaskActionName> = {
  retry: 'retry',
  unblock: 'unblock',
  cancel: 'cancel',
  edit: 'edit',
  'increase-max': 'increaseMax',
  delete: 'remove',
  rollback: 'rollback',
  cleanup: 'cleanup',
};

/** Error codes that mean "the request itself cannot apply" (exit 2), not "it failed" (exit 1). */
const USAGE_CODES = new Set([
  'task-not-found',
  'invalid-transition',
  'task-running',
  'invalid-increase',
  'invalid-task',
  'has-dependents',
  'config',
  'locked',
  'rollback-changed',
  'no-worktree',
]);

/**
 * Runs one task action with the extension's rules (the same status table, the same core
 * actions), asking y/N on a terminal before the destructive ones.
 */
export async function runTaskAction(command: TaskActionCommand, io: CliIo): Promise<number> {
  if (command.json) return actAsJson(command, io, (quiet) => act(command, quiet), exitOf);
  try {
    return await act(command, io);
  } catch (error) {
    io.err(`ralph: ${errorMessage(error)}`);
    return exitOf(error);
  }
}

function exitOf(error: unknown): number {
  if (error instanceof RollbackBlockedError) return ACTION_EXIT.notDone;
  if (error instanceof RalphError && USAGE_CODES.has(error.code)) return ACTION_EXIT.usage;
  return ACTION_EXIT.notDone;
}

async function act(command: TaskActionCommand, io: CliIo): Promise<number> {
  const stat = await fs.stat(command.workspace).catch(() => undefined);
  if (!stat?.isDirectory()) {
    io.err(`ralph: workspace "${command.workspace}" is not a directory`);
    return ACTION_EXIT.usage;
  }
  const ralph = openRalph(path.resolve(command.workspace));
  const { paths, store, actions } = ralph;
  const task = await store.get(command.taskId);
  const refusal = actionRefusal(RULE_OF[command.action], task);
  if (refusal) throw new RalphError(refusal, 'invalid-transition');
  const run = `ralph run --task ${task.id}`;

  switch (command.action) {
    case 'retry': {
      const kept = await actions.worktreeOf(task.id);
      await actions.retry(task.id, { fresh: command.fresh });
      const where = command.fresh
        ? '; it starts over from the current tip of the target branch'
        : kept
          ? `; it continues in its worktree ${kept.relative} (--fresh starts over from the current tip)`
          : '';
      io.out(`${task.id} is back to todo with a fresh iteration counter${where}; run it with: ${run}`);
      return ACTION_EXIT.ok;
    }
    case 'cleanup':
      return cleanup(command, io, actions, task);
    case 'unblock': {
      const updated = await actions.unblock(task.id);
      io.out(
        `${task.id} is unblocked (${updated.status === 'halted' ? 'it resumes from its checkpoint' : 'back to todo'}); run it with: ${run}`,
      );
      return ACTION_EXIT.ok;
    }
    case 'cancel':
      await actions.cancel(task.id);
      io.out(`${task.id} is cancelled; \`ralph task retry ${task.id}\` brings it back`);
      return ACTION_EXIT.ok;
    case 'edit': {
      const parsed = EditFieldsSchema.safeParse(command.fields ?? {});
      if (!parsed.success) throw new RalphError(`invalid task fields: ${formatZodIssues(parsed.error).join('; ')}`, 'invalid-task');
      await actions.edit(task.id, parsed.data);
      io.out(`${task.id} updated (${Object.keys(parsed.data).join(', ')})`);
      return ACTION_EXIT.ok;
    }
    case 'increase-max': {
      const config = await ralph.config.load();
      const raised = await actions.increaseLimit(
        task.id,
        { by: command.by, ...(command.minutes ? { limit: 'minutes' as const } : {}) },
        { maxIterations: config.loop.maxIterations, timeoutMinutes: config.loop.taskTimeoutMinutes },
      );
      const resumable = task.status === 'timeout' && raised.task.status === 'halted';
      const what =
        raised.limit === 'iterations'
          ? `may now run ${raised.to} iterations (was ${raised.from}; ${raised.task.iterations} used)`
          : `may now run for ${raised.to} minutes (was ${raised.from})`;
      io.out(
        `${task.id} ${what}${task.status === 'timeout' ? ` — its ${raised.limit === 'iterations' ? 'iteration' : 'time'} limit ended it` : ''}${resumable ? `; resume it with: ralph run (or ${run})` : ''}`,
      );
      return ACTION_EXIT.ok;
    }
    case 'delete': {
      const detail = 'The task and its checkpoint are removed from .ralph/. Its commits and reports stay.';
      if (!(await confirmed(command, io, `Delete task ${task.id} "${task.title}"?`, detail))) return ACTION_EXIT.notConfirmed;
      await actions.remove(task.id);
      io.out(`deleted ${task.id}`);
      return ACTION_EXIT.ok;
    }
    case 'rollback':
      return rollback(command, io, paths, actions, task);
  }
}

/** Removes the kept worktree; with uncommitted changes in it, only once confirmed (y/N or --yes). */
async function cleanup(command: TaskActionCommand, io: CliIo, actions: TaskActions, task: Task): Promise<number> {
  const kept = await actions.worktreeOf(task.id);
  if (!kept) throw new RalphError(`task ${task.id} has no worktree to clean up`, 'no-worktree');
  let discard = false;
  if (kept.uncommitted.length > 0) {
    const detail = `Uncommitted changes in ${kept.relative} would be lost: ${kept.uncommitted.join(', ')}. The branch ${kept.branch} and its commits stay.`;
    if (!(await confirmed(command, io, `Clean up the worktree of ${task.id} "${task.title}"?`, detail, true)))
      return ACTION_EXIT.notConfirmed;
    discard = true;
  }
  const removed = await actions.cleanUpWorktree(task.id, { discardUncommitted: discard });
  io.out(
    `removed the worktree ${removed.relative} of ${task.id}; the branch ${removed.branch} keeps its commits and ${task.id} stays ${task.status}`,
  );
  return ACTION_EXIT.ok;
}

/** Holds the run lock throughout, so no run starts (and commits) between the plan and the revert. */
async function rollback(command: TaskActionCommand, io: CliIo, paths: RalphPaths, actions: TaskActions, task: Task): Promise<number> {
  let lock: RunLock;
  try {
    lock = await RunLock.acquire(paths, `rollback-${task.id}-${randomBytes(3).toString('hex')}`);
  } catch (error) {
    if (error instanceof LockError) throw new LockError(`${error.message} — stop the run before rolling back a task`, error.holderPid);
    throw error;
  }
  try {
    const plan = await actions.planRollback(task.id);
    if (!(await confirmed(command, io, `Roll back ${task.id} "${task.title}"?`, rollbackConfirmation(plan))))
      return ACTION_EXIT.notConfirmed;
    const outcome = await actions.rollback(task.id, plan);
    io.out(outcome.message);
    return ACTION_EXIT.ok;
  } finally {
    await lock.release();
  }
}

/** y/N on a terminal; --yes answers yes; with neither, refuses and says how to confirm. */
async function confirmed(
  command: TaskActionCommand,
  io: CliIo,
  question: string,
  detail: string,
  destructive = DESTRUCTIVE.has(command.action),
): Promise<boolean> {
  if (!destructive) return true;
  if (command.yes) {
    io.err(`${question}\n${indent(detail)}\nconfirmed (--yes)`);
    return true;
  }
  if (!io.confirm) {
    io.err(
      `ralph: task ${command.action} ${command.taskId} needs confirmation and stdin is not a terminal; nothing was changed.\n${indent(detail)}\nRun it again with --yes to confirm: ralph task ${command.action} ${command.taskId} --yes`,
    );
    return false;
  }
  const yes = await io.confirm(`${question}\n${indent(detail)}\nContinue? [y/N] `);
  if (!yes) io.err('not confirmed; nothing was changed');
  return yes;
}

function indent(text: string): string {
  return text.replace(/^/gm, '  ');
}
