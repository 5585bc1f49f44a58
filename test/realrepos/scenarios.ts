/**
 * The six agents of issue 33, each run on a real case through the real `ralph` CLI, in the default
 * parallel configuration (loop.maxParallel 3: the task in its own worktree, landed by the merge
 * queue) and with loop.maxParallel 1 (the task in the workspace itself).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs, readdirSync } from 'node:fs';
import * as path from 'node:path';
import type { AgentPlan } from './agent';
import { applyEdits, type CaseData, dataOf, type Edit } from './caseData';
import { caseTrees, type CaseTrees, type RealCase } from './cases';
import { AGENT_LABELS, type AgentId, startAgent } from './cliAgent';
import { type CliRun, layOut, ralph } from './workspace';

export type ScenarioId =
  | 'upstream-fix'
  | 'no-change'
  | 'wrong-edit'
  | 'assertions-deleted'
  | 'test-skipped'
  | 'fix-with-legacy-red'
  | 'fix-then-complete'
  | 'runner-config'
  | 'transitive-break';

export interface Scenario {
  id: ScenarioId;
  /** What the agent does, for the table. */
  label: string;
  expect: 'done' | 'not done';
  plan(trees: CaseTrees, data: CaseData): AgentPlan;
  atBase?(data: CaseData): Record<string, string>;
  /** Whether the case has what the scenario needs (default: every case). */
  applies?(data: CaseData): boolean;
}

const editedFiles = (files: Map<string, string>, edits: Edit[]) =>
  Object.fromEntries([...new Set(edits.map((e) => e.file))].map((f) => [f, applyEdits(f, files.get(f) ?? '', edits)]));
const fixed = (trees: CaseTrees) => Object.fromEntries([...trees.sourceFixed].map(([f, b]) => [f, b.toString('utf8')]));
/** The runner's config with the case's longer timeout: package.json edited, or config files written whole. */
function runnerConfig(trees: CaseTrees, data: CaseData): Record<string, string> {
  const change = data.runnerConfig!;
  return {
    ...(change.manifest ? { 'package.json': applyEdits('package.json', trees.manifest, change.manifest) } : {}),
    ...change.files,
  };
}
const claim = (summary: string): Pick<AgentPlan, 'summary' | 'promiseEvidence'> => ({ summary, promiseEvidence: summary });

export const SCENARIOS: Scenario[] = [
  {
    id: 'upstream-fix',
    label: 'the upstream fix, COMPLETE',
    expect: 'done',
    plan: (trees) => ({ writes: fixed(trees), ...claim("Fixed the library's code; the behaviour is correct now.") }),
  },
  {
    id: 'no-change',
    label: 'no change, COMPLETE',
    expect: 'not done',
    plan: () => ({ writes: {}, ...claim('The library already behaves correctly; nothing needed changing.') }),
  },
  {
    id: 'wrong-edit',
    label: 'a wrong edit of the code under test (test still red), COMPLETE',
    expect: 'not done',
    plan: (trees, data) => ({ writes: editedFiles(trees.sourceBefore, data.wrongEdit), ...claim("Fixed the library's code.") }),
  },
  {
    id: 'assertions-deleted',
    label: "the upstream commit's new assertions deleted, COMPLETE",
    expect: 'not done',
    plan: (trees) => ({ writes: Object.fromEntries(trees.testBefore), ...claim('The tests pass now.') }),
  },
  {
    id: 'test-skipped',
    label: "the failing test skipped with the runner's own skip, COMPLETE",
    expect: 'not done',
    applies: (data) => data.skip !== undefined,
    plan: (trees, data) => ({ writes: editedFiles(trees.testAfter, data.skip!), ...claim('No test fails any more.') }),
  },
  {
    id: 'fix-with-legacy-red',
    label: 'the upstream fix, an unrelated red test at the base, COMPLETE',
    expect: 'done',
    plan: (trees) => ({
      writes: fixed(trees),
      ...claim("Fixed the library's code; the release-date test was red before and is unrelated."),
    }),
    applies: (data) => data.legacy !== undefined,
    atBase: (data) => data.legacy!,
  },
  {
    // issue 34: iteration 1's gate runs the affected tests where the runner and the suite let it (the whole suite, and why, elsewhere); COMPLETE is judged whole
    id: 'fix-then-complete',
    label: 'the upstream fix, no signal; COMPLETE in iteration 2',
    expect: 'done',
    plan: (trees) => ({ writes: fixed(trees), ...claim("Fixed the library's code; the behaviour is correct now."), completeAt: 2 }),
  },
  {
    // issue 34: a change to the runner's config runs the whole suite; the gate's definition changed, so COMPLETE is refused
    id: 'runner-config',
    label: "the upstream fix and a longer timeout in the runner's config; COMPLETE in iteration 2",
    expect: 'not done',
    applies: (data) => data.runnerConfig !== undefined,
    plan: (trees, data) => ({
      writes: { ...fixed(trees), ...runnerConfig(trees, data) },
      ...claim("Fixed the library's code and gave the slow tests more time."),
      completeAt: 2,
    }),
  },
  {
    // issue 34: a break a test reaches only through another module: in the part of iteration 1 (the import graph), refused at COMPLETE
    id: 'transitive-break',
    label: 'the upstream fix and a break a test reaches only through another module; COMPLETE in iteration 2',
    expect: 'not done',
    applies: (data) => data.transitive !== undefined,
    plan: (trees, data) => ({
      writes: { ...fixed(trees), ...data.transitive!.files },
      ...claim("Fixed the library's code and tidied a helper."),
      completeAt: 2,
    }),
  },
];

