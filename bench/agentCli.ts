/**
 * Issue 46's cost figure: what an iteration costs when an agent CLI does it, beside the built-in
 * agent. One task of one trivial iteration (write a file, COMPLETE) in a fresh git project, run
 * with `ralph run` (the bundle, as people run it) by (a) the built-in agent against the scripted
 * OpenAI-compatible server, (b) each real, pinned agent CLI against a scripted server of the API
 * it speaks — Claude Code the Anthropic Messages one, Codex the Responses one, Gemini CLI the
 * Gemini API one, OpenCode and the Copilot CLI the OpenAI-compatible one — its shell tool writing
 * the file, Ralph's MCP `ralph_complete` signalling; every model answer at once, so what is
 * measured is the overhead: Ralph's and the CLI's own. The agents run in turn within each round,
 * so a ratio compares runs made side by side on the same machine. Each agent is served once for
 * the section: a CLI keeps one home (its config, caches, sessions) across its tasks, as a person's
 * does; its first start in it (OpenCode installs its plugin package there from the npm registry)
 * is the uncounted warm-up task's.
 *
 * Per task: wall time, the machine's CPU-seconds (`/proc/stat`, whoever spent it: the ratios are
 * of these) and the run's own (its process tree, as the shell's `times` reports for waited-for
 * children — which misses a CLI inside Ralph's sandbox, bubblewrap's own children). `RALPH_BENCH_AGENT_CLI_ROUNDS` sets the rounds (default 5).
 * An agent CLI not installed (scripts/install-agent-clis.sh) is left out, and said so.
 */
import { execFile } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CliAgentKind } from '../src/core/agentKinds';
import { startAnthropicServer } from '../test/fixtures/anthropicServer';
import { startResponsesServer } from '../test/fixtures/responsesServer';
import { startScriptedServer } from '../test/fixtures/scriptedServer';
import { startGeminiServer } from '../test/fixtures/geminiServer';
import {
  bash,
  claudeEnv,
  codexAgent,
  codexComplete,
  codexEnv,
  mcpComplete,
  ocBash,
  ocComplete,
  OPENCODE_MODEL,
  opencodeAgent,
  opencodeEnv,
  sessionAgent,
  shell,
} from '../test/unit/helpers/agentCliRun';
import { pinnedAgentCli } from '../test/unit/helpers/agentClis';
import { COPILOT_MODEL, copilotAgent, copilotEnv, cpBash, cpComplete } from '../test/unit/helpers/copilotCli';
import { gComplete, GEMINI_MODEL, geminiAgent, geminiEnv, gShell } from '../test/unit/helpers/geminiRun';
import { CLI, CLI_ENV } from '../test/unit/helpers/cliHarness';
import { TEST_KEY_ENV } from '../test/unit/helpers/loopHarness';
import { makeTempWorkspace } from '../test/unit/helpers/tempWorkspace';
import { machineCpu } from './machineCpu';

export type BenchAgent = 'builtin' | CliAgentKind;
const AGENTS: BenchAgent[] = ['builtin', 'claude-code', 'codex', 'opencode', 'copilot', 'gemini'];
const LABELS: Record<BenchAgent, string> = {
  builtin: 'built-in agent',
  'claude-code': 'Claude Code',
  codex: 'Codex',
  opencode: 'OpenCode',
  copilot: 'Copilot CLI',
  gemini: 'Gemini CLI',
};
const FILE = 'hello.txt';

/** One agent's figures: the median of its rounds, and each round's. */
export interface AgentFigures {
  agent: BenchAgent;
  /** The CLI's package and version (agent CLIs only). */
  version?: string;
  wallMs: number;
  /** The run's own process tree. */
  ownCpuSeconds: number;
  /** The machine's, neighbours included. */
  machineCpuSeconds: number;
  rounds: { wallMs: number; ownCpuSeconds: number; machineCpuSeconds: number }[];
}

export interface AgentCliBenchResult {
  rounds: number;
  agents: AgentFigures[];
  /** Agent CLIs left out, and why. */
  skipped: string[];
  /** Per agent CLI: its medians over the built-in agent's (wall, the machine's CPU-s), and the median of the per-round ratios. */
  ratios: { agent: CliAgentKind; wall: number; cpu: number; wallRoundMedian: number; cpuRoundMedian: number }[];
}

/** An agent CLI's scripted endpoint, whose agent writes the file with the CLI's shell tool and calls Ralph's MCP `ralph_complete`: the rest of its `agent` key, its environment and home. */
type ServedCli = { agent: Record<string, unknown>; env: NodeJS.ProcessEnv; home: string; close(): Promise<void> };
const WRITE = `echo hello > ${FILE}`;
/** Every request of every session is served by the same step (the plan's turn is read from the request): enough for all the bench's tasks. */
const steps = <T>(step: T): T[] => Array.from({ length: 400 }, () => step);

