import * as assert from 'node:assert/strict';
import { ModelError, type ModelFaultKind } from '../../../src/core/errors';
import { faultOf } from '../../../src/core/llm/faults';
import { OpenAIModelClient } from '../../../src/core/llm/openaiClient';
import type { RetryNotice } from '../../../src/core/llm/types';
import { openAI, openRouter } from '../../fixtures/providerErrors';
import { type FaultStep, startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';

const API_KEY = 'sk-test-DO-NOT-LEAK-0123456789abcdef';
const KEY_SOURCE = 'the environment variable RALPH_FAULT_KEY';

describe('model faults told apart (real openai SDK against provider-shaped error answers)', () => {
  let server: ScriptedServer;
  let delays: number[];
  let notices: RetryNotice[];

  beforeEach(async () => {
    server = await startScriptedServer();
    delays = [];
    notices = [];
  });
  afterEach(() => server.close());

  const client = () =>
    new OpenAIModelClient({
      apiKey: API_KEY,
      baseUrl: server.url,
      timeoutMs: 10_000,
      maxRetries: 2,
      keySource: KEY_SOURCE,
      onRetry: (notice) => notices.push(notice),
      sleep: async (ms) => {
        delays.push(ms);
      },
    });

  async function failure(...steps: FaultStep[]): Promise<ModelError> {
    server.push(...steps, { content: 'never reached' });
    try {
      await client().chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    } catch (error) {
      assert.ok(error instanceof ModelError, String(error));
      return error;
    }
    assert.fail('expected the call to fail');
  }

  const noRetry: [string, () => FaultStep, ModelFaultKind, RegExp][] = [
    ['OpenAI 429 insufficient_quota', openAI.quota, 'quota', /exceeded your current quota/],
    ['OpenRouter 402 insufficient credits', openRouter.credits, 'quota', /Insufficient credits/],
    ['OpenAI 401 invalid_api_key', openAI.auth, 'auth', /Incorrect API key provided/],
    ['OpenRouter 401', openRouter.auth, 'auth', /No auth credentials found/],
    ['OpenAI 400 context_length_exceeded', openAI.contextLength, 'context_length', /maximum context length/],
    ['OpenRouter 400 context length', openRouter.contextLength, 'context_length', /maximum context length/],
    ['Azure 400 content_filter', openAI.contentFilter, 'content_filter', /content management policy/],
    ['OpenRouter 403 moderation', openRouter.moderation, 'content_filter', /flagged/],
  ];
  for (const [name, step, fault, message] of noRetry) {
    it(`${name} → ${fault}, not retried`, async () => {
      const error = await failure(step());
      assert.equal(error.fault, fault);
      assert.equal(error.retryable, false);
      assert.match(error.message, message);
      assert.equal(server.requests.length, 1, 'one request, no retry');
      assert.deepEqual(delays, []);
      assert.ok(!error.message.includes(API_KEY));
    });
  }

  it('an authentication fault names where the key came from, never the key (not even the masked form the server echoes)', async () => {
    const error = await failure(openAI.auth('sk-test-****cdef'));
    assert.ok(error.message.includes(KEY_SOURCE), error.message);
    assert.match(error.message, /authentication failed/);
    assert.ok(!error.message.includes('sk-test-****cdef'), error.message);
    assert.ok(!error.message.includes('cdef'), error.message);
  });

  it('a rate limit is retried after the delay the server asked for, then succeeds', async () => {
    server.push(openAI.rateLimit(1500), openRouter.rateLimit(2), { content: 'done' });
    const response = await client().chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.content, 'done');
    assert.deepEqual(delays, [1500, 2000]);
    assert.deepEqual(
      notices.map((n) => n.fault),
      ['rate_limit', 'rate_limit'],
    );
  });

  it('an outage (OpenAI 503, OpenRouter 502, an error mid-stream) is retried, then fails as an outage', async () => {
    const error = await failure(openAI.outage(), openRouter.outage(), openRouter.midStream());
    assert.equal(error.fault, 'outage');
    assert.equal(error.retryable, true);
    assert.match(error.message, /after 3 attempts \(provider outage\)/);
    assert.match(error.message, /Provider disconnected unexpectedly/);
    assert.deepEqual(
      notices.map((n) => n.fault),
      ['outage', 'outage'],
    );
    assert.equal(server.requests.length, 3);
  });

  it('a connection reset is an outage', async () => {
    const error = await failure({ fault: 'reset' }, { fault: 'reset' }, { fault: 'reset' });
    assert.equal(error.fault, 'outage');
  });

  describe('faultOf (bodies without a server)', () => {
    it('reads OpenRouter numeric codes when there is no status (an error chunk mid-stream)', () => {
      assert.equal(faultOf(undefined, { code: 402, message: 'Insufficient credits' }), 'quota');
      assert.equal(faultOf(undefined, { code: 429, message: 'slow down' }), 'rate_limit');
      assert.equal(faultOf(undefined, { code: 'server_error', message: 'Provider disconnected' }), 'outage');
    });

    it('a 429 whose message is about billing is quota, a 404 about the model is not_found, another 4xx is bad_request', () => {
      assert.equal(faultOf(429, { message: 'Your credit balance is too low' }), 'quota');
      assert.equal(faultOf(404, { message: 'The model `gpt-9` does not exist', code: 'model_not_found' }), 'not_found');
      assert.equal(faultOf(422, { message: 'tools[0].function.name is invalid' }), 'bad_request');
      assert.equal(faultOf(403, { message: 'Project does not have access to model' }), 'auth');
    });
  });
});
