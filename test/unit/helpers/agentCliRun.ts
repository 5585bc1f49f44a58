import { execFileSync } from 'node:child_process';
import { existsSync, promises as fs, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AnthropicRecordedRequest, AnthropicStep, AnthropicUsage, AnthropicWireMessage } from '../../fixtures/anthropicServer';
import type { ResponsesInputItem, ResponsesRecordedRequest, ResponsesStep, ResponsesToolCall } from '../../fixtures/responsesServer';
import type { RecordedRequest, ScriptedToolCall, StepFunction } from '../../fixtures/scriptedServer';
import { pinnedAgentCli } from './agentClis';
import { CLI_ENV, runCliInProcess } from './cliHarness';
import { GREETER_JS, GREETER_TEST, packageJson, TESTS_GATE } from './greeterProject';
import { makeTempWorkspace, type TempWorkspace } from './tempWorkspace';

/** What the agent does at one turn of a session: tool calls, or its last words. */
export type AgentTurn = { tools: { name: string; input: Record<string, unknown> }[]; usage?: AnthropicUsage } | { text: string };

/** The text of a message's content (its text blocks and tool results). */
export function messageText(message: AnthropicWireMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((b) => (typeof b.text === 'string' ? b.text : typeof b.content === 'string' ? b.content : JSON.stringify(b.content ?? '')))
    .join('\n');
}

/** The session's prompt: its first user message. */
export function sessionPrompt(request: AnthropicRecordedRequest): string {
  const first = (request.body?.messages ?? []).find((m) => m.role === 'user');
  return first ? messageText(first) : '';
}

/** The iteration a session works on, read from Ralph's prompt (`Iteration N of at most M`). */
export function iterationOf(request: AnthropicRecordedRequest): number {
  return Number(/Iteration (\d+) of at most/.exec(sessionPrompt(request))?.[1] ?? 0);
}

/**
 * A scripted agent for the real Claude Code: `plan[iteration - 1]` is that session's turns; the
 * turn is the number of assistant messages the session has so far. One step serves every request.
 */
export function sessionAgent(plan: AgentTurn[][]): AnthropicStep {
  return (request) => {
    const messages = request.body?.messages ?? [];
    const turns = plan[iterationOf(request) - 1] ?? [{ text: 'nothing planned for this iteration' }];
    const turn = turns[Math.min(messages.filter((m) => m.role === 'assistant').length, turns.length - 1)];
    if ('text' in turn) return { text: turn.text };
    return { toolUses: turn.tools.map((t) => ({ name: t.name, input: t.input })), ...(turn.usage ? { usage: turn.usage } : {}) };
  };
}

export const bash = (command: string): AgentTurn => ({ tools: [{ name: 'Bash', input: { command, description: 'run a command' } }] });
export const mcpComplete = (summary: string): AgentTurn => ({
  tools: [{ name: 'mcp__ralph__ralph_complete', input: { summary, promiseEvidence: 'npm test passes' } }],
});

/** The environment of a person whose Claude Code points at `baseUrl`: a home of its own, no traffic but the model's. */
export async function claudeEnv(baseUrl: string): Promise<{ env: NodeJS.ProcessEnv; home: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-claude-home-'));
  const env: NodeJS.ProcessEnv = {
    ...CLI_ENV,
    HOME: home,
    CLAUDE_CONFIG_DIR: path.join(home, '.claude'),
    ANTHROPIC_BASE_URL: baseUrl,
    ANTHROPIC_API_KEY: 'sk-ant-test-not-a-real-key',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    CLAUDE_CODE_MAX_RETRIES: '0',
  };
  return { env, home };
}

/**
 * The tests gate of these projects: the runner their `npm test` script starts, as a person may configure
 * it (`node --test`). The agent's scripted `npm test` still goes through npm; the gate, run several times a
 * test (the task's base, each iteration, the merge), is spared npm's own start (≈ 0.2 CPU-s a run).
 */
export const NODE_TEST_GATE = { ...TESTS_GATE, command: 'node --test' };

/**
 * The greeter project (one node:test test red at the base: `add` subtracts), initialized by
 * `ralph init`, gated by `node --test` (`NODE_TEST_GATE`), its tasks worked on by the agent CLI at `command`.
 * `ralph init` and `ralph task add` run once a test process (`greeterTemplate`); each project is a
 * copy of that one, its config then committed as `ralph init`'s commit, as it was when each ran them.
 */
export async function agentCliProject(
  kind: string,
  command: string,
  loop: Record<string, unknown> = {},
  agent: Record<string, unknown> = {},
): Promise<TempWorkspace> {
  const template = await greeterTemplate();
  const ws = await makeTempWorkspace();
  execFileSync('cp', ['-a', `${template}/.`, ws.dir]);
  const config = { agent: { kind, command, ...agent }, gates: [NODE_TEST_GATE], loop: { maxIterations: 2, ...loop } };
  await fs.writeFile(ws.path('.ralph/config.json'), `${JSON.stringify(config, null, 2)}\n`);
  ws.git('add', '.ralph/config.json');
  ws.git('commit', '-q', '--amend', '--no-edit');
  return ws;
}