const CLIS: Record<CliAgentKind, () => Promise<ServedCli>> = {
  'claude-code': async () => {
    const server = await startAnthropicServer({ steps: steps(sessionAgent([[bash(WRITE), mcpComplete('written'), { text: 'Done.' }]])) });
    return { agent: {}, ...(await claudeEnv(server.url)), close: () => server.close() };
  },
  codex: async () => {
    const server = await startResponsesServer({ steps: steps(codexAgent([[shell(WRITE), codexComplete('written'), { text: 'Done.' }]])) });
    const { env, home, args } = await codexEnv(server.url);
    return { agent: { model: 'scripted-codex', args }, env, home, close: () => server.close() };
  },
  opencode: async () => {
    const server = await startScriptedServer({ steps: steps(opencodeAgent([[ocBash(WRITE), ocComplete('written'), { text: 'Done.' }]])) });
    return { agent: { model: OPENCODE_MODEL }, ...(await opencodeEnv(server.url)), close: () => server.close() };
  },
  copilot: async () => {
    const server = await startScriptedServer({ steps: steps(copilotAgent([[cpBash(WRITE), cpComplete('written'), { text: 'Done.' }]])) });
    return { agent: { model: COPILOT_MODEL }, ...(await copilotEnv(server.url)), close: () => server.close() };
  },
  gemini: async () => {
    const server = await startGeminiServer({ steps: steps(geminiAgent([[gShell(WRITE), gComplete('written'), { text: 'Done.' }]])) });
    return { agent: { model: GEMINI_MODEL }, ...(await geminiEnv(server.url)), close: () => server.close() };
  },
};

/** A served agent and what `ralph run` needs for it: its config's `llm`/`agent` keys and its environment. */
interface Served {
  config: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

async function serve(agent: BenchAgent): Promise<Served> {
  if (agent === 'builtin') {
    const server = await startScriptedServer({
      loop: true,
      steps: [
        (request) =>
          (request.body?.messages ?? []).some((m) => m.role === 'tool')
            ? { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'written', promiseEvidence: FILE } }] }
            : { toolCalls: [{ name: 'write_file', arguments: { path: FILE, content: 'hello\n' } }] },
      ],
    });
    const llm = { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['scripted-model'], maxRetries: 0 };
    return { config: { llm }, env: CLI_ENV, close: () => server.close() };
  }
  const cli = await CLIS[agent]();
  const close = async () => {
    await cli.close();
    await fs.rm(cli.home, { recursive: true, force: true });
  };
  return { config: { agent: { kind: agent, command: pinnedAgentCli(agent).bin, ...cli.agent } }, env: cli.env, close };
}

/** `node dist/cli.js …` in `cwd` under bash, which reports its children's CPU (`times`) on fd 3. */
function ralph(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number; out: string; cpuSeconds: number }> {
  const script = '"$@" > "$RALPH_BENCH_OUT" 2>&1; s=$?; times; exit $s';
  return new Promise((resolve) => {
    const out = path.join(cwd, '..', `out-${path.basename(cwd)}.log`);
    execFile(
      'bash',
      ['-c', script, 'bash', process.execPath, CLI, ...args],
      { cwd, env: { ...env, RALPH_BENCH_OUT: out }, maxBuffer: 8 * 2 ** 20 },
      (error, stdout) => {
        // `times`: the shell's own user/sys, then its children's
        const children = stdout.trim().split('\n').at(-1) ?? '';
        const cpuSeconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce((sum, m) => sum + Number(m[1]) * 60 + Number(m[2]), 0);
        void fs.readFile(out, 'utf8').then(
          (text) => resolve({ code: error ? Number(error.code ?? 1) : 0, out: text, cpuSeconds }),
          () => resolve({ code: 1, out: '', cpuSeconds }),
        );
      },
    );
  });
}

