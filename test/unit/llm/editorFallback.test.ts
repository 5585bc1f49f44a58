import * as assert from 'node:assert/strict';
import { parseConfig } from '../../../src/core/config/load';
import { ConfigError, ModelError } from '../../../src/core/errors';
import type { FallbackNotice } from '../../../src/core/llm/fallbackClient';
import { withEditorFallback } from '../../../src/core/llm/factory';
import type { ChatRequest, ChatResponse, ModelClient, TokenCounter } from '../../../src/core/llm/types';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';

/**
 * A hand-written stand-in for the editor's models (the LM adapter is exercised against a real
 * extension host in the integration tier): `failing` models answer with the given fault.
 */
class EditorModels implements ModelClient {
  readonly calls: string[] = [];
  readonly tokens: TokenCounter = { countTokens: async () => 7, maxInputTokens: async () => 64_000 } as unknown as TokenCounter;
  constructor(private readonly failing: Map<string, ModelError>) {}
  async chat(request: ChatRequest): Promise<ChatResponse> {
    this.calls.push(request.model);
    const error = this.failing.get(request.model);
    if (error) throw error;
    return {
      model: request.model,
      content: `answer from ${request.model}`,
      toolCalls: [],
      finishReason: 'stop',
      usage: { promptTokens: 5, completionTokens: 2, totalTokens: 7 },
    };
  }
}

const ask = (client: ModelClient, model: string) => client.chat({ model, messages: [{ role: 'user', content: 'hi' }] });

describe('llm.fallback over the editor\'s models (llm.provider "vscode")', () => {
  let server: ScriptedServer | undefined;
  afterEach(async () => server?.close());

  it("falls back to another editor model when the primary's quota is used up, and names both", async () => {
    const config = parseConfig({ llm: { provider: 'vscode', models: ['copilot/gpt-4.1'], fallback: [{ model: 'copilot/gpt-4o-mini' }] } });
    const editor = new EditorModels(
      new Map([['copilot/gpt-4.1', new ModelError('You have exceeded your premium request allowance', undefined, false, 'quota')]]),
    );
    const notices: FallbackNotice[] = [];
    const client = withEditorFallback(config.llm, editor, editor, { onFallback: (n) => notices.push(n), clock: { now: () => 0 } });
    const response = await ask(client, 'copilot/gpt-4.1');
    assert.equal(response.content, 'answer from copilot/gpt-4o-mini');
    assert.deepEqual(editor.calls, ['copilot/gpt-4.1', 'copilot/gpt-4o-mini']);
    assert.deepEqual(
      notices.map((n) => [n.kind, n.from, n.to]),
      [['switch', 'copilot/gpt-4.1', 'copilot/gpt-4o-mini']],
    );
    assert.equal(client.tokens, editor.tokens, "compaction keeps the editor model's own token counting");
  });

  it('falls back to an OpenAI-compatible endpoint named by baseUrl, with its own key only', async () => {
    server = await startScriptedServer({ steps: [{ content: 'answer from the endpoint' }] });
    const config = parseConfig({
      llm: {
        provider: 'vscode',
        models: ['copilot/gpt-4.1'],
        fallback: [{ model: 'backup-model', baseUrl: server.url, apiKeyEnv: 'RALPH_BACKUP_KEY' }],
      },
    });
    const editor = new EditorModels(
      new Map([['copilot/gpt-4.1', new ModelError('the model provider is unavailable', 503, true, 'outage')]]),
    );
    const client = withEditorFallback(config.llm, editor, editor, {
      fallbackKeys: { RALPH_BACKUP_KEY: 'sk-backup-0123456789' },
      clock: { now: () => 0 },
    });
    const response = await ask(client, 'copilot/gpt-4.1');
    assert.equal(response.content, 'answer from the endpoint');
    const request = server.requests.find((r) => r.path.endsWith('/chat/completions'));
    assert.equal(request?.body?.model, 'backup-model');
    assert.equal(request?.headers.authorization, 'Bearer sk-backup-0123456789');
  });

  it('refuses a fallback entry that is neither an editor model nor an endpoint', () => {
    assert.throws(
      () => parseConfig({ llm: { provider: 'vscode', models: ['copilot/gpt-4.1'], fallback: [{ model: 'gpt-4o-mini' }] } }),
      (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, /llm\.fallback\.0\.model.*"gpt-4o-mini" does not name an editor model \(give the entry a "baseUrl"/s);
        return true;
      },
    );
  });
});