let template: Promise<string> | undefined;

/**
 * The greeter project after `ralph init` (committed) and `ralph task add` (in the working tree), made
 * once a process with a home of its own (neither command reads or writes the home) and removed at its exit.
 * Both run inside this process (`runCliInProcess`): set-up, not what an agent CLI test checks.
 */
function greeterTemplate(): Promise<string> {
  template ??= (async () => {
    const ws = await makeTempWorkspace({
      commit: true,
      files: { 'package.json': packageJson('node --test'), 'greeter.js': GREETER_JS, 'greeter.test.js': GREETER_TEST },
    });
    const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-template-home-'));
    process.once('exit', () => {
      for (const dir of [ws.dir, home]) rmSync(dir, { recursive: true, force: true });
    });
    const env = { ...CLI_ENV, HOME: home };
    const init = await runCliInProcess(['init'], ws.dir, env);
    if (init.code !== 0) throw new Error(`ralph init failed: ${init.stderr}`);
    ws.git('add', '-A');
    ws.git('commit', '-qm', 'ralph init');
    const added = await runCliInProcess(
      ['task', 'add', 'Fix add', '--prompt', 'add(2, 3) must be 5: fix greeter.js', '--promise', 'npm test passes'],
      ws.dir,
      env,
    );
    if (added.code !== 0) throw new Error(`ralph task add failed: ${added.stderr}`);
    return ws.dir;
  })();
  return template;
}

/** Processes whose working folder is inside `dir` (what a session could have left behind). */
export async function processesIn(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of (await fs.readdir('/proc')).filter((n) => /^\d+$/.test(n))) {
    const cwd = await fs.readlink(`/proc/${pid}/cwd`).catch(() => '');
    if (!cwd.startsWith(dir)) continue;
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
    found.push(`${pid} ${(await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')).replace(/\0/g, ' ')}`);
  }
  return found;
}

/** The text of a Responses input item's content. */
function itemText(item: ResponsesInputItem): string {
  if (typeof item.content === 'string') return item.content;
  if (!Array.isArray(item.content)) return typeof item.output === 'string' ? item.output : '';
  return item.content.map((part: { text?: string }) => part?.text ?? '').join('\n');
}

/** A Codex session's prompt (the user messages of its first request) and its iteration. */
export function codexPrompt(request: ResponsesRecordedRequest): string {
  return (request.body?.input ?? [])
    .filter((i) => i.role === 'user')
    .map(itemText)
    .join('\n');
}

export const codexIteration = (request: ResponsesRecordedRequest): number =>
  Number(/Iteration (\d+) of at most/.exec(codexPrompt(request))?.[1] ?? 0);

/** What a Codex session does at one turn: tool calls, or its last words. */
export type CodexTurn = { calls: ResponsesToolCall[] } | { text: string };

/** A scripted agent for the real Codex: `plan[iteration - 1]` is that session's turns; the turn is the tool outputs it has seen so far. */
export function codexAgent(plan: CodexTurn[][]): ResponsesStep {
  return (request) => {
    const input = request.body?.input ?? [];
    const turns = plan[codexIteration(request) - 1] ?? [{ text: 'nothing planned for this iteration' }];
    const seen = input.filter((i) => typeof i.type === 'string' && i.type.endsWith('_call_output')).length;
    const turn = turns[Math.min(seen, turns.length - 1)];
    return 'text' in turn ? { text: turn.text } : { toolCalls: turn.calls };
  };
}

export const shell = (cmd: string): CodexTurn => ({ calls: [{ name: 'exec_command', arguments: { cmd } }] });
export const codexComplete = (summary: string): CodexTurn => ({
  calls: [{ name: 'ralph_complete', namespace: 'mcp__ralph', arguments: { summary, promiseEvidence: 'npm test passes' } }],
});

/**
 * The environment and `agent.args` of a person whose Codex points at the scripted Responses server:
 * a home of their own, the Codex home in it (TMPDIR beside it: Codex will not set up its sandbox helper
 * under its home in the temporary folder), the provider as `-c` overrides, no retries, no analytics.
 * The home is theirs as for the other CLIs: Codex runs its commands in a login shell, which would
 * otherwise read the profile of whoever runs the tests (a version manager's set-up at each command).
 */