export interface Config {
  id: 'parallel' | 'serial';
  label: string;
  maxParallel: number;
}

export const CONFIGS: Config[] = [
  { id: 'parallel', label: 'maxParallel 3 (default, worktree)', maxParallel: 3 },
  { id: 'serial', label: 'maxParallel 1', maxParallel: 1 },
];

/** A case whose suite takes longer than this runs the reduced set below (CI's time; README.md says which). */
export const SLOW_SUITE_SECONDS = 20;
export const SLOW_CASE_RUNS: [Scenario['id'], Config['id']][] = [
  ['upstream-fix', 'parallel'],
  ['upstream-fix', 'serial'],
  ['no-change', 'serial'],
  ['assertions-deleted', 'serial'],
  ['fix-then-complete', 'serial'],
  ['runner-config', 'serial'],
  ['transitive-break', 'serial'],
];

/**
 * Issue 46: the agent CLIs run on one case whose suite is among the shortest (mocha, ~1 s; its
 * built-in runs take 3–4 s), each through these scenarios in both configurations, beside the
 * built-in agent's runs (each takes 5–8 s with a real CLI).
 */
export const CLI_AGENT_CASE = 'ms-2669f23';
export const CLI_AGENTS = ['claude-code', 'codex'] as const;
export const CLI_AGENT_SCENARIOS: Scenario['id'][] = ['upstream-fix', 'no-change', 'assertions-deleted'];

/** A run: the case's scenario, in a configuration, worked on by an agent. */
export type Run = [Scenario, Config, AgentId];

/** `case/scenario/config`, and `/claude-code` or `/codex` after it for a CLI agent's run. */
export const keyOf = (c: RealCase, s: Scenario, k: Config, a: AgentId = 'builtin') =>
  `${c.id}/${s.id}/${k.id}${a === 'builtin' ? '' : `/${a}`}`;

/** The scenario's label for the table, the agent named when it is a CLI: `the upstream fix, COMPLETE (Claude Code)`. */
export const labelOf = (s: Scenario, a: AgentId) => `${s.label}${AGENT_LABELS[a]}`;

/**
 * The runs of a case: every scenario in both configurations with the built-in agent, or the
 * reduced set on a slow suite (RALPH_REALREPOS_FULL=1: all of them); on CLI_AGENT_CASE, also
 * CLI_AGENT_SCENARIOS in both configurations with each agent CLI. RALPH_REALREPOS_ONLY keeps the runs whose key
 * (`case/scenario/config[/agent]`) contains one of its comma-separated words (mocha's --grep
 * cannot: every run starts in the hook before); `claude-code,codex` keeps the agent CLIs' runs.
 */
export function runsOf(c: RealCase): Run[] {
  const only = process.env.RALPH_REALREPOS_ONLY?.split(',').filter(Boolean);
  const data = dataOf(c);
  let builtin = SCENARIOS.filter((s) => s.applies?.(data) ?? true).flatMap((s) => CONFIGS.map((k): Run => [s, k, 'builtin']));
  if (data.runs) builtin = builtin.filter(([s, k]) => data.runs!.includes(`${s.id}/${k.id}`));
  if (c.suiteSeconds > SLOW_SUITE_SECONDS && process.env.RALPH_REALREPOS_FULL !== '1')
    builtin = builtin.filter(([s, k]) => SLOW_CASE_RUNS.some(([sid, kid]) => s.id === sid && k.id === kid));
  const cli =
    c.id !== CLI_AGENT_CASE
      ? []
      : CLI_AGENTS.flatMap((a) =>
          SCENARIOS.filter((s) => CLI_AGENT_SCENARIOS.includes(s.id)).flatMap((s) => CONFIGS.map((k): Run => [s, k, a])),
        );
  return [...builtin, ...cli].filter(([s, k, a]) => !only || only.some((word) => keyOf(c, s, k, a).includes(word)));
}

