import * as assert from 'node:assert/strict';
import { ModelError, StopRequestedError } from '../../../src/core/errors';
import { OpenAIModelClient, type OpenAIClientOptions } from '../../../src/core/llm/openaiClient';
import type { ChatRequest, RetryNotice, StreamDelta } from '../../../src/core/llm/types';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';

const API_KEY = 'sk-test-DO-NOT-LEAK-0123456789abcdef';

describe('OpenAIModelClient (real openai SDK against the scripted server)', () => {
  let server: ScriptedServer;
  let delays: number[];
  let notices: RetryNotice[];

  beforeEach(async () => {
    server = await startScriptedServer();
    delays = [];
    notices = [];
  });
  afterEach(() => server.close());

  /** A client whose backoff only records the requested delay instead of sleeping. */
  function client(options: Partial<OpenAIClientOptions> = {}): OpenAIModelClient {
    return new OpenAIModelClient({
      apiKey: API_KEY,
      baseUrl: server.url,
      timeoutMs: 10_000,
      maxRetries: 3,
      onRetry: (notice) => notices.push(notice),
      sleep: async (ms) => {
        delays.push(ms);
      },
      ...options,
    });
  }

  function ask(c: OpenAIModelClient, extra: Partial<ChatRequest> = {}) {
    return c.chat({ model: 'test-model', messages: [{ role: 'user', content: 'Say hello' }], ...extra });
  }

  async function rejection(promise: Promise<unknown>): Promise<unknown> {
    try {
      await promise;
    } catch (error) {
      return error;
    }
    assert.fail('expected the call to fail');
  }

  describe('streaming', () => {
    it('assembles streamed text and reports each delta', async () => {
      server.push({ content: 'Hello from the scripted model, streamed in pieces.' });
      const deltas: StreamDelta[] = [];
      const response = await ask(client(), { onDelta: (d) => deltas.push(d) });

      assert.equal(response.content, 'Hello from the scripted model, streamed in pieces.');
      assert.equal(response.finishReason, 'stop');
      assert.equal(response.model, 'test-model');
      assert.deepEqual(response.toolCalls, []);
      const texts = deltas.map((d) => (d.kind === 'text' ? d.text : ''));
      assert.ok(texts.length > 1, `expected several text deltas, got ${texts.length}`);
      assert.equal(texts.join(''), response.content);
    });

    it('assembles two parallel tool calls from deltas split across chunks', async () => {
      server.push({
        content: 'Reading both files.',
        toolCalls: [
          { id: 'call_a', name: 'read_file', arguments: { path: 'src/a.ts', startLine: 1 } },
          { id: 'call_b', name: 'search', arguments: { query: 'TODO', regex: false } },
        ],
      });
      const deltas: StreamDelta[] = [];
      const response = await ask(client(), { onDelta: (d) => deltas.push(d) });

      assert.deepEqual(response.toolCalls, [
        { id: 'call_a', name: 'read_file', arguments: '{"path":"src/a.ts","startLine":1}' },
        { id: 'call_b', name: 'search', arguments: '{"query":"TODO","regex":false}' },
      ]);
      assert.equal(response.finishReason, 'tool_calls');
      assert.equal(response.content, 'Reading both files.');
      assert.deepEqual(
        deltas.filter((d) => d.kind === 'tool_call'),
        [
          { kind: 'tool_call', index: 0, name: 'read_file' },
          { kind: 'tool_call', index: 1, name: 'search' },
        ],
      );
    });

    it('passes malformed tool-call arguments through untouched', async () => {
      server.push({ toolCalls: [{ id: 'call_bad', name: 'read_file', arguments: '{"path": ' }] });
      const response = await ask(client());
      assert.deepEqual(response.toolCalls, [{ id: 'call_bad', name: 'read_file', arguments: '{"path": ' }]);
      assert.equal(notices.length, 0);
    });

    it('records usage from the final chunk', async () => {
      server.push({ content: 'ok', usage: { prompt_tokens: 1234, completion_tokens: 56 } });
      const response = await ask(client());
      assert.deepEqual(response.usage, { promptTokens: 1234, completionTokens: 56, totalTokens: 1290 });
    });

    it('reports zero usage when the server sends none', async () => {
      server.push({ content: 'ok', usage: null });
      const response = await ask(client());
      assert.deepEqual(response.usage, { promptTokens: 0, completionTokens: 0, totalTokens: 0 });
    });
  });

  describe('the request on the wire', () => {
    it('carries the model, function tools, tool results, streaming options and the key', async () => {
      server.push({ content: 'done' });
      await ask(client(), {
        model: 'gpt-4.1-mini',
        temperature: 0.2,
        messages: [
          { role: 'system', content: 'You are Ralph.' },
          { role: 'user', content: 'Fix the bug' },
          {
            role: 'assistant',
            content: null,
            toolCalls: [{ id: 'call_1', name: 'read_file', arguments: '{"path":"a.ts"}' }],
          },
          { role: 'tool', toolCallId: 'call_1', content: 'export const a = 1;' },
        ],
        tools: [
          {
            name: 'read_file',
            description: 'Read a file',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        ],
      });

      assert.equal(server.requests.length, 1);
      const [request] = server.requests;
      assert.equal(request.path, '/v1/chat/completions');
      assert.equal(request.headers.authorization, `Bearer ${API_KEY}`);
      assert.equal(request.model, 'gpt-4.1-mini');
      const body = request.body!;
      assert.equal(body.stream, true);
      assert.deepEqual(body.stream_options, { include_usage: true });
      assert.equal(body.temperature, 0.2);
      assert.deepEqual(body.tools, [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Read a file',
            parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
          },
        },
      ]);
      assert.deepEqual(body.messages, [
        { role: 'system', content: 'You are Ralph.' },
        { role: 'user', content: 'Fix the bug' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"a.ts"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'export const a = 1;' },
      ]);
    });

    it('sends no tools field when no tools are offered', async () => {
      server.push({ content: 'ok' });
      await ask(client());
      assert.equal('tools' in server.requests[0].body!, false);
    });
  });

  describe('retries', () => {
    it('waits exactly what Retry-After asks for after a 429', async () => {
      server.push({ fault: 'status', status: 429, retryAfter: 1 }, { content: 'after the rate limit' });
      const response = await ask(client());

      assert.equal(response.content, 'after the rate limit');
      assert.deepEqual(delays, [1000]);
      assert.equal(server.requests.length, 2);
      assert.equal(notices.length, 1);
      assert.equal(notices[0].attempt, 1);
      assert.equal(notices[0].maxRetries, 3);
      assert.equal(notices[0].delayMs, 1000);
      assert.match(notices[0].reason, /HTTP 429/);
    });

    it('prefers retry-after-ms, and caps what the server asks for at 60 s', async () => {
      server.push(
        { fault: 'status', status: 429, retryAfterMs: 250, retryAfter: 9 },
        { fault: 'status', status: 429, retryAfter: 3600 },
        { content: 'ok' },
      );
      await ask(client());
      assert.deepEqual(delays, [250, 60_000]);
    });

    it('retries a 500 with exponential backoff', async () => {
      server.push({ fault: 'status', status: 500 }, { fault: 'status', status: 502 }, { content: 'recovered' });
      const response = await ask(client());

      assert.equal(response.content, 'recovered');
      assert.equal(server.requests.length, 3);
      assert.equal(delays.length, 2);
      // Jitter draws from the upper half of 1 s, then of 2 s.
      assert.ok(delays[0] >= 500 && delays[0] <= 1000, `first delay ${delays[0]}`);
      assert.ok(delays[1] >= 1000 && delays[1] <= 2000, `second delay ${delays[1]}`);
      assert.deepEqual(
        notices.map((n) => n.attempt),
        [1, 2],
      );
    });

    it('retries after the connection is reset', async () => {
      server.push({ fault: 'reset' }, { content: 'back again' });
      const response = await ask(client());
      assert.equal(response.content, 'back again');
      assert.equal(server.requests.length, 2);
      assert.match(notices[0].reason, /connection/);
    });

    it('times out a request that never answers and retries it', async () => {
      server.push({ fault: 'hang' }, { content: 'answered this time' });
      const response = await ask(client({ timeoutMs: 1000 }));
      assert.equal(response.content, 'answered this time');
      assert.equal(server.requests.length, 2);
      assert.equal(notices.length, 1);
      assert.match(notices[0].reason, /no response within 1000 ms/);
    });

    it('times out a stream that stalls half-way and retries it', async () => {
      server.push({ fault: 'stall', content: 'Let me th' }, { content: 'complete answer' });
      const response = await ask(client({ timeoutMs: 1000 }));
      assert.equal(response.content, 'complete answer');
      assert.equal(server.requests.length, 2);
      assert.match(notices[0].reason, /no response within 1000 ms/);
    });

    it('retries a stream that breaks mid-way as a whole', async () => {
      server.push({ fault: 'truncate', content: 'This answer is cut sh' }, { content: 'The whole answer.' });
      const texts: string[] = [];
      const response = await ask(client(), { onDelta: (d) => d.kind === 'text' && texts.push(d.text) });

      assert.equal(response.content, 'The whole answer.');
      assert.equal(server.requests.length, 2);
      assert.equal(notices.length, 1);
      // The broken attempt's text was streamed before the break; the retry starts over.
      assert.equal(texts[0], 'This answer is cut sh');
      assert.equal(texts.slice(1).join(''), 'The whole answer.');
    });

    it('retries a malformed stream chunk', async () => {
      server.push({ fault: 'malformed-json' }, { content: 'clean' });
      const response = await ask(client());
      assert.equal(response.content, 'clean');
      assert.match(notices[0].reason, /malformed response/);
    });

    it('fails at once on 401 without leaking the key the server echoes back', async () => {
      server.push(
        {
          fault: 'status',
          status: 401,
          body: { error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'invalid_request_error' } },
        },
        { content: 'never reached' },
      );
      const error = await rejection(ask(client()));

      assert.ok(error instanceof ModelError, String(error));
      assert.equal(error.status, 401);
      assert.equal(error.retryable, false);
      assert.equal(error.code, 'model');
      assert.match(error.message, /HTTP 401/);
      assert.ok(error.message.includes(`${server.url}/chat/completions`), error.message);
      assert.ok(!error.message.includes(API_KEY), error.message);
      assert.equal(server.requests.length, 1);
      assert.deepEqual(delays, []);
    });

    for (const status of [400, 403, 404]) {
      it(`fails at once on ${status}`, async () => {
        server.push({ fault: 'status', status }, { content: 'never reached' });
        const error = await rejection(ask(client()));
        assert.ok(error instanceof ModelError);
        assert.equal(error.status, status);
        assert.equal(server.requests.length, 1);
      });
    }

    it('throws ModelError naming the status and endpoint once retries are exhausted', async () => {
      server.push(
        { fault: 'status', status: 503 },
        { fault: 'status', status: 503 },
        { fault: 'status', status: 503, body: { error: { message: `overloaded (key ${API_KEY})` } } },
        { content: 'never reached' },
      );
      const error = await rejection(ask(client({ maxRetries: 2 })));

      assert.ok(error instanceof ModelError, String(error));
      assert.equal(error.status, 503);
      assert.equal(error.retryable, true);
      assert.match(error.message, /HTTP 503/);
      assert.match(error.message, /after 3 attempts/);
      assert.ok(error.message.includes('/v1/chat/completions'), error.message);
      assert.ok(!error.message.includes(API_KEY), error.message);
      assert.equal(server.requests.length, 3);
      assert.equal(delays.length, 2);
      assert.equal(server.pending, 1);
    });

    it('obeys x-should-retry: false (an exhausted script fails fast)', async () => {
      const error = await rejection(ask(client()));
      assert.ok(error instanceof ModelError);
      assert.match(error.message, /script exhausted/);
      assert.equal(server.requests.length, 1);
    });
  });

  describe('abort', () => {
    it('stops during the backoff sleep even when the injected sleep ignores the signal', async () => {
      const controller = new AbortController();
      server.push({ fault: 'status', status: 500 }, { content: 'never reached' });
      const c = client({
        sleep: (ms) => {
          delays.push(ms);
          controller.abort();
          return new Promise<void>(() => {}); // never resolves: only the abort can end the wait
        },
      });
      const error = await rejection(ask(c, { signal: controller.signal }));

      assert.ok(error instanceof StopRequestedError, String(error));
      assert.equal(delays.length, 1);
      assert.equal(server.requests.length, 1);
    });

    it('stops during a real backoff sleep as soon as the signal aborts', async () => {
      const controller = new AbortController();
      // Retry-After 30 s outlasts the test timeout: only the abort can end this wait in time.
      server.push({ fault: 'status', status: 429, retryAfter: 30 }, { content: 'never reached' });
      const c = client({ sleep: undefined, onRetry: (n) => (notices.push(n), controller.abort()) });
      const error = await rejection(ask(c, { signal: controller.signal }));

      assert.ok(error instanceof StopRequestedError, String(error));
      assert.equal(notices[0].delayMs, 30_000);
      assert.equal(server.requests.length, 1);
    });

    it('stops a request in flight without retrying it', async () => {
      const controller = new AbortController();
      server.push(() => {
        setImmediate(() => controller.abort());
        return { fault: 'hang' };
      });
      const error = await rejection(ask(client(), { signal: controller.signal }));

      assert.ok(error instanceof StopRequestedError, String(error));
      assert.equal(server.requests.length, 1);
      assert.equal(notices.length, 0);
    });

    it('rethrows the signal reason when it is one of ours', async () => {
      const controller = new AbortController();
      controller.abort(new StopRequestedError('user pressed Stop'));
      const error = await rejection(ask(client(), { signal: controller.signal }));
      assert.ok(error instanceof StopRequestedError);
      assert.equal(error.message, 'user pressed Stop');
      assert.equal(server.requests.length, 0);
    });
  });
});
