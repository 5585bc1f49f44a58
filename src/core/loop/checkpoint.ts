import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { IntegrityBaselineSchema } from '../gates/integrity';
import type { RalphPaths } from '../paths';
import { readTextIfExists, writeJsonAtomic } from '../util/atomicWrite';

const UsageSchema = z.object({ promptTokens: z.number(), completionTokens: z.number(), totalTokens: z.number() });

/** What one finished iteration left behind; the fresh context of the next one is built from it. */
export const IterationRecordSchema = z.object({
  iteration: z.number().int().positive(),
  startedAt: z.string(),
  durationMs: z.number().min(0),
  model: z.string(),
  outcome: z.enum(['complete', 'continue', 'blocked', 'needs_help', 'error', 'stopped']),
  signal: z.string().optional(),
  progress: z.number().optional(),
  commit: z.string().optional(),
  filesChanged: z.array(z.string()).default([]),
  error: z.string().optional(),
  /** The agent's last words in the iteration, shortened; fed to the next iteration. */
  summary: z.string().optional(),
  /** Why the loop did not accept the iteration (e.g. step limit, failed tools), fed back. */
  feedback: z.array(z.string()).default([]),
  /** The completion policy's reason for its decision. */
  decision: z.string().optional(),
  gates: z
    .array(
      z.object({
        name: z.string(),
        kind: z.string(),
        required: z.boolean(),
        passed: z.boolean(),
        summary: z.string(),
        /** How the gate was weakened against the task's base, or the changes the task was allowed to make. */
        integrity: z.object({ violations: z.array(z.string()), allowed: z.array(z.string()) }).optional(),
      }),
    )
    .default([]),
  /** Names of the failing tests, for stuck detection. */
  failingTests: z.array(z.string()).default([]),
  /** The iteration failed (a required gate failed, it errored, or it made no progress). */
  failed: z.boolean().default(false),
  /** A high security finding was open after this iteration. */
  highFinding: z.boolean().default(false),
  /** Control files (`.ralph/`, git config/hooks) an agent's command or a gate changed; each was restored. */
  tampering: z.array(z.string()).default([]),
  usage: UsageSchema,
});
export type IterationRecord = z.infer<typeof IterationRecordSchema>;

/** `.ralph/state/<taskId>.json`: written at every iteration boundary. */
export const CheckpointSchema = z.object({
  version: z.literal(1),
  taskId: z.string(),
  runId: z.string(),
  /** The iteration in progress (phase `running`) or the last one finished (phase `between`). */
  iteration: z.number().int().min(0),
  phase: z.enum(['running', 'between']),
  /** Active time spent on the task across runs; the task timeout is measured on it. */
  elapsedMs: z.number().min(0),
  baseCommit: z.string().optional(),
  commits: z.number().int().min(0).default(0),
  consecutiveErrors: z.number().int().min(0).default(0),
  usage: UsageSchema,
  /** Calls and tokens per model, for the final report's usage table. */
  modelUsage: z.record(z.string(), z.object({ calls: z.number(), promptTokens: z.number(), completionTokens: z.number() })).default({}),
  escalation: z
    .object({
      tier: z.number().int().min(0),
      failuresAtTier: z.number().int().min(0),
      failuresAtTop: z.number().int().min(0),
      councilAt: z.number().int().optional(),
      history: z.array(z.object({ iteration: z.number(), from: z.string(), to: z.string(), reason: z.string() })),
    })
    .optional(),
  /** The council's plan, handed to the next iteration and kept until the task ends. */
  councilPlan: z.string().optional(),
  /** Iteration at which a stuck loop convened the council; stuck again after it → halted. */
  stuckCouncilAt: z.number().int().optional(),
  /** Safeguard warnings already given, so each fires once per occasion. */
  warned: z.object({ noCommitsAt: z.number().int().optional(), ratio: z.boolean().default(false) }).default({ ratio: false }),
  /** Extra iterations each optional gate has claimed (capped by its `maxIterations`). */
  optionalGateIterations: z.record(z.string(), z.number()).default({}),
  /** What the required gates checked at the task's base; every later gate run is judged against it. */
  integrity: IntegrityBaselineSchema.optional(),
  history: z.array(IterationRecordSchema),
  updatedAt: z.string(),
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;
export type CheckpointInput = z.input<typeof CheckpointSchema>;

/** Bounded: the full record lives in the run logs and reports, the checkpoint keeps the recent past. */
export const MAX_HISTORY = 50;

export class CheckpointStore {
  constructor(private readonly paths: RalphPaths) {}

  async load(taskId: string): Promise<Checkpoint | undefined> {
    const text = await readTextIfExists(this.paths.state(taskId));
    if (text === undefined) return undefined;
    try {
      const result = CheckpointSchema.safeParse(JSON.parse(text));
      return result.success ? result.data : undefined;
    } catch {
      return undefined; // a corrupt checkpoint is ignored: the task restarts from its store counters
    }
  }

  async save(checkpoint: CheckpointInput): Promise<string> {
    const trimmed = CheckpointSchema.parse({ ...checkpoint, history: checkpoint.history.slice(-MAX_HISTORY) });
    const file = this.paths.state(checkpoint.taskId);
    await writeJsonAtomic(file, trimmed);
    return file;
  }

  async clear(taskId: string): Promise<void> {
    await fs.rm(this.paths.state(taskId), { force: true });
  }
}
