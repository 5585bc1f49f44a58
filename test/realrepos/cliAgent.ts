/**
 * The agent of a run (issue 46): the built-in agent scripted through the OpenAI-compatible server
 * (`agent.ts`), or the real Claude Code or Codex CLI scripted through its own API — the Anthropic
 * Messages server for Claude Code, the Responses server for Codex. A CLI agent does what the
 * built-in one does: in iteration 1 it writes the scenario's files whole with one shell command
 * (each file base64-decoded, so its bytes are exact) and calls Ralph's MCP tool `ralph_complete`;
 * in every later iteration it calls `ralph_complete` again and changes nothing.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type AnthropicRecordedRequest, type AnthropicStaticStep, startAnthropicServer } from '../fixtures/anthropicServer';
import { type ResponsesRecordedRequest, type ResponsesStaticStep, startResponsesServer } from '../fixtures/responsesServer';
import { startScriptedServer } from '../fixtures/scriptedServer';
import { claudeEnv, codexEnv, codexIteration, codexPrompt, iterationOf, messageText, sessionPrompt } from '../unit/helpers/agentCliRun';
import { pinnedAgentCli } from '../unit/helpers/agentClis';
import { CLI_ENV } from '../unit/helpers/cliHarness';
import type { CliAgentKind } from '../../src/core/agentKinds';
import { type AgentPlan, scriptedAgent } from './agent';

export type AgentId = 'builtin' | CliAgentKind;

/** How the table names a run's agent: nothing for the built-in one, ` (Claude Code)` for a CLI. */
export const AGENT_LABELS: Record<AgentId, string> = {
  builtin: '',
  'claude-code': ' (Claude Code)',
  codex: ' (Codex)',
  opencode: ' (OpenCode)',
  copilot: ' (Copilot CLI)',
  gemini: ' (Gemini CLI)',
};

/** The agent of one run, started: what the config and `ralph run` need, and what the agent saw. */
export interface RunAgent {
  /** `llm.baseUrl`: the scripted OpenAI-compatible server (the built-in agent; anything else that asks a model). */
  llmUrl: string;
  /** The config's `agent` key for a CLI agent. */
  agentConfig?: Record<string, unknown>;
  /** Added to the environment of `ralph run` (the CLI's own home, its endpoint and key). */
  env: NodeJS.ProcessEnv;
  /** What the agent was told at the start of each iteration. */
  contexts: string[];
  /** Tool calls that failed (the scenario never happened). */
  toolErrors: string[];
  close(): Promise<void>;
}

/** Printed by the write command once every file is written: its absence in the tool's output is a failed write. */
const WROTE = 'RALPH_SCENARIO_WRITTEN';

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** One shell command that writes each file whole, byte for byte (base64 needs no escaping of the content). */
export function writeCommand(writes: Record<string, string>): string {
  const parts = Object.entries(writes).map(([file, content]) => {
    const dir = path.posix.dirname(file);
    const b64 = Buffer.from(content, 'utf8').toString('base64');
    return `${dir === '.' ? '' : `mkdir -p ${quote(dir)} && `}printf %s ${quote(b64)} | base64 -d > ${quote(file)}`;
  });
  return [...parts, `echo ${WROTE}`].join(' && ');
}

type Turn = { command: string } | { complete: true } | { text: string };

/** A session's turns in `iteration`, from the scenario's plan. */
function turnsOf(plan: AgentPlan, iteration: number): Turn[] {
  const completeAt = plan.completeAt ?? 1;
  const turns: Turn[] = [];
  if (iteration === 1 && Object.keys(plan.writes).length) turns.push({ command: writeCommand(plan.writes) });
  if (iteration >= completeAt) turns.push({ complete: true });
  turns.push({ text: iteration >= completeAt ? 'Done.' : 'The fix is written; I will check it next iteration.' });
  return turns;
}

/** Starts the run's agent: the built-in one, or the pinned CLI of `id` (its executable must be installed). */
export async function startAgent(id: AgentId, plan: AgentPlan): Promise<RunAgent> {
  if (id === 'builtin') {
    const agent = scriptedAgent(plan);
    const server = await startScriptedServer({ steps: [agent.step], loop: true, models: ['scripted-model'] });
    return { llmUrl: server.url, env: {}, contexts: agent.contexts, toolErrors: agent.toolErrors, close: () => server.close() };
  }
  // a CLI run asks the built-in model nothing of the task; anything else that asks (a council) gets a line of text
  const llm = await startScriptedServer({ steps: [{ content: 'Nothing to add.' }], loop: true, models: ['scripted-model'] });
  const seen = { contexts: [] as string[], toolErrors: [] as string[] };
  if (id !== 'claude-code' && id !== 'codex') throw new Error(`the real-repository tier does not script ${id} yet`);
  const cli = id === 'claude-code' ? await startClaudeCode(plan, seen) : await startCodex(plan, seen);
  return {
    llmUrl: llm.url,
    agentConfig: { kind: id, command: pinnedAgentCli(id).bin, ...cli.agent },
    env: cli.env,
    ...seen,
    close: async () => {
      await Promise.all([llm.close(), cli.close()]);
    },
  };
}

interface Seen {
  contexts: string[];
  toolErrors: string[];
}

