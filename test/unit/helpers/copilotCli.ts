/**
 * The real GitHub Copilot CLI in tests (issue 46): its model the scripted OpenAI-compatible server
 * (`COPILOT_PROVIDER_BASE_URL`, offline: no GitHub login, no telemetry, no update), a home of its
 * own, and a scripted agent whose turns are the session's requests.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RecordedRequest, ScriptedToolCall, StepFunction } from '../../fixtures/scriptedServer';
import { AGENT_CLIS_DIR } from './agentClis';
import { CLI_ENV } from './cliHarness';

/** The model Copilot is told to use (`COPILOT_MODEL`): the scripted server's. */
export const COPILOT_MODEL = 'scripted-model';

/**
 * The environment of a person whose Copilot CLI points at the scripted server: its own home (its
 * `~/.copilot`), offline, the provider's key. Copilot unpacks itself (≈ 235 MB) into
 * `$XDG_CACHE_HOME/copilot` on its first start: one cache beside the installed CLIs serves every test.
 */
export async function copilotEnv(url: string): Promise<{ env: NodeJS.ProcessEnv; home: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-copilot-home-'));
  const env: NodeJS.ProcessEnv = {
    ...CLI_ENV,
    HOME: home,
    XDG_CACHE_HOME: path.join(AGENT_CLIS_DIR, 'copilot-cache'),
    COPILOT_PROVIDER_BASE_URL: url,
    COPILOT_PROVIDER_API_KEY: 'sk-test-copilot',
    COPILOT_MODEL,
    COPILOT_OFFLINE: 'true',
  };
  return { env, home };
}

/** A Copilot session's prompt (its first user message, less the date Copilot puts before it) and its iteration. */
export function copilotPrompt(request: RecordedRequest): string {
  const first = (request.body?.messages ?? []).find((m) => m.role === 'user');
  const content = typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
  return content.replace(/^<current_datetime>[^<]*<\/current_datetime>\s*/, '');
}

export const copilotIteration = (request: RecordedRequest): number =>
  Number(/Iteration (\d+) of at most/.exec(copilotPrompt(request))?.[1] ?? 0);

/** What a Copilot session does at one turn: tool calls, or its last words. */
export type CopilotTurn = { calls: ScriptedToolCall[] } | { text: string };

/** A scripted agent for the real Copilot CLI: `plan[iteration - 1]` is that session's turns; the turn is its assistant messages so far. */
export function copilotAgent(plan: CopilotTurn[][]): StepFunction {
  return (request) => {
    const turns = plan[copilotIteration(request) - 1] ?? [{ text: 'nothing planned for this iteration' }];
    const seen = (request.body?.messages ?? []).filter((m) => m.role === 'assistant').length;
    const turn = turns[Math.min(seen, turns.length - 1)];
    return 'text' in turn ? { content: turn.text } : { toolCalls: turn.calls };
  };
}

export const cpBash = (command: string): CopilotTurn => ({
  calls: [{ name: 'bash', arguments: { command, description: 'run a command' } }],
});
/** Ralph's MCP tool as Copilot names it: `<server>-<tool>`. */
export const cpComplete = (summary: string): CopilotTurn => ({
  calls: [{ name: 'ralph-ralph_complete', arguments: { summary, promiseEvidence: 'npm test passes' } }],
});
