import { z } from 'zod';
import { ForgeConfigSchema } from './forgeSchema';
import { ReportsConfigSchema } from './reportsSchema';
import { EDITOR_MODEL_SELECTOR_HELP, parseEditorModelSelector } from './editorModels';
import { ProofSchema, TASK_TYPES } from '../tasks/schema';

const Price = z.strictObject({
  input: z.number().min(0).describe('USD per 1M input tokens'),
  output: z.number().min(0).describe('USD per 1M output tokens'),
  cachedInput: z
    .number()
    .min(0)
    .optional()
    .describe("USD per 1M input tokens served from the provider's prompt cache; the input price when absent"),
});

const FallbackEntry = z.strictObject({
  model: z.string().min(1).describe('model name sent to the fallback endpoint'),
  baseUrl: z.url().optional().describe('OpenAI-compatible endpoint of this fallback; default: llm.baseUrl'),
  apiKeyEnv: z
    .string()
    .min(1)
    .optional()
    .describe("environment variable holding this endpoint's key; default: the primary's key (same endpoint) or none (another endpoint)"),
});
export type FallbackConfig = z.infer<typeof FallbackEntry>;

export const LlmConfigSchema = z
  .strictObject({
    provider: z
      .enum(['openai', 'vscode'])
      .default('openai')
      .describe(
        '"openai": an OpenAI-compatible endpoint (llm.baseUrl, key in llm.apiKeyEnv); "vscode": the chat models the editor already has (GitHub Copilot or any extension contributing one, through VS Code\'s Language Model API; extension only, no key). With "vscode", llm.models entries name editor models as "<vendor>/<family>" or "<vendor>/<id>", e.g. "copilot/gpt-4.1"',
      ),
    baseUrl: z.url().optional().describe('OpenAI-compatible endpoint; the SDK default (api.openai.com) when absent'),
    apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY').describe('environment variable holding the API key'),
    models: z.array(z.string().min(1)).min(1).default(['gpt-4.1-mini', 'gpt-4.1', 'o3']).describe('model ladder, cheapest first'),
    prices: z.record(z.string(), Price).default({}).describe('USD per 1M tokens, by model'),
    contextWindow: z.number().int().positive().default(128000),
    compactAt: z.number().gt(0).max(1).default(0.8),
    temperature: z.number().min(0).max(2).optional(),
    requestTimeoutMs: z.number().int().positive().default(120000),
    maxRetries: z.number().int().min(0).max(10).default(4),
    maxStepsPerIteration: z.number().int().positive().default(40).describe('tool-calling round trips per iteration'),
    fallback: z
      .array(FallbackEntry)
      .default([])
      .describe(
        'ordered models or endpoints used while the primary fails (quota exhausted, outage or rate limit after the retries); the primary is probed again after fallbackCooldownSec',
      ),
    fallbackCooldownSec: z
      .number()
      .int()
      .min(1)
      .default(300)
      .describe('seconds on a fallback before a probe request checks whether the primary is back'),
  })
  .superRefine((llm, ctx) => {
    if (llm.provider !== 'vscode') return;
    llm.models.forEach((entry, index) => {
      if (!parseEditorModelSelector(entry))
        ctx.addIssue({
          code: 'custom',
          path: ['models', index],
          message: `"${entry}" does not name an editor model: ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
    });
    // a fallback without its own baseUrl is another editor model; with one, an OpenAI-compatible endpoint
    llm.fallback.forEach((entry, index) => {
      if (entry.baseUrl === undefined && !parseEditorModelSelector(entry.model)) {
        ctx.addIssue({
          code: 'custom',
          path: ['fallback', index, 'model'],
          message: `"${entry.model}" does not name an editor model (give the entry a "baseUrl" to fall back to an OpenAI-compatible endpoint instead): ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
      }
    });
  })
  .prefault({});

export const LoopConfigSchema = z
  .strictObject({
    maxIterations: z.number().int().positive().default(50),
    taskTimeoutMinutes: z.number().positive().default(30),
    windDownSeconds: z
      .number()
      .int()
      .min(0)
      .max(600)
      .default(60)
      .describe(
        'when the budget, the task timeout or Stop arrives mid-iteration: the deadline of the one tool-limited turn in which the agent writes its progress notes before the commit; 0 = no wind-down turn',
      ),
    maxParallel: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe(
        "agents talking to the model at once, each task in its own git worktree (.ralph/worktrees/<taskId>); while a task's gates run, its slot goes to the next task and the task gets one back before any new task starts; 1 runs one task at a time in the workspace",
      ),
    maxConcurrentGates: z
      .number()
      .int()
      .positive()
      .max(256)
      .optional()
      .describe(
        "gate processes at once across the run (iteration gates, runs at a task's base, proofs, merged checks); the others wait in line. Default: the machine's CPU count less one, at least 1",
      ),
    mode: z.enum(['autopilot', 'semi-auto']).default('autopilot'),
    commitEachIteration: z.boolean().default(true),
    fixTasks: z.boolean().default(false).describe('also add each failing required gate of a task to the store as a linked fix task'),
  })
  .prefault({});

export const GateSchema = z.strictObject({
  name: z.string().min(1),
  command: z.string().min(1),
  kind: z.enum(['tests', 'types', 'lint', 'security', 'coverage', 'custom']),
  required: z.boolean().default(true),
  threshold: z.number().optional(),
  maxIterations: z.number().int().positive().optional(),
  timeoutMs: z.number().int().positive().optional(),
  baseline: z
    .boolean()
    .optional()
    .describe(
      "default true: a failing test that already failed at the task's base (and on the merge target's tip) is forgiven as pre-existing only with evidence that it is unrelated to the task (it exercises nothing the task changed or names, the task changed source, the promise does not ask for the whole suite) or when a person said so (knownFailures); otherwise it is the task's. false = all green only",
    ),
  knownFailures: z
    .array(z.string().trim().min(1))
    .optional()
    .describe(
      'tests of this gate a person declared known failures, unrelated to any task: their names as the runner prints them (as the reports and `ralph status` show them), `*` for any text; not held against a task when they fail',
    ),
  rerunFailures: z
    .number()
    .int()
    .min(0)
    .max(5)
    .optional()
    .describe(
      'default 0: run a gate that failed on tests again, up to this many times, before its verdict; tests that fail then pass are reported as flaky',
    ),
  exclusive: z
    .boolean()
    .optional()
    .describe(
      'default false: the merge queue runs this gate in one merged check at a time (a fixed port, a shared database); other gates of concurrent checks go on side by side',
    ),
  reuse: z
    .boolean()
    .optional()
    .describe(
      "default true: a run of this gate on a clean tree stands for it on the same tree anywhere in the run (the agents' base runs, the merged checks); false for a gate whose result depends on more than the tree (a service, the network, the clock, where it runs)",
    ),
});
export type GateConfig = z.infer<typeof GateSchema>;

export const EscalationConfigSchema = z
  .strictObject({
    threshold: z.number().int().positive().default(2),
    councilAfter: z.number().int().positive().default(3),
    councilModels: z.array(z.string().min(1)).optional(),
  })
  .prefault({});

export const SafeguardsSchema = z
  .strictObject({
    noCommitWarnIterations: z.number().int().positive().default(5),
    iterationWarnRatio: z.number().gt(0).max(1).default(0.8),
    errorThreshold: z.number().int().positive().default(3),
    onWarning: z.enum(['continue', 'stop']).default('continue'),
  })
  .prefault({});

export const BudgetSchema = z
  .strictObject({
    maxCostUsd: z.number().positive().optional().describe('hard stop for a run, in estimated USD'),
    maxTokens: z.number().int().positive().optional().describe('hard stop for a run, in tokens'),
    taskMaxCostUsd: z.number().positive().optional().describe('hard stop for one task, in estimated USD'),
    taskMaxTokens: z.number().int().positive().optional().describe('hard stop for one task, in tokens'),
    maxCostPerHourUsd: z
      .number()
      .positive()
      .optional()
      .describe(
        "spend-rate alarm: pause with a warning when the run spends more than this in USD within an hour (Continue allows another hour's worth)",
      ),
    spendSpikeFactor: z
      .number()
      .min(0)
      .default(5)
      .describe(
        "spend-rate alarm relative to the run's own rate: pause when the last 5 minutes cost this many times the trailing hour's rate (0 turns it off)",
      ),
    spendSpikeMinUsdPerHour: z.number().min(0).default(2).describe('a spend spike below this rate (USD per hour) never raises the alarm'),
  })
  .prefault({});

export const CommandsSchema = z
  .strictObject({
    allow: z.array(z.string()).default([]),
    deny: z.array(z.string()).default([]),
    requireApproval: z.array(z.string()).default([]),
    timeoutMs: z.number().int().positive().default(120000),
    maxOutputChars: z.number().int().positive().default(20000),
    sandbox: z
      .enum(['auto', 'required', 'off'])
      .default('auto')
      .describe(
        'bubblewrap sandbox for run_command and the gates (Linux): auto = use it when it works, warn once when not; required = refuse to run commands without it; off = never',
      ),
    network: z.boolean().default(false).describe('let sandboxed commands and gates reach the network'),
    env: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'environment variables passed to commands and gates on purpose, even when named like a secret (*_KEY, *_TOKEN…); all other secrets are removed',
      ),
  })
  .prefault({});

