import { z } from 'zod';
import { TASK_TYPES, type TaskType } from '../../tasks/schema';

/** The function tool the planning model answers with. */
export const PLAN_TOOL = 'propose_tasks';

/** More tasks than this from one document is a plan to split by section (`--section`). */
export const MAX_PLAN_TASKS = 40;

/** Keys the model gives its tasks so that they can depend on each other before they have ids. */
const PlanKeySchema = z
  .string()
  .trim()
  .min(1)
  .max(48)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" or "-", starting with a letter or digit');

const SplitSchema = z.object({
  from: z.string().trim().min(1).describe('title of the larger piece of work this task is a part of'),
  part: z.number().int().min(1),
  of: z.number().int().min(2),
  reason: z.string().trim().min(1).describe('why it did not fit one task'),
});

/** One task as the model proposes it (what its reply must match; extra keys are ignored). */
export const ProposedTaskSchema = z.object({
  key: PlanKeySchema.describe('short unique handle, e.g. "login-form"; dependsOn names these'),
  title: z.string().trim().min(1).max(120),
  prompt: z.string().trim().min(1).describe('the exact request for the coding agent, complete without the document'),
  promise: z.string().trim().min(1).describe('testable completion criteria'),
  check: z
    .string()
    .trim()
    .min(1)
    .nullish()
    .describe('a shell command that exits 0 only when the task is done (e.g. a focused test run); omit when none fits'),
  type: z.enum(TASK_TYPES),
  complexity: z.number().int().min(1).max(14).describe('1 trivial … 14 very large'),
  dependsOn: z
    .array(z.string().trim().min(1))
    .nullish()
    .describe('keys of tasks of this plan, or ids of existing tasks, that must be done first'),
  section: z.string().trim().min(1).nullish().describe('the heading of the document section the task comes from, exactly as written'),
  split: SplitSchema.nullish().describe('set when a piece of work too large for one task was split into parts'),
});
export type ProposedTask = z.infer<typeof ProposedTaskSchema>;

export const ProposalSchema = z.object({
  tasks: z
    .array(ProposedTaskSchema)
    .min(1, 'propose at least one task')
    .max(MAX_PLAN_TASKS, `at most ${MAX_PLAN_TASKS} tasks; plan one section at a time`),
  notes: z.string().nullish().describe('anything the person should know about the plan (gaps, assumptions)'),
});
export type Proposal = z.infer<typeof ProposalSchema>;

/** The JSON schema of the tool's arguments (what the model is shown). */
export function proposalJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ProposalSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete schema.$schema;
  return schema;
}

/** A task of a plan under review: what is saved to the store once a person accepts it. */
export interface PlannedTask {
  key: string;
  title: string;
  prompt: string;
  promise: string;
  check?: string;
  type: TaskType;
  complexity: number;
  /** Keys of tasks of this plan, or ids of tasks already in the store. */
  dependsOn: string[];
  /** The link to where it came from: `docs/prd.md#login`. */
  source: string;
  section?: string;
  split?: { from: string; part: number; of: number; reason: string };
  /** What the review should point out (a section not in the document, a task that may not fit one context, a dropped dependency). */
  notes: string[];
}

export const PlannedTaskSchema: z.ZodType<PlannedTask> = z.strictObject({
  key: PlanKeySchema,
  title: z.string().trim().min(1).max(200),
  prompt: z.string().trim().min(1),
  promise: z.string().trim().min(1),
  check: z.string().trim().min(1).optional(),
  type: z.enum(TASK_TYPES),
  complexity: z.number().int().min(1).max(14),
  dependsOn: z.array(z.string().min(1)),
  source: z.string().min(1),
  section: z.string().optional(),
  split: z.strictObject({ from: z.string(), part: z.number().int(), of: z.number().int(), reason: z.string() }).optional(),
  notes: z.array(z.string()),
});

/** A proposed plan: nothing of it is in the task store until a person accepts it. */
export interface PlanDraft {
  version: 1;
  /** The planning run that proposed it (its log and report carry the same id). */
  runId: string;
  /** Workspace-relative path of the document. */
  document: string;
  /** The one section planned (`ralph plan --section`), if not the whole document. */
  section?: string;
  model: string;
  createdAt: string;
  tasks: PlannedTask[];
  /** The model's notes on the plan. */
  notes?: string;
}

export const PlanDraftSchema: z.ZodType<PlanDraft> = z.strictObject({
  version: z.literal(1),
  runId: z.string().min(1),
  document: z.string().min(1),
  section: z.string().optional(),
  model: z.string(),
  createdAt: z.string(),
  tasks: z.array(PlannedTaskSchema),
  notes: z.string().optional(),
});
