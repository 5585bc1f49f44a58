import * as assert from 'node:assert/strict';

import { type AnthropicServer, startAnthropicServer } from '../../fixtures/anthropicServer';

const tools = [{ name: 'Bash', input_schema: { type: 'object' } }];

async function post(server: AnthropicServer, path: string, body: object) {
  const response = await fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** The SSE events of a streamed reply, in order: `[event, data]`. */
function sseEvents(text: string): [string, Record<string, unknown>][] {
  return text
    .split('\n\n')
    .filter((chunk) => chunk.trim())
    .map((chunk) => {
      const [eventLine, dataLine] = chunk.split('\n');
      return [eventLine.replace('event: ', ''), JSON.parse(dataLine.replace('data: ', '')) as Record<string, unknown>];
    });
}

describe('scripted Anthropic server (for Claude Code tests)', () => {
  let server: AnthropicServer;
  afterEach(() => server?.close());

  it('streams text and a tool_use block with its input in input_json_delta pieces, then stop reason and usage', async () => {
    server = await startAnthropicServer({
      steps: [
        {
          text: 'Running.',
          toolUses: [{ name: 'Bash', input: { command: 'ls -la' }, id: 'toolu_1' }],
          usage: { input_tokens: 9, output_tokens: 4 },
        },
      ],
    });
    const reply = await post(server, '/v1/messages?beta=true', {
      model: 'm',
      stream: true,
      tools,
      messages: [{ role: 'user', content: 'go' }],
    });
    const events = sseEvents(reply.text);
    assert.deepEqual(
      [...new Set(events.map(([name]) => name))],
      ['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop'],
    );
    const json = events
      .filter(([, data]) => (data.delta as { type?: string } | undefined)?.type === 'input_json_delta')
      .map(([, data]) => (data.delta as { partial_json: string }).partial_json);
    assert.ok(json.length > 1);
    assert.deepEqual(JSON.parse(json.join('')), { command: 'ls -la' });
    const delta = events.find(([name]) => name === 'message_delta')![1];
    assert.deepEqual(delta.delta, { stop_reason: 'tool_use', stop_sequence: null });
    assert.deepEqual(delta.usage, { output_tokens: 4 });
    assert.equal(server.requests[0].path, '/v1/messages');
    assert.equal(server.requests[0].main, true);
  });

  it('answers a request without stream as one JSON message', async () => {
    server = await startAnthropicServer({ steps: [{ toolUses: [{ name: 'Bash', input: { command: 'pwd' }, id: 'toolu_2' }] }] });
    const reply = await post(server, '/v1/messages', { model: 'm', tools, messages: [{ role: 'user', content: 'go' }] });
    const message = JSON.parse(reply.text);
    assert.equal(message.stop_reason, 'tool_use');
    assert.deepEqual(message.content, [{ type: 'tool_use', id: 'toolu_2', name: 'Bash', input: { command: 'pwd' } }]);
  });

  it('answers side requests without consuming the script, and an exhausted script with a 500 not to retry', async () => {
    server = await startAnthropicServer({ steps: [{ match: { lastToolResultContains: 'ok-42' }, text: 'seen' }] });
    const side = await post(server, '/v1/messages', { model: 'haiku', messages: [{ role: 'user', content: 'title?' }] });
    assert.equal(JSON.parse(side.text).content[0].text, 'Scripted side answer.');
    const count = await post(server, '/v1/messages/count_tokens', { messages: [] });
    assert.ok(JSON.parse(count.text).input_tokens > 0);
    assert.equal(server.pending, 1);

    const unmatched = await post(server, '/v1/messages', { tools, messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(unmatched.status, 500);
    assert.equal(unmatched.headers.get('x-should-retry'), 'false');
    assert.match(JSON.parse(unmatched.text).error.message, /script exhausted/);

    const toolResult = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'ok-42' }] }] };
    const matched = await post(server, '/v1/messages', { tools, messages: [toolResult] });
    assert.equal(JSON.parse(matched.text).content[0].text, 'seen');
    assert.deepEqual(
      server.requests.map((r) => r.outcome),
      ['side reply', 'count_tokens', 'script exhausted', 'reply'],
    );
  });

  it('answers a status fault with an Anthropic error body', async () => {
    server = await startAnthropicServer({ steps: [{ fault: 'status', status: 401 }] });
    const reply = await post(server, '/v1/messages', { tools, messages: [] });
    assert.equal(reply.status, 401);
    assert.deepEqual(JSON.parse(reply.text), { type: 'error', error: { type: 'authentication_error', message: 'scripted 401' } });
  });
});