export async function codexEnv(url: string): Promise<{ env: NodeJS.ProcessEnv; home: string; args: string[] }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-codex-home-'));
  await fs.mkdir(path.join(home, 'codex-home'));
  await fs.mkdir(path.join(home, 'tmp'));
  const provider = `{name="Scripted",base_url="${url}",wire_api="responses",env_key="RALPH_TEST_CODEX_KEY",request_max_retries=0,stream_max_retries=0}`;
  const args = [
    '-c',
    'model_provider="ralph_scripted"',
    '-c',
    `model_providers.ralph_scripted=${provider}`,
    '-c',
    'analytics.enabled=false',
    '--disable',
    'plugins',
  ];
  const env = {
    ...CLI_ENV,
    HOME: home,
    CODEX_HOME: path.join(home, 'codex-home'),
    TMPDIR: path.join(home, 'tmp'),
    RALPH_TEST_CODEX_KEY: 'sk-test-codex',
  };
  return { env, home, args };
}

/** An OpenCode session's prompt (its first user message) and its iteration. */
export function opencodePrompt(request: RecordedRequest): string {
  const first = (request.body?.messages ?? []).find((m) => m.role === 'user');
  return typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
}

export const opencodeIteration = (request: RecordedRequest): number =>
  Number(/Iteration (\d+) of at most/.exec(opencodePrompt(request))?.[1] ?? 0);

/** What an OpenCode session does at one turn: tool calls, or its last words. */
export type OpenCodeTurn = { calls: ScriptedToolCall[] } | { text: string };

/** A scripted agent for the real OpenCode: `plan[iteration - 1]` is that session's turns; the turn is its assistant messages so far. */
export function opencodeAgent(plan: OpenCodeTurn[][]): StepFunction {
  return (request) => {
    const turns = plan[opencodeIteration(request) - 1] ?? [{ text: 'nothing planned for this iteration' }];
    const seen = (request.body?.messages ?? []).filter((m) => m.role === 'assistant').length;
    const turn = turns[Math.min(seen, turns.length - 1)];
    return 'text' in turn ? { content: turn.text } : { toolCalls: turn.calls };
  };
}

export const ocBash = (command: string): OpenCodeTurn => ({
  calls: [{ name: 'bash', arguments: { command, description: 'run a command' } }],
});
export const ocComplete = (summary: string): OpenCodeTurn => ({
  calls: [{ name: 'ralph_ralph_complete', arguments: { summary, promiseEvidence: 'npm test passes' } }],
});

/** The model of the scripted provider, as `agent.model` names it for OpenCode (`provider/model`). */
export const OPENCODE_MODEL = 'scripted/scripted-model';

/**
 * OpenCode's first start in a home installs its plugin package from the npm registry into the
 * config folder (~60 MB, seconds of CPU); scripts/install-agent-clis.sh installs that folder once
 * beside the CLI (`config-seed/`), and each fresh home gets it as hard links — a home as a person's
 * is after its first day. Without the seed, OpenCode installs it itself, as before.
 */
function seedOpencodeConfig(configDir: string): void {
  const seed = path.join(path.dirname(path.dirname(path.dirname(pinnedAgentCli('opencode').bin))), 'config-seed');
  if (existsSync(path.join(seed, 'node_modules'))) execFileSync('cp', ['-al', `${seed}/.`, configDir]);
}

/**
 * The environment of a person whose OpenCode points at the scripted OpenAI-compatible server: its
 * own config, data and cache folders (XDG, in a home of its own), the provider in its global
 * `opencode.json` (`@ai-sdk/openai-compatible`, bundled), no models.dev fetch; the config folder seeded with
 * the plugin package OpenCode would otherwise download on its first start (`seedOpencodeConfig`).
 */
export async function opencodeEnv(url: string): Promise<{ env: NodeJS.ProcessEnv; home: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-opencode-home-'));
  const xdg = { XDG_CONFIG_HOME: '.config', XDG_DATA_HOME: '.local/share', XDG_CACHE_HOME: '.cache', XDG_STATE_HOME: '.local/state' };
  const dirs = Object.fromEntries(Object.entries(xdg).map(([k, v]) => [k, path.join(home, v)]));
  await fs.mkdir(path.join(dirs.XDG_CONFIG_HOME, 'opencode'), { recursive: true });
  seedOpencodeConfig(path.join(dirs.XDG_CONFIG_HOME, 'opencode'));
  const config = {
    provider: {
      scripted: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted',
        options: { baseURL: url, apiKey: '{env:RALPH_TEST_OPENCODE_KEY}' },
        models: { 'scripted-model': { name: 'Scripted model' } },
      },
    },
    autoupdate: false,
    share: 'disabled',
  };
  await fs.writeFile(path.join(dirs.XDG_CONFIG_HOME, 'opencode', 'opencode.json'), JSON.stringify(config, null, 2));
  const env = { ...CLI_ENV, HOME: home, ...dirs, OPENCODE_DISABLE_MODELS_FETCH: '1', RALPH_TEST_OPENCODE_KEY: 'sk-test-opencode' };
  return { env, home };
}