const AgentProfileSchema = z.strictObject({
  model: z.string().min(1).optional().describe('model name for this sub-agent; wins over tier'),
  tier: z.number().int().min(0).optional().describe("index into llm.models (0 = cheapest); default: the orchestrator's model"),
  tools: z.array(z.string().min(1)).optional().describe('tool names this sub-agent may call (escalate is always added)'),
  systemPrompt: z.string().min(1).optional().describe('replaces the built-in system prompt of this sub-agent'),
  maxSteps: z.number().int().positive().optional().describe('model calls per delegation'),
});
export type AgentProfileConfig = z.infer<typeof AgentProfileSchema>;

const CaioCommandsSchema = z
  .strictObject({
    push: z.string().min(1).optional().describe('git_push; default: git push "$RALPH_REMOTE" "$RALPH_REF"'),
    pullRequest: z.string().min(1).optional().describe('open_pull_request, e.g. gh pr create --title "$RALPH_TITLE" --body "$RALPH_BODY"'),
    issue: z.string().min(1).optional().describe('open_issue, e.g. gh issue create --title "$RALPH_TITLE" --body "$RALPH_BODY"'),
    notify: z.string().min(1).optional().describe('notify, e.g. a webhook call with "$RALPH_MESSAGE"'),
  })
  .describe('shell commands of the caio actions; arguments arrive as RALPH_* environment variables, never spliced into the text');