/** One task of one iteration by `served` in a fresh project: its wall time and CPU. */
async function oneTask(agent: BenchAgent, served: Served): Promise<AgentFigures['rounds'][number]> {
  const ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# bench\n' } });
  try {
    const init = await ralph(['init'], ws.dir, served.env);
    if (init.code !== 0) throw new Error(`ralph init failed: ${init.out}`);
    const config = { ...served.config, gates: [], loop: { maxIterations: 1 } };
    await fs.writeFile(ws.path('.ralph/config.json'), `${JSON.stringify(config, null, 2)}\n`);
    ws.git('add', '-A');
    ws.git('commit', '-qm', 'ralph init');
    const added = await ralph(
      ['task', 'add', 'Write hello', '--prompt', `Write ${FILE}`, '--promise', `${FILE} exists`],
      ws.dir,
      served.env,
    );
    if (added.code !== 0) throw new Error(`ralph task add failed: ${added.out}`);
    const cpu = machineCpu();
    const started = performance.now();
    const run = await ralph(['run'], ws.dir, served.env);
    const wallMs = performance.now() - started;
    const machineCpuSeconds = cpu.stop();
    const status = JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0]?.status;
    if (run.code !== 0 || status !== 'done') throw new Error(`${LABELS[agent]}: the task ended ${status} (exit ${run.code}):\n${run.out}`);
    return { wallMs, ownCpuSeconds: run.cpuSeconds, machineCpuSeconds };
  } finally {
    await ws.cleanup();
  }
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function benchAgentCli(rounds = Number(process.env.RALPH_BENCH_AGENT_CLI_ROUNDS ?? 5)): Promise<AgentCliBenchResult> {
  const skipped: string[] = [];
  const agents = AGENTS.filter((a) => {
    if (a === 'builtin' || pinnedAgentCli(a).installed) return true;
    const cli = pinnedAgentCli(a);
    skipped.push(`${cli.npmPackage}@${cli.version} not installed (scripts/install-agent-clis.sh)`);
    return false;
  });
  const measured = new Map<BenchAgent, AgentFigures['rounds']>(agents.map((a) => [a, []]));
  // each agent served once: a CLI keeps one home for all its tasks, as a person's does
  const served = new Map<BenchAgent, Served>();
  try {
    for (const agent of agents) served.set(agent, await serve(agent));
    // a warm-up task each (disk caches, the CLIs' first start in their home), not counted
    for (const agent of agents) await oneTask(agent, served.get(agent)!);
    for (let round = 0; round < rounds; round++)
      for (const agent of agents) measured.get(agent)!.push(await oneTask(agent, served.get(agent)!));
  } finally {
    for (const s of served.values()) await s.close();
  }
  const figures = agents.map((agent): AgentFigures => {
    const r = measured.get(agent)!;
    const cli = agent === 'builtin' ? undefined : pinnedAgentCli(agent);
    return {
      agent,
      ...(cli ? { version: `${cli.npmPackage}@${cli.version}` } : {}),
      wallMs: median(r.map((x) => x.wallMs)),
      ownCpuSeconds: median(r.map((x) => x.ownCpuSeconds)),
      machineCpuSeconds: median(r.map((x) => x.machineCpuSeconds)),
      rounds: r,
    };
  });
  const builtin = figures[0];
  const ratios = figures.slice(1).map((f) => ({
    agent: f.agent as CliAgentKind,
    wall: f.wallMs / builtin.wallMs,
    cpu: f.machineCpuSeconds / builtin.machineCpuSeconds,
    wallRoundMedian: median(f.rounds.map((x, i) => x.wallMs / builtin.rounds[i].wallMs)),
    cpuRoundMedian: median(f.rounds.map((x, i) => x.machineCpuSeconds / builtin.rounds[i].machineCpuSeconds)),
  }));
  return { rounds, agents: figures, skipped, ratios };
}

/** The figures, one line each. */
export function agentCliLines(r: AgentCliBenchResult): string[] {
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    `agent CLIs (issue 46): one task of one iteration (write a file, COMPLETE; no gate) by \`ralph run\`, the model answering at once; median of ${r.rounds} rounds, the agents in turn within each round (on ${os.cpus().length} CPUs)`,
    ...r.agents.map(
      (f) =>
        `  ${`${LABELS[f.agent]}${f.version ? ` (${f.version})` : ''}`.padEnd(50)} ${s(f.wallMs).padStart(8)} wall, ${f.machineCpuSeconds.toFixed(2).padStart(5)} CPU-s per task (the machine's; the run's waited-for processes ${f.ownCpuSeconds.toFixed(2)}, which miss a CLI inside Ralph's sandbox)`,
    ),
    ...r.ratios.map(
      (x) =>
        `  ${LABELS[x.agent]} / built-in: ${x.wall.toFixed(2)}× wall, ${x.cpu.toFixed(2)}× CPU-s (round by round, median: ${x.wallRoundMedian.toFixed(2)}× wall, ${x.cpuRoundMedian.toFixed(2)}× CPU-s)`,
    ),
    ...r.skipped.map((why) => `  left out: ${why}`),
  ];
}
