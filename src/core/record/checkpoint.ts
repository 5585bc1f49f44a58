import { linkSync, promises as fs, renameSync, rmSync, statSync } from 'node:fs';
import { z } from 'zod';
import { IntegrityBaselineSchema } from '../gates/integrity';
import { ReviewHoldSchema } from './holdSchema';
import { ProofRecordSchema } from '../gates/proof';
import type { RalphPaths } from '../paths';
import { ConfigError } from '../errors';
import { isWrittenFile, readTextIfExists, tempNameFor, writeFileAtomic, type WrittenFile } from '../util/atomicWrite';
import { formatZodIssues } from '../util/zodIssues';
import { CostReceiptSchema } from '../spend/receipt';

const UsageSchema = z.object({ promptTokens: z.number(), completionTokens: z.number(), totalTokens: z.number() });

/** What one finished iteration left behind; the fresh context of the next one is built from it. */
export const IterationRecordSchema = z.object({
  iteration: z.number().int().positive(),
  startedAt: z.string(),
  durationMs: z.number().min(0),
  model: z.string(),
  /** The agent CLI's session of this iteration (issue 46): which CLI, its session id in the CLI's own history, the model it used. */
  agentSession: z.object({ agent: z.string(), id: z.string(), model: z.string().optional() }).optional(),
  outcome: z.enum(['complete', 'continue', 'blocked', 'needs_help', 'error', 'stopped']),
  signal: z.string().optional(),
  progress: z.number().optional(),
  commit: z.string().optional(),
  filesChanged: z.array(z.string()).default([]),
  /** How many files the commit changed when `filesChanged` keeps only the first of them. */
  filesChangedTotal: z.number().int().min(0).optional(),
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
        integrity: z
          .object({ violations: z.array(z.string()), allowed: z.array(z.string()), gone: z.array(z.string()).optional() })
          .optional(),
        /** Failing tests that already failed at the task's base (not held against it). */
        preExisting: z.array(z.string()).optional(),
        /** Failing tests that failed at the task's base too, each held against the task or forgiven, with the evidence. */
        baseFailures: z.array(z.object({ name: z.string(), held: z.boolean(), why: z.string() })).optional(),
        /** Tests that failed, then passed when the gate ran again. */
        flaky: z.array(z.string()).optional(),
        /** The run was a part of the suite (the tests the task's changes reach), not the whole. */
        scope: z.literal('affected').optional(),
        /** Files of the tests that failed (workspace-relative), and how many failing tests had none: the next part runs them again. */
        failing: z.object({ files: z.array(z.string()), unfiled: z.number().int().min(0) }).optional(),
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
  /** The fail-to-pass proof made after this iteration's COMPLETE. */
  proof: ProofRecordSchema.optional(),
  usage: UsageSchema,
});
export type IterationRecord = z.infer<typeof IterationRecordSchema>;

const SignalSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('COMPLETE'),
    summary: z.string().optional(),
    promiseEvidence: z.string().optional(),
    artifactPaths: z.array(z.string()).optional(),
  }),
  z.object({ kind: z.literal('PROGRESS'), percent: z.number(), note: z.string().optional() }),
  z.object({ kind: z.literal('BLOCKED'), reason: z.string() }),
  z.object({ kind: z.literal('NEEDS_HELP'), question: z.string() }),
]);

/**
 * What an iteration's model run produced, written ahead of its commit (phase `committing`):
 * a run killed between the commit and the next checkpoint finishes that iteration from here
 * on resume instead of calling the model again.
 */
export const PendingCommitSchema = z.object({
  iteration: z.number().int().positive(),
  model: z.string(),
  startedAt: z.string(),
  run: z.object({
    signals: z.array(SignalSchema),
    finalText: z.string(),
    usage: UsageSchema,
    steps: z.number().int().min(0),
    stepLimitHit: z.boolean(),
    toolCalls: z.number().int().min(0),
    toolErrors: z.number().int().min(0),
    error: z.string().optional(),
    fault: z
      .enum(['rate_limit', 'quota', 'auth', 'context_length', 'outage', 'content_filter', 'not_found', 'consent', 'bad_request', 'unknown'])
      .optional(),
    stopped: z.boolean(),
  }),
});
export type PendingCommit = z.infer<typeof PendingCommitSchema>;

