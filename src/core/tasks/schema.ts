import { z } from 'zod';
import { AGENT_KINDS } from '../agentKinds';
import { TaskRemoteSchema } from './remote';

import { QuestionSchema } from './questions';

export const TASK_STATUSES = [
  'todo',
  'in_progress',
  'done',
  'blocked',
  'needs_help',
  'failed',
  'timeout',
  'halted',
  'cancelled',
  /** The merged check passed and a person decides (`merge.review: "manual"`): approve, request changes, reject. */
  'review',
] as const;
export const TaskStatusSchema = z.enum(TASK_STATUSES);
export type TaskStatus = z.infer<typeof TaskStatusSchema>;

export const TASK_TYPES = ['feature', 'bugfix', 'refactor', 'security', 'architecture', 'docs', 'test'] as const;
export const TaskTypeSchema = z.enum(TASK_TYPES);
export type TaskType = z.infer<typeof TaskTypeSchema>;

/** How a task's completion must be proven beyond its gates (DESIGN §7). */
export const PROOF_KINDS = ['fail-to-pass', 'none'] as const;
export const ProofSchema = z.enum(PROOF_KINDS);
export type ProofKind = z.infer<typeof ProofSchema>;

/** Statuses after which the loop no longer works on a task by itself. */
export const FINAL_STATUSES: ReadonlySet<TaskStatus> = new Set([
  'done',
  'blocked',
  'needs_help',
  'failed',
  'timeout',
  'halted',
  'cancelled',
  'review',
]);

const TaskIdSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" or "-", starting with a letter or digit');

/** One task of `.ralph/tasks.json` (DESIGN §3). */
export const TaskSchema = z.strictObject({
  id: TaskIdSchema.describe('unique id: letters, digits, ".", "_" or "-" (T-001, T-002… when none is given)'),
  title: z.string().min(1).describe('a short title, shown in the tree, the panel and the reports'),
  prompt: z.string().min(1).describe('the exact original request; pinned after compactions, never rewritten by the loop'),
  promise: z.string().min(1).describe('completion criteria the agent must meet and give evidence for'),
  status: TaskStatusSchema.default('todo').describe("where the task stands; the loop and the person's actions change it"),
  priority: z.number().default(100).describe('lower runs first among ready tasks'),
  dependsOn: z.array(TaskIdSchema).default([]).describe('tasks that must be done (merged, in a parallel run) before this one starts'),
  type: TaskTypeSchema.default('feature').describe(
    'what kind of work: with complexity it picks the starting model; bugfix gets the fail-to-pass proof',
  ),
  complexity: z
    .number()
    .int()
    .min(1)
    .max(14)
    .default(3)
    .describe(
      '1–14, the starting model: ≤ 4 the first of llm.models, ≤ 8 the second, else the third (security and architecture start at the top)',
    ),
  maxIterations: z.number().int().min(1).optional().describe("the task's own iteration limit (loop.maxIterations when absent)"),
  allowGateChanges: z
    .union([z.boolean(), z.array(z.string().min(1))])
    .optional()
    .describe('the task may change what its gates check (`true`: every gate; or the named gates); the reports say what changed'),
  check: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe('an executable promise: a command run as a required gate of this task only (green at the end, whatever the base)'),
  proof: ProofSchema.optional().describe(
    '`fail-to-pass`: COMPLETE counts only when the tests the task added or changed fail on its base code and pass on the result. Default: by type (`proof.types`; bugfix → fail-to-pass)',
  ),
  proofTests: z
    .array(z.string().trim().min(1))
    .optional()
    .describe("globs of the task's test files for the proof, when the conventions and runner configs do not tell them apart"),
  knownFailures: z
    .array(z.string().trim().min(1))
    .optional()
    .describe(
      'failing tests a person declared unrelated to this task (names as the runner prints them, `*` for any text): not held against it',
    ),
  iterations: z.number().int().min(0).default(0).describe('iterations that have ended; the running one is in the checkpoint'),
  blockedReason: z
    .string()
    .optional()
    .describe('why the task stopped: its BLOCKED or NEEDS_HELP text, a limit, a fault (at most 4,000 characters kept)'),
  progress: z.number().min(0).max(100).optional().describe('last PROGRESS percent the agent reported (0–100)'),
  lastSignal: z.string().optional().describe('last signal as text, e.g. `PROGRESS:50`'),
  remote: TaskRemoteSchema.optional().describe('set while (and after) the task runs as a CI job on the forge (`ralph remote run`)'),
  questions: z
    .array(QuestionSchema)
    .optional()
    .describe(
      'what the task asked a person (NEEDS_HELP, a gated command, a waiting merge, a review) and the answers; pinned in its context',
    ),
  review: z
    .enum(['auto', 'manual'])
    .optional()
    .describe('`merge.review` for this task: "manual" holds its finished work for a person\'s review before it lands'),
  agent: z
    .enum(AGENT_KINDS)
    .optional()
    .describe('the agent of this task (`agent.kind` of the config when absent): "builtin", "claude-code", "codex", …'),
  timeoutMinutes: z
    .number()
    .positive()
    .optional()
    .describe("the task's own time limit in minutes (`loop.taskTimeoutMinutes` when absent); Increase Limit raises it"),
  source: z
    .string()
    .min(1)
    .optional()
    .describe('where the task came from (DESIGN §7): a document section (`docs/prd.md#login`) or an issue URL'),
  createdAt: z.string().describe('ISO time the task was added'),
  updatedAt: z.string().describe('ISO time of its last change'),
});
export type Task = z.infer<typeof TaskSchema>;

export const TaskFileSchema = z.strictObject({
  $schema: z.string().optional(),
  version: z.literal(1),
  tasks: z.array(TaskSchema).superRefine((tasks, ctx) => {
    const seen = new Map<string, number>();
    tasks.forEach((task, index) => {
      const first = seen.get(task.id);
      if (first === undefined) seen.set(task.id, index);
      else
        ctx.addIssue({
          code: 'custom',
          path: [index, 'id'],
          message: `duplicate task id "${task.id}" (also tasks.${first}); every id must be unique`,
        });
    });
  }),
});
export type TaskFile = z.infer<typeof TaskFileSchema>;

/** What a caller supplies to create a task; the store fills the rest. */
export const NewTaskSchema = z.object({
  id: TaskIdSchema.optional(),
  title: z.string().trim().min(1, 'a title is required'),
  prompt: z.string().trim().min(1, 'a prompt is required'),
  promise: z.string().trim().min(1, 'a promise (completion criteria) is required'),
  priority: z.number().optional(),
  dependsOn: z.array(TaskIdSchema).optional(),
  type: TaskTypeSchema.optional(),
  complexity: z.number().int().min(1).max(14).optional(),
  maxIterations: z.number().int().min(1).optional(),
  allowGateChanges: z.union([z.boolean(), z.array(z.string().trim().min(1))]).optional(),
  check: z.string().trim().min(1).optional(),
  review: z.enum(['auto', 'manual']).optional(),
  source: z.string().trim().min(1).optional(),
  proof: ProofSchema.optional(),
  proofTests: z.array(z.string().trim().min(1)).optional(),
  knownFailures: z.array(z.string().trim().min(1)).optional(),
  agent: z.enum(AGENT_KINDS).optional(),
});
export type NewTask = z.input<typeof NewTaskSchema>;