/** Sub-agent profiles (delegate / delegate_parallel). */
export const AgentsConfigSchema = z
  .strictObject({
    maxParallel: z.number().int().positive().default(3).describe('delegate_parallel: sub-agents running at once'),
    scout: AgentProfileSchema.optional(),
    devo: AgentProfileSchema.optional(),
    caio: AgentProfileSchema.extend({
      commands: CaioCommandsSchema.optional(),
      env: z
        .array(z.string().min(1))
        .optional()
        .describe(
          "secret variables (e.g. GH_TOKEN) given only to caio's approved external commands (push, pull request), never to the agent's commands",
        ),
    }).optional(),
  })
  .prefault({});

/** The merge queue of parallel runs (DESIGN §5, "Parallel runs and the merge queue"). */
export const MergeConfigSchema = z
  .object({
    targetBranch: z
      .string()
      .min(1)
      .optional()
      .describe('branch the queue merges finished tasks into; default: the branch checked out when the run starts'),
    strategy: z
      .enum(['squash', 'merge'])
      .default('squash')
      .describe(
        'squash: one commit per task on the target, exactly the tree the queue checked (linear, green at every commit); merge: a --no-ff merge commit that keeps the iteration commits as its second parent',
      ),
    deleteBranch: z.boolean().default(true).describe('delete the task branch ralph/<taskId> once merged'),
    maxReturns: z
      .number()
      .int()
      .min(0)
      .default(3)
      .describe('times a task goes back to its agent after a merge conflict or a red merged check before it ends needs_help'),
    review: z
      .enum(['auto', 'manual'])
      .default('auto')
      .describe(
        'auto: a task whose merged check passes lands at once; manual: it waits as "review" until a person approves it (Show Changes, Approve, Request Changes, Reject; ralph review …). A task\'s own "review" wins',
      ),
    waitForUserMinutes: z
      .number()
      .min(0)
      .default(30)
      .describe(
        'how long a merge waits for the person\'s uncommitted files it would overwrite; then its checked result is held for them (status "review", the files named: approve it once they are out of the way) and the run goes on without it',
      ),
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(3)
      .describe(
        'merged checks run at once: the queue checks target + A, target + A + B, … side by side (each in its own merge worktree) and lands each task in order once its own prefix is green. Default 3 (one per agent of the default loop.maxParallel), which fits a laptop; 1 checks one task at a time',
      ),
    batchSize: z
      .number()
      .int()
      .min(1)
      .max(16)
      .default(1)
      .describe(
        'tasks one merged check covers: > 1 checks only the last prefix of each batch and lands the batch in order (each task still its own commit, the tasks inside the batch unchecked alone); a red batch is split and checked one by one. Default 1: every landed commit was itself checked',
      ),
    checkAhead: z
      .boolean()
      .default(true)
      .describe(
        "start a task's merged check when its agent signals COMPLETE, beside its own gates in its worktree (one run where the trees are the same): the task still lands only once its own gates passed too and its loop accepted COMPLETE; if they did not, its check is dropped and the prefixes behind it are built again without it. false: a task joins the queue only after its own gates passed",
      ),
  })
  .prefault({});