/** `.ralph/state/<taskId>.json`: written at every iteration boundary. */
export const CheckpointSchema = z.object({
  version: z.literal(1),
  taskId: z.string(),
  runId: z.string(),
  /** The iteration in progress (phase `running`) or the last one finished (phase `between`). */
  iteration: z.number().int().min(0),
  /** `committing`: the model run of `iteration` is over and `pending` holds it; its commit may or may not be on HEAD. */
  phase: z.enum(['running', 'committing', 'between']),
  pending: PendingCommitSchema.optional(),
  /** Active time spent on the task across runs; the task timeout is measured on it. */
  elapsedMs: z.number().min(0),
  baseCommit: z.string().optional(),
  commits: z.number().int().min(0).default(0),
  consecutiveErrors: z.number().int().min(0).default(0),
  usage: UsageSchema,
  /** Calls and tokens per model, for the final report's usage table. */
  modelUsage: z.record(z.string(), z.object({ calls: z.number(), promptTokens: z.number(), completionTokens: z.number() })).default({}),
  /** The task's cost receipt (by model, role and iteration; failures and retries; provider-reported cost), kept across resumes. */
  receipt: CostReceiptSchema.optional(),
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
  /** The checked merge result held for the person's review (status `review`). */
  review: ReviewHoldSchema.optional(),
  /** The last fail-to-pass proof of the task (reports, the completion card, the merge queue's record). */
  proof: ProofRecordSchema.optional(),
  history: z.array(IterationRecordSchema),
  updatedAt: z.string(),
});
export type Checkpoint = z.infer<typeof CheckpointSchema>;
export type CheckpointInput = z.input<typeof CheckpointSchema>;

/** Bounded: the full record lives in the run logs and reports, the checkpoint keeps the recent past. */
export const MAX_HISTORY = 50;

export interface CheckpointLoadOptions {
  /** Told when the checkpoint was unreadable and the previous good one (`.bak`) is used instead. */
  onWarning?: (message: string) => void;
  /**
   * `throw` (the loop): a corrupt checkpoint with no good backup is an error, never a silent
   * restart at iteration 1. `ignore` (read-only views): treated as absent.
   */
  onCorrupt?: 'throw' | 'ignore';
}

/** How many checkpoint files' last writes a store remembers (the tasks running at once, with room to spare). */
const KEPT_WRITES = 32;

/** The checkpoint without its history and receipt: what `save` validates field by field every time. */
const CheckpointHeadSchema = CheckpointSchema.omit({ history: true, receipt: true });

export class CheckpointStore {
  /** What this store last wrote to each checkpoint file and whether it was taken between iterations. */
  private readonly written = new Map<string, { file: WrittenFile; boundary: boolean }>();

  constructor(private readonly paths: RalphPaths) {}

  async load(taskId: string, options: CheckpointLoadOptions = {}): Promise<Checkpoint | undefined> {
    const file = this.paths.state(taskId);
    const text = await readTextIfExists(file);
    if (text === undefined) return undefined;
    const current = parseCheckpoint(text);
    if (current.ok) return current.value;
    const backup = parseCheckpoint((await readTextIfExists(backupOf(file))) ?? '');
    const shown = this.paths.relative(file);
    if (backup.ok) {
      options.onWarning?.(
        `${shown} is unreadable (${current.why}); resuming from the previous checkpoint ${this.paths.relative(backupOf(file))} (iteration ${backup.value.iteration})`,
      );
      return backup.value;
    }
    if (options.onCorrupt === 'throw') {
      throw new ConfigError(
        `${shown} is unreadable (${current.why}) and there is no good backup; the task's iteration count and history would be lost. Repair the file, or delete it to start ${taskId} over: rm ${shown}`,
        shown,
      );
    }
    return undefined;
  }

  /**
   * Writes atomically. The checkpoint it replaces, when valid, is kept as `<file>.bak` — except
   * the mid-iteration ones (`running`, `committing`) this store wrote itself: the backup then
   * stays the last checkpoint taken between iterations, a sound point to resume from, and an
   * iteration pays for one backup rather than three.
   */
  async save(checkpoint: CheckpointInput): Promise<string> {
    const file = this.paths.state(checkpoint.taskId);
    const data = Buffer.from(serializeCheckpoint(checkpoint), 'utf8');
    await this.backUp(file);
    this.written.delete(file);
    const written = await writeFileAtomic(file, data);
    this.written.set(file, { file: written, boundary: checkpoint.phase === 'between' });
    // the tasks running now are the ones that matter: a long session's finished tasks are let go
    if (this.written.size > KEPT_WRITES) this.written.delete(this.written.keys().next().value as string);
    return file;
  }