interface StartedCli {
  agent: Record<string, unknown>;
  env: NodeJS.ProcessEnv;
  close(): Promise<void>;
}

/** What a helper's environment adds to the test CLI's own: the CLI's home, endpoint and key. */
const added = (env: NodeJS.ProcessEnv): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(env).filter(([key, value]) => CLI_ENV[key] !== value));

/** The step a session takes at `turn`; the write's output checked when the step after it is asked for. */
function nextTurn(plan: AgentPlan, iteration: number, turn: number, lastOutput: string, seen: Seen): Turn {
  const turns = turnsOf(plan, iteration);
  const before = turns[turn - 1];
  if (before && 'command' in before && !lastOutput.includes(WROTE))
    seen.toolErrors.push(`ERROR: the write failed: ${lastOutput.slice(0, 300)}`);
  return turns[Math.min(turn, turns.length - 1)];
}

const SUMMARY = (plan: AgentPlan) => ({ summary: plan.summary, promiseEvidence: plan.promiseEvidence });

async function startClaudeCode(plan: AgentPlan, seen: Seen): Promise<StartedCli> {
  const step = (request: AnthropicRecordedRequest): AnthropicStaticStep => {
    const messages = request.body?.messages ?? [];
    const iteration = iterationOf(request);
    const turn = messages.filter((m) => m.role === 'assistant').length;
    if (turn === 0) seen.contexts[iteration - 1] ??= sessionPrompt(request);
    const last = messages.at(-1);
    const next = nextTurn(plan, iteration, turn, last ? messageText(last) : '', seen);
    if ('text' in next) return { text: next.text };
    if ('command' in next) return { toolUses: [{ name: 'Bash', input: { command: next.command, description: 'write the files' } }] };
    // Claude Code defers MCP tools: listed by name for the model (their schemas fetched on demand), not in `tools`
    if (JSON.stringify(request.body ?? {}).includes('mcp__ralph__ralph_complete'))
      return { toolUses: [{ name: 'mcp__ralph__ralph_complete', input: SUMMARY(plan) }] };
    console.log(
      `      [realrepos] Claude Code, iteration ${iteration}: Ralph's MCP tools not offered; COMPLETE by <ralph>COMPLETE</ralph>`,
    );
    return { text: `${plan.summary} <ralph>COMPLETE</ralph>` };
  };
  const server = await startAnthropicServer({ steps: Array.from({ length: 40 }, () => step) });
  const made = await claudeEnv(server.url);
  return { agent: {}, env: added(made.env), close: () => closeAll(server, made.home) };
}

/** The CLI's endpoint closed and its home (its config, sessions and logs) removed. */
async function closeAll(server: { close(): Promise<void> }, home: string): Promise<void> {
  await server.close();
  await fs.rm(home, { recursive: true, force: true });
}

/** The output of a Responses input item (a tool call's), as text. */
const outputText = (output: unknown) => (typeof output === 'string' ? output : JSON.stringify(output ?? ''));

async function startCodex(plan: AgentPlan, seen: Seen): Promise<StartedCli> {
  const step = (request: ResponsesRecordedRequest): ResponsesStaticStep => {
    const input = request.body?.input ?? [];
    const iteration = codexIteration(request);
    const outputs = input.filter((i) => typeof i.type === 'string' && i.type.endsWith('_call_output'));
    if (outputs.length === 0) seen.contexts[iteration - 1] ??= codexPrompt(request);
    const next = nextTurn(plan, iteration, outputs.length, outputText(outputs.at(-1)?.output), seen);
    if ('text' in next) return { text: next.text };
    if ('command' in next) return { toolCalls: [{ name: 'exec_command', arguments: { cmd: next.command } }] };
    if (offers(request, 'ralph_complete'))
      return { toolCalls: [{ name: 'ralph_complete', namespace: 'mcp__ralph', arguments: SUMMARY(plan) }] };
    // Codex does not wait for an MCP server that is slow to start (a loaded machine): the turn goes out
    // without Ralph's tools, and the agent signals as the prompt's other way says
    console.log(`      [realrepos] Codex, iteration ${iteration}: Ralph's MCP tools not offered yet; COMPLETE by <ralph>COMPLETE</ralph>`);
    return { text: `${plan.summary} <ralph>COMPLETE</ralph>` };
  };
  const server = await startResponsesServer({ steps: Array.from({ length: 40 }, () => step) });
  const made = await codexEnv(server.url);
  // a model Codex has no settings of: Ralph's MCP tools are listed to it directly
  return { agent: { model: 'scripted-codex', args: made.args }, env: added(made.env), close: () => closeAll(server, made.home) };
}

/** Whether a Codex request offers the model a tool of this name (in a namespace, or added by an input item). */
function offers(request: ResponsesRecordedRequest, name: string): boolean {
  type Tool = { name?: string; tools?: Tool[] };
  const has = (tools: Tool[] = []): boolean => tools.some((t) => t.name === name || has(t.tools));
  const added = (request.body?.input ?? []).filter((i) => i.type === 'additional_tools').flatMap((i) => (i.tools as Tool[]) ?? []);
  return has(request.body?.tools as Tool[]) || has(added);
}
