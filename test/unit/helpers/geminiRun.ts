import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GeminiFunctionCall, GeminiRecordedRequest, GeminiStep } from '../../fixtures/geminiServer';
import { partsText } from '../../fixtures/geminiServer';
import { CLI_ENV } from './cliHarness';

/** The model the tests name (`agent.model`): a model Gemini CLI knows, so it routes nothing. */
export const GEMINI_MODEL = 'gemini-2.5-pro';

/** A Gemini CLI session's prompt (the text of its user contents) and its iteration. */
export function geminiPrompt(request: GeminiRecordedRequest): string {
  return (request.body?.contents ?? [])
    .filter((c) => c.role === 'user')
    .map((c) => partsText(c.parts))
    .join('\n');
}

export const geminiIteration = (request: GeminiRecordedRequest): number =>
  Number(/Iteration (\d+) of at most/.exec(geminiPrompt(request))?.[1] ?? 0);

/** What a Gemini CLI session does at one turn: function calls, or its last words. */
export type GeminiTurn = { calls: GeminiFunctionCall[] } | { text: string };

/** A scripted agent for the real Gemini CLI: `plan[iteration - 1]` is that session's turns; the turn is the function responses it has seen so far. */
export function geminiAgent(plan: GeminiTurn[][]): GeminiStep {
  return (request) => {
    const turns = plan[geminiIteration(request) - 1] ?? [{ text: 'nothing planned for this iteration' }];
    const seen = (request.body?.contents ?? []).filter((c) => (c.parts ?? []).some((p) => p.functionResponse)).length;
    const turn = turns[Math.min(seen, turns.length - 1)];
    return 'text' in turn ? { text: turn.text } : { functionCalls: turn.calls };
  };
}

export const gShell = (command: string): GeminiTurn => ({
  calls: [{ name: 'run_shell_command', args: { command, description: 'run a command' } }],
});
/** A file written whole with Gemini CLI's own file tool (its shell tool refuses a command with a substitution in it). */
export const gWrite = (file: string, content: string): GeminiTurn => ({
  calls: [{ name: 'write_file', args: { file_path: file, content } }],
});
export const gComplete = (summary: string): GeminiTurn => ({
  calls: [{ name: 'mcp_ralph_ralph_complete', args: { summary, promiseEvidence: 'npm test passes' } }],
});

/**
 * The environment of a person whose Gemini CLI points at the scripted Gemini API server: a home of
 * its own whose `~/.gemini/settings.json` picks the API key login, the key, the base URL.
 */
export async function geminiEnv(url: string): Promise<{ env: NodeJS.ProcessEnv; home: string }> {
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-gemini-home-'));
  await fs.mkdir(path.join(home, '.gemini'));
  const settings = { security: { auth: { selectedType: 'gemini-api-key' } } };
  await fs.writeFile(path.join(home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`);
  const env = { ...CLI_ENV, HOME: home, GOOGLE_GEMINI_BASE_URL: url, GEMINI_API_KEY: 'test-gemini-key' };
  delete (env as Record<string, string | undefined>).GEMINI_CLI_HOME;
  return { env, home };
}
