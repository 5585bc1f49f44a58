import { AgentConfigSchema } from './agentSchema';
import { z } from 'zod';
import { ForgeConfigSchema } from './forgeSchema';
import { LlmConfigSchema } from './llmSchema';
import { ReportsConfigSchema } from './reportsSchema';
import { EDITOR_MODEL_SELECTOR_HELP, parseEditorModelSelector } from './editorModels';
import { EscalationConfigSchema } from './escalationSchema';
import { ProofSchema, TASK_TYPES } from '../tasks/schema';
import { GateReportSchema } from './gateReportSchema';

export { LlmConfigSchema, type FallbackConfig } from './llmSchema';

export const LoopConfigSchema = z
  .strictObject({
    maxIterations: z.number().int().positive().default(50).describe("iterations a task may take (a task's own maxIterations wins)"),
    taskTimeoutMinutes: z
      .number()
      .positive()
      .default(30)
      .describe("active minutes a task may take, gates and model requests included (a task's own timeoutMinutes wins)"),
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
    holdSlotDuringGates: z
      .boolean()
      .default(false)
      .describe(
        'true: a task keeps its agent slot while its gates and proof run (at most maxParallel tasks at work at once, none of them talking to the model meanwhile); default false: the slot goes to the next ready task',
      ),
    maxConcurrentGates: z
      .number()
      .int()
      .positive()
      .max(256)
      .optional()
      .describe(
        "gate processes at once across the run (iteration gates, runs at a task's base, proofs, merged checks); the others wait in line. A number set here is exact. Default: the machine's CPU count less one (at least 1), and while runs wait in line, one more each quarter second the machine had half a core idle, up to four per core (gates that mostly wait do not hold each other back)",
      ),
    mode: z
      .enum(['autopilot', 'semi-auto'])
      .default('autopilot')
      .describe(
        'autopilot: the next ready task starts at once; semi-auto: every agent command is asked first, and after a task ends blocked, needs help or timed out the run waits for Continue / Stop',
      ),
    commitEachIteration: z
      .boolean()
      .default(true)
      .describe('commit the working tree at the end of every iteration (ralph(<id>): iteration N)'),
    fixTasks: z.boolean().default(false).describe('also add each failing required gate of a task to the store as a linked fix task'),
  })
  .prefault({});

export const GateSchema = z.strictObject({
  name: z.string().min(1).describe("the gate's name in reports, events and `--allow-gate-changes`"),
  command: z.string().min(1).describe("the shell command, run in the workspace (or the task's worktree) after every iteration"),
  kind: z
    .enum(['tests', 'types', 'lint', 'security', 'coverage', 'custom'])
    .describe(
      'how the output is read: test counts and failures, type errors, lint problems, security findings, a coverage figure, or only the exit code',
    ),
  required: z
    .boolean()
    .default(true)
    .describe(
      'a required gate must pass before a task is done; an optional one feeds back and holds COMPLETE back at most maxIterations times',
    ),
  threshold: z.number().optional().describe('coverage gates: the lowest passing percentage (default 80)'),
  maxIterations: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('optional gates: how many times a failure may hold COMPLETE back (default 2)'),
  timeoutMs: z.number().int().positive().optional().describe('time limit of one run of the gate in ms (default 10 minutes)'),
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
      "default 0: run a gate that failed on tests again, up to this many times, before its verdict; tests that fail then pass are reported as flaky. A run whose every failure is its test runner's timeout runs once more in any case, with the runner's timeout lifted where Ralph knows its flag (tap, mocha, jest, vitest, ava)",
    ),
  exclusive: z
    .boolean()
    .optional()
    .describe(
      'default false: the merge queue runs this gate in one merged check at a time (a fixed port, a shared database); other gates of concurrent checks go on side by side',
    ),
  scope: z
    .enum(['affected', 'full'])
    .optional()
    .describe(
      "tests gates, default affected: after an iteration that does not claim COMPLETE, run only the test files that reach a file changed since the gate's last whole green run, with those that failed in its last run and those the task changed (jest: --findRelatedTests; vitest, mocha, node --test, ava, tap, pytest: the files) — the whole suite where that cannot be told (the reason is shown). COMPLETE, the task's base, integrity and the merged check are always judged on the whole suite. full = the whole suite every time",
    ),
  reuse: z
    .boolean()
    .optional()
    .describe(
      "default true: a run of this gate's command stands for it on the same tree (every file that is not ignored, committed or not) in the same environment anywhere in the run (the agents' own runs of the command, the base runs, the merged checks); false for a gate whose result depends on more than that (an ignored file it reads, a service, the network, the clock)",
    ),
  report: GateReportSchema.optional(),
});
export type GateConfig = z.infer<typeof GateSchema>;