export const WorktreesConfigSchema = z
  .object({
    keepFailed: z.boolean().default(true).describe('keep the worktree of a failed, timed-out or halted task for inspection and Retry'),
    link: z
      .array(
        z
          .string()
          .min(1)
          .regex(/^(?!\/)(?!.*(^|\/)\.\.(\/|$)).+$/, 'a workspace-relative path without ..'),
      )
      .default(['node_modules'])
      .describe(
        'untracked paths of the workspace (installed dependencies) linked into every task and merge worktree so that gates can run there; skipped when absent',
      ),
  })
  .prefault({});

/** The fail-to-pass proof (Task `proof`): which task types get it, and which files are tests. */
export const ProofConfigSchema = z
  .strictObject({
    types: z
      .partialRecord(z.enum(TASK_TYPES), ProofSchema)
      .default({})
      .describe(
        'the proof each task type gets unless the task says otherwise: "fail-to-pass" (the tests the task added or changed must fail on its base code and pass on the result) or "none"; bugfix defaults to "fail-to-pass", every other type to "none"',
      ),
    testFiles: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'globs of test files, beyond the conventions (test/, *.test.*, test_*.py, *_test.go…) and the runner configs (jest testMatch, mocha spec, pytest python_files/testpaths)',
      ),
  })
  .prefault({});
export type ProofConfig = z.infer<typeof ProofConfigSchema>;

/** `.ralph/config.json` (DESIGN §3). Every key is optional; parsing fills the defaults. */
export const RalphConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    llm: LlmConfigSchema,
    loop: LoopConfigSchema,
    gates: z.array(GateSchema).default([]),
    escalation: EscalationConfigSchema,
    safeguards: SafeguardsSchema,
    budget: BudgetSchema,
    commands: CommandsSchema,
    agents: AgentsConfigSchema,
    merge: MergeConfigSchema,
    worktrees: WorktreesConfigSchema,
    forge: ForgeConfigSchema,
    reports: ReportsConfigSchema,
    proof: ProofConfigSchema,
  })
  .superRefine((config, ctx) => {
    if (config.llm.provider !== 'vscode') return;
    (config.escalation.councilModels ?? []).forEach((entry, index) => {
      if (!parseEditorModelSelector(entry))
        ctx.addIssue({
          code: 'custom',
          path: ['escalation', 'councilModels', index],
          message: `"${entry}" does not name an editor model: ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
    });
    for (const agent of ['scout', 'devo', 'caio'] as const) {
      const entry = config.agents[agent]?.model;
      if (entry !== undefined && !parseEditorModelSelector(entry))
        ctx.addIssue({
          code: 'custom',
          path: ['agents', agent, 'model'],
          message: `"${entry}" does not name an editor model: ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
    }
  });
export type RalphConfig = z.infer<typeof RalphConfigSchema>;
export type RalphConfigInput = z.input<typeof RalphConfigSchema>;