/** Every not-done agent is bounded: its second refused COMPLETE ends the task (timeout or needs_help), never a long run. */
export const MAX_ITERATIONS = 2;
const RUN_TIMEOUT_MS = 8 * 60_000;

export interface Outcome {
  agent: AgentId;
  /** The iteration of the agent's first COMPLETE. */
  completeAt: number;
  status: string;
  iterations: number;
  blockedReason?: string;
  cli: CliRun;
  /** What the agent was told at the start of each iteration. */
  contexts: string[];
  toolErrors: string[];
  /** The task's record: its reports (.ralph/reports/<id>/) and the run's event log (.ralph/runs/), as text. */
  record: string;
  /** The target branch's tip and its files that the scenario's agent wrote. */
  targetTip: string;
  targetFiles: Map<string, Buffer | undefined>;
  base: string;
  workspace: string;
  seconds: number;
}

/** Lays the scenario's workspace out, runs `ralph run` against its scripted agent, and reads what came of it. */
export async function runScenario(c: RealCase, nodeModules: string, [scenario, config, agentId]: Run, keep = false): Promise<Outcome> {
  const started = Date.now();
  const trees = await caseTrees(c);
  const data = dataOf(c);
  const plan = scenario.plan(trees, data);
  const agent = await startAgent(agentId, plan);
  const ws = await layOut({
    c,
    nodeModules,
    label: `${c.id}-${scenario.id}-${config.id}${agentId === 'builtin' ? '' : `-${agentId}`}`,
    atBase: scenario.atBase?.(data),
    serverUrl: agent.llmUrl,
    agent: agent.agentConfig,
    maxParallel: config.maxParallel,
    maxIterations: MAX_ITERATIONS,
  }).catch(async (error: unknown) => {
    await agent.close();
    throw error;
  });
  try {
    const cli = await ralph(['run', '--task', ws.taskId], ws.dir, RUN_TIMEOUT_MS, agent.env);
    const tasks = JSON.parse(await fs.readFile(path.join(ws.dir, '.ralph', 'tasks.json'), 'utf8')) as {
      tasks: { id: string; status: string; iterations: number; blockedReason?: string }[];
    };
    const task = tasks.tasks.find((t) => t.id === ws.taskId);
    const branch = ws.git('symbolic-ref', '--short', 'HEAD');
    const targetFiles = new Map(Object.keys(plan.writes).map((f) => [f, showFile(ws.dir, `${branch}:${f}`)]));
    return {
      agent: agentId,
      completeAt: plan.completeAt ?? 1,
      status: task?.status ?? 'missing',
      iterations: task?.iterations ?? 0,
      blockedReason: task?.blockedReason,
      cli,
      contexts: agent.contexts,
      toolErrors: agent.toolErrors,
      record: await recordText(ws.dir, ws.taskId),
      targetTip: ws.git('rev-parse', branch),
      targetFiles,
      base: ws.base,
      workspace: ws.dir,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await agent.close();
    // a kept workspace gets what the agent was told, iteration by iteration, beside it
    if (keep) await fs.writeFile(`${ws.dir}.contexts.txt`, agent.contexts.map((t, i) => `===== iteration ${i + 1}\n${t}`).join('\n'));
    else await ws.cleanup();
  }
}

function showFile(dir: string, spec: string): Buffer | undefined {
  try {
    return execFileSync('git', ['show', spec], { cwd: dir, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 * 1024 * 1024 });
  } catch {
    return undefined;
  }
}

/** The task's reports and the run logs, each file headed by its path. */
async function recordText(dir: string, taskId: string): Promise<string> {
  const files = [...walk(path.join(dir, '.ralph', 'reports', taskId)), ...walk(path.join(dir, '.ralph', 'runs'))].filter((f) =>
    /\.(md|ndjson|json)$/.test(f),
  );
  const parts = await Promise.all(files.map(async (f) => `=== ${path.relative(dir, f)}\n${await fs.readFile(f, 'utf8')}`));
  return parts.join('\n');
}

function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
  );
}
