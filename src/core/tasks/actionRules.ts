import { z } from 'zod';
import { ProofSchema, type TaskStatus } from './schema';

/**
 * Which statuses each task action applies to: the tree's menus (package.json), the panel, the
 * palette and the CLI all follow this one table.
 */
export const ACTION_STATUSES = {
  run: ['todo', 'in_progress', 'halted'],
  retry: ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done'],
  unblock: ['blocked', 'needs_help'],
  cancel: ['todo', 'blocked', 'needs_help', 'timeout', 'failed', 'halted'],
  edit: ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
  increaseMax: ['todo', 'in_progress', 'timeout', 'halted', 'failed'],
  rollback: ['done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
  remove: ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
  /** Clean Up Worktree (only where the task has a kept worktree). */
  cleanup: ['failed', 'timeout', 'halted', 'blocked', 'needs_help', 'cancelled'],
} as const satisfies Record<string, readonly TaskStatus[]>;

export type TaskActionName = keyof typeof ACTION_STATUSES;

/** The past participle each action reads as: "T-001 is todo; it cannot be rolled back". */
export const ACTION_VERB: Record<TaskActionName, string> = {
  run: 'run',
  retry: 'retried',
  unblock: 'unblocked',
  cancel: 'cancelled',
  edit: 'edited',
  increaseMax: 'given more iterations',
  rollback: 'rolled back',
  remove: 'deleted',
  cleanup: 'cleaned up',
};

/** The fields an edit may change; at least one. */
export const EditFieldsSchema = z
  .strictObject({
    title: z.string().trim().min(1).optional(),
    prompt: z.string().trim().min(1).optional(),
    promise: z.string().trim().min(1).optional(),
    priority: z.number().optional(),
    maxIterations: z.number().int().min(1).optional(),
    allowGateChanges: z.union([z.boolean(), z.array(z.string().trim().min(1))]).optional(),
    /** An empty string removes the check. */
    check: z.string().trim().optional(),
    proof: ProofSchema.optional(),
    proofTests: z.array(z.string().trim().min(1)).optional(),
  })
  .refine((fields) => Object.keys(fields).length > 0, 'give at least one field to change');
export type EditFields = z.infer<typeof EditFieldsSchema>;

/** Why the action does not apply to a task in this status; undefined when it does. */
export function actionRefusal(action: TaskActionName, task: { id: string; status: TaskStatus }): string | undefined {
  const allowed: readonly TaskStatus[] = ACTION_STATUSES[action];
  if (allowed.includes(task.status)) return undefined;
  return `task ${task.id} is ${task.status}; it cannot be ${ACTION_VERB[action]} (that needs a task that is ${allowed.join(', ')})`;
}