export const SafeguardsSchema = z
  .strictObject({
    noCommitWarnIterations: z.number().int().positive().default(5).describe('warn after this many iterations without a commit'),
    iterationWarnRatio: z.number().gt(0).max(1).default(0.8).describe('warn when a task has used this share of its iteration limit'),
    errorThreshold: z
      .number()
      .int()
      .positive()
      .default(3)
      .describe('warn after this many consecutive iteration errors; unattended, the task then ends failed'),
    onWarning: z
      .enum(['continue', 'stop'])
      .default('continue')
      .describe('what a run nobody can answer does after a warning (the CLI without a terminal, CI)'),
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
    allow: z
      .array(z.string())
      .default([])
      .describe('globs (`npm run *`) or /regex/ of commands that skip the question a gated command would ask; never overrides a refusal'),
    deny: z.array(z.string()).default([]).describe('globs or /regex/ of commands the agent may never run'),
    requireApproval: z.array(z.string()).default([]).describe('globs or /regex/ of commands a person must approve first'),
    timeoutMs: z.number().int().positive().default(120000).describe("time limit of one of the agent's commands in ms"),
    maxOutputChars: z
      .number()
      .int()
      .positive()
      .default(20000)
      .describe("characters of a command's output (and of a file read) given back to the model"),
    sandbox: z
      .enum(['auto', 'required', 'off'])
      .default('auto')
      .describe(
        "bubblewrap sandbox for run_command, the gates and an agent CLI's whole process (Linux): auto = use it when it works, warn once when not; required = refuse to run commands without it; off = never",
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
    scout: AgentProfileSchema.optional().describe('the read-only researcher sub-agent'),
    devo: AgentProfileSchema.optional().describe('the implementing sub-agent'),
    caio: AgentProfileSchema.extend({
      commands: CaioCommandsSchema.optional(),
      env: z
        .array(z.string().min(1))
        .optional()
        .describe(
          "secret variables (e.g. GH_TOKEN) given only to caio's approved external commands (push, pull request), never to the agent's commands",
        ),
    })
      .optional()
      .describe('the sub-agent that pushes, opens pull requests or issues and notifies, each action approved by a person'),
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
        'how long a merge waits for the person\'s uncommitted files it would overwrite; then its checked result is held for them (status "review", the files named: approve it once they are out of the way) and the run goes on without it. An unattended run (no terminal, CI, --unattended) never waits: the task stays checked and waiting to land, and the next run lands it',
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
        'tasks one merged check covers: > 1 checks only the last prefix of each batch and lands the batch in order (each task still its own commit, the tasks inside the batch unchecked alone); a red batch is split and checked one by one. A batch forms from the tasks that wait while all merge.concurrency checks run. Default 1: every landed commit was itself checked',
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
    $schema: z.string().optional().describe('the JSON schema of this file, for editors'),
    llm: LlmConfigSchema.describe('the model: provider, endpoint, the ladder of models, prices, retries and fallbacks'),
    loop: LoopConfigSchema.describe('the run: limits of a task, parallel agents, the mode'),
    gates: z
      .array(GateSchema)
      .default([])
      .describe('the quality gates run after every iteration (Initialize Workspace detects the usual ones)'),
    escalation: EscalationConfigSchema.describe('when a task moves up the ladder of models and agents, and the bug council'),
    safeguards: SafeguardsSchema.describe('the warnings a person answers with Continue / Stop / Increase limit'),
    budget: BudgetSchema.describe('spending caps, checked before every model call, and the spend-rate alarm'),
    commands: CommandsSchema.describe("the agent's commands: rules, limits, the sandbox and its environment"),
    agent: AgentConfigSchema.describe('who works on the tasks: the built-in agent, or an agent CLI (Claude Code, Codex, …)'),
    agents: AgentsConfigSchema.describe('the sub-agents the orchestrator delegates to (scout, devo, caio)'),
    merge: MergeConfigSchema.describe('the merge queue of parallel runs, and manual review'),
    worktrees: WorktreesConfigSchema.describe("the tasks' git worktrees in parallel runs"),
    forge: ForgeConfigSchema.describe("tasks as GitHub Actions jobs, landed through the forge's merge queue"),
    reports: ReportsConfigSchema.describe('how much of the reports and run logs is kept on disk'),
    proof: ProofConfigSchema.describe('the fail-to-pass proof: which task types need it, which files are tests'),
  })
  .superRefine((config, ctx) => {
    if (config.llm.provider !== 'vscode') return;
    (config.escalation.ladder ?? []).forEach((step, index) => {
      const entry = typeof step === 'string' ? step : step.agent === 'builtin' ? step.model : undefined;
      if (entry !== undefined && !parseEditorModelSelector(entry))
        ctx.addIssue({
          code: 'custom',
          path: ['escalation', 'ladder', index, ...(typeof step === 'string' ? [] : ['model'])],
          message: `"${entry}" does not name an editor model: ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
    });
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
