import { z } from 'zod';
import { ProofSchema, type TaskStatus, TaskTypeSchema } from './schema';

/**
 * Which statuses each task action applies to: the tree's menus (package.json), the panel, the
 * palette and the CLI all follow this one table.
 */
export const ACTION_STATUSES = {
  run: ['todo', 'in_progress', 'halted'],
  /** Answer the task's question (NEEDS_HELP, a gated command, a block): it resumes from its checkpoint. */
  answer: ['needs_help', 'blocked'],
  retry: ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done', 'review'],
  unblock: ['blocked', 'needs_help'],
  cancel: ['todo', 'blocked', 'needs_help', 'timeout', 'failed', 'halted'],
  edit: ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled', 'review'],
  increaseMax: ['todo', 'in_progress', 'timeout', 'halted', 'failed'],
  rollback: ['done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
  remove: ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled', 'review'],
  /** Clean Up Worktree (only where the task has a kept worktree). */
  cleanup: ['failed', 'timeout', 'halted', 'blocked', 'needs_help', 'cancelled'],
  /** Manual review: Approve lands the held result; Request Changes sends it back to its agent; Reject drops it. */
  review: ['review'],
  /** Convene Bug Council: on a task that has iterations to look at and is not running. */
  council: ['blocked', 'needs_help', 'failed', 'timeout', 'halted', 'todo'],
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
  answer: 'answered',
  review: 'reviewed',
  council: 'given a bug council',
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
    type: TaskTypeSchema.optional(),
    complexity: z.number().int().min(1).max(14).optional(),
    dependsOn: z.array(z.string().trim().min(1)).optional(),
    /** A command run as a required gate of this task only; `null` or an empty string removes it. */
    check: z.string().trim().nullable().optional(),
    review: z.enum(['auto', 'manual']).optional(),
    proof: ProofSchema.optional(),
    proofTests: z.array(z.string().trim().min(1)).optional(),
    /** Failing tests declared unrelated to this task; an empty list removes the declaration. */
    knownFailures: z.array(z.string().trim().min(1)).optional(),
  })
  .refine((fields) => Object.keys(fields).length > 0, 'give at least one field to change');
export type EditFields = z.infer<typeof EditFieldsSchema>;

/** Why the action does not apply to a task in this status; undefined when it does. */
export function actionRefusal(action: TaskActionName, task: { id: string; status: TaskStatus }): string | undefined {
  const allowed: readonly TaskStatus[] = ACTION_STATUSES[action];
  if (allowed.includes(task.status)) return undefined;
  return `task ${task.id} is ${task.status}; it cannot be ${ACTION_VERB[action]} (that needs a task that is ${allowed.join(', ')})`;
}