  /**
   * Keeps the checkpoint about to be replaced as `<file>.bak` when it is valid. When it is still
   * the very file this store last wrote there (same inode, size and modification time: nobody
   * renamed another file over it or rewrote it since), it needs no check: a boundary
   * checkpoint's backup is then a second name for that file (a hard link: no read, no parse, no
   * copy and no second fsync — its bytes were synced when written), and a mid-iteration one is
   * not backed up. Anything else (another process's file, the first save of this process) is
   * read, checked and copied, as is a file a link cannot be made for.
   */
  private async backUp(file: string): Promise<void> {
    const backup = backupOf(file);
    const own = this.written.get(file);
    if (own) {
      // direct system calls, no trip through the thread pool
      const link = tempNameFor(backup);
      try {
        if (!own.boundary) {
          if (isWrittenFile(statSync(file, { bigint: true, throwIfNoEntry: false }), own.file)) return;
        } else {
          linkSync(file, link);
          // what is compared is the very file the link keeps
          if (isWrittenFile(statSync(link, { bigint: true }), own.file)) {
            renameSync(link, backup);
            return;
          }
        }
      } catch {
        // no link here (file system), or the file is gone: checked and copied below
      } finally {
        // also when the backup already was this file (renaming one name of it over another does nothing)
        if (own.boundary) rmSync(link, { force: true });
      }
    }
    const previous = await readTextIfExists(file);
    if (previous !== undefined && parseCheckpoint(previous).ok) await writeFileAtomic(backup, previous);
  }

  async clear(taskId: string): Promise<void> {
    const file = this.paths.state(taskId);
    this.written.delete(file);
    await fs.rm(file, { force: true });
    await fs.rm(backupOf(file), { force: true });
  }
}

function backupOf(file: string): string {
  return `${file}.bak`;
}

function parseCheckpoint(text: string): { ok: true; value: Checkpoint } | { ok: false; why: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, why: `not JSON: ${(error as Error).message}` };
  }
  const result = CheckpointSchema.safeParse(json);
  return result.success ? { ok: true, value: result.data } : { ok: false, why: formatZodIssues(result.error).slice(0, 3).join('; ') };
}

/**
 * Each history record's checked, serialized form, made once: a record is a new object when it
 * enters the history and is never changed there (it is frozen then, so that a change would
 * fail loudly rather than leave this stale).
 */
const recordJson = new WeakMap<object, string>();

/** How deep a record sits in the file (`history` is a top-level key): its lines' indent. */
const RECORD_INDENT = '    ';

function historyRecordJson(record: z.input<typeof IterationRecordSchema>): string {
  let json = recordJson.get(record);
  if (json === undefined) {
    json = RECORD_INDENT + JSON.stringify(IterationRecordSchema.parse(record), null, 2).replace(/\n/g, `\n${RECORD_INDENT}`);
    recordJson.set(Object.freeze(record), json);
  }
  return json;
}

/**
 * The checkpoint as the file holds it (pretty JSON, the history kept to its last
 * `MAX_HISTORY` records). Every field is checked against the schema: the head on every save,
 * each history record once (an iteration writes three checkpoints a time, and the history is
 * most of the file), the receipt not here — it is the budget meter's own typed object, and a
 * load checks it with the rest.
 */
export function serializeCheckpoint(checkpoint: CheckpointInput): string {
  const { history, receipt, ...rest } = checkpoint;
  const head = CheckpointHeadSchema.parse(rest);
  const top = JSON.stringify(receipt === undefined ? head : { ...head, receipt }, null, 2);
  const records = history.slice(-MAX_HISTORY).map(historyRecordJson);
  const list = records.length === 0 ? '[]' : `[\n${records.join(',\n')}\n  ]`;
  return `${top.slice(0, -2)},\n  "history": ${list}\n}\n`;
}

/** A task's first checkpoint: no iteration yet, its base the commit it starts on. */
export function freshCheckpoint(taskId: string, runId: string, baseCommit: string | undefined, now: string): Checkpoint {
  return {
    version: 1,
    taskId,
    runId,
    iteration: 0,
    phase: 'between',
    pending: undefined,
    elapsedMs: 0,
    baseCommit,
    commits: 0,
    consecutiveErrors: 0,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    modelUsage: {},
    optionalGateIterations: {},
    warned: { ratio: false },
    history: [],
    updatedAt: now,
  };
}
