/**
 * The mapping between our chat types and VS Code's Language Model API, in plain Node: the few
 * LM API classes it touches are hand-written fakes with the same shapes (constructors, fields,
 * the static User/Assistant factories, LanguageModelError with a `code`).
 */
import * as assert from 'node:assert/strict';
import { ModelError, StopRequestedError } from '../../../src/core/errors';
import type { ChatMessage, StreamDelta } from '../../../src/core/llm/types';
import {
  classifyLmError,
  LmResponseAssembler,
  lmModelError,
  toLmMessages,
  toLmTools,
  type LmShapes,
} from '../../../src/adapters/lmMapping';

class TextPart {
  constructor(public value: string) {}
}
class ToolCallPart {
  constructor(
    public callId: string,
    public name: string,
    public input: object,
  ) {}
}
class ToolResultPart {
  constructor(
    public callId: string,
    public content: unknown[],
  ) {}
}
class DataPart {
  constructor(public data: Uint8Array) {}
}
type Part = TextPart | ToolCallPart | ToolResultPart;
class ChatMessageFake {
  constructor(
    public role: 1 | 2,
    public content: Part[],
  ) {}
  static User(content: Part[] | string) {
    return new ChatMessageFake(1, typeof content === 'string' ? [new TextPart(content)] : content);
  }
  static Assistant(content: Part[] | string) {
    return new ChatMessageFake(2, typeof content === 'string' ? [new TextPart(content)] : content);
  }
}
class LanguageModelErrorFake extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'LanguageModelError';
  }
  static NoPermissions(message = 'NoPermissions') {
    return new LanguageModelErrorFake(message, 'NoPermissions');
  }
  static Blocked(message = 'Blocked') {
    return new LanguageModelErrorFake(message, 'Blocked');
  }
  static NotFound(message = 'NotFound') {
    return new LanguageModelErrorFake(message, 'NotFound');
  }
}

const lm = {
  LanguageModelChatMessage: ChatMessageFake,
  LanguageModelTextPart: TextPart,
  LanguageModelToolCallPart: ToolCallPart,
  LanguageModelToolResultPart: ToolResultPart,
  LanguageModelError: LanguageModelErrorFake,
} as unknown as LmShapes;

/** A message as plain data: role letter and its parts. */
function plain(messages: unknown[]): unknown[] {
  return (messages as ChatMessageFake[]).map((m) => ({
    role: m.role === 1 ? 'user' : 'assistant',
    parts: m.content.map((p) => {
      if (p instanceof TextPart) return { text: p.value };
      if (p instanceof ToolCallPart) return { call: p.callId, name: p.name, input: p.input };
      if (p instanceof ToolResultPart) return { result: p.callId, content: p.content.map((c) => (c as TextPart).value) };
      throw new Error('unexpected part');
    }),
  }));
}

describe('LM API mapping (editor models)', () => {
  describe('toLmMessages', () => {
    it('maps a tool-calling conversation: system as a user message, calls with parsed input, results grouped right after the call', () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'You are Ralph.' },
        { role: 'user', content: 'Fix the bug.' },
        {
          role: 'assistant',
          content: 'Reading two files.',
          toolCalls: [
            { id: 'c1', name: 'read_file', arguments: '{"path":"a.ts"}' },
            { id: 'c2', name: 'read_file', arguments: '{"path":"b.ts"}' },
          ],
        },
        { role: 'tool', toolCallId: 'c1', content: 'A' },
        { role: 'tool', toolCallId: 'c2', content: 'B' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'c3', name: 'run_command', arguments: '' }] },
        { role: 'tool', toolCallId: 'c3', content: 'exit 0' },
        { role: 'assistant', content: 'Done.' },
        { role: 'user', content: 'Next.' },
      ];
      assert.deepEqual(plain(toLmMessages(messages, lm)), [
        { role: 'user', parts: [{ text: 'You are Ralph.' }] },
        { role: 'user', parts: [{ text: 'Fix the bug.' }] },
        {
          role: 'assistant',
          parts: [
            { text: 'Reading two files.' },
            { call: 'c1', name: 'read_file', input: { path: 'a.ts' } },
            { call: 'c2', name: 'read_file', input: { path: 'b.ts' } },
          ],
        },
        {
          role: 'user',
          parts: [
            { result: 'c1', content: ['A'] },
            { result: 'c2', content: ['B'] },
          ],
        },
        { role: 'assistant', parts: [{ call: 'c3', name: 'run_command', input: {} }] },
        { role: 'user', parts: [{ result: 'c3', content: ['exit 0'] }] },
        { role: 'assistant', parts: [{ text: 'Done.' }] },
        { role: 'user', parts: [{ text: 'Next.' }] },
      ]);
    });

    it('echoes malformed calls without losing what the model sent, and never sends an empty assistant message', () => {
      const out = plain(
        toLmMessages(
          [
            {
              role: 'assistant',
              content: '',
              toolCalls: [
                { id: 'x', name: '', arguments: '{"a":1}', malformed: 'the tool call has no name' },
                { id: 'y', name: 'write_file', arguments: '{not json' },
                { id: 'z', name: 'list', arguments: '[1,2]' },
              ],
            },
            { role: 'assistant', content: null },
          ],
          lm,
        ),
      );
      assert.deepEqual(out, [
        {
          role: 'assistant',
          parts: [
            { call: 'x', name: 'invalid_tool_call', input: { invalid_arguments: '{"a":1}' } },
            { call: 'y', name: 'write_file', input: { invalid_arguments: '{not json' } },
            { call: 'z', name: 'list', input: { value: [1, 2] } },
          ],
        },
        { role: 'assistant', parts: [{ text: '' }] },
      ]);
    });

    it('maps tools to LanguageModelChatTools with their JSON schema as inputSchema', () => {
      const parameters = { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] };
      assert.deepEqual(toLmTools([{ name: 'read_file', description: 'Read a file', parameters }]), [
        { name: 'read_file', description: 'Read a file', inputSchema: parameters },
      ]);
    });
  });

  describe('LmResponseAssembler', () => {
    it('streams text and tool starts, and round-trips tool calls as JSON arguments', () => {
      const deltas: StreamDelta[] = [];
      const assembler = new LmResponseAssembler('copilot/gpt-4.1', lm, (d) => deltas.push(d));
      assembler.add(new TextPart('Hel'));
      assembler.add(new TextPart('lo'));
      assembler.add(new ToolCallPart('call-1', 'read_file', { path: 'src/a.ts' }));
      assembler.add(new ToolCallPart('call-1', 'write_file', { path: 'b', content: 'x' }));
      const response = assembler.finish({ promptTokens: 10, completionTokens: 5, totalTokens: 15 });
      assert.deepEqual(deltas, [
        { kind: 'text', text: 'Hel' },
        { kind: 'text', text: 'lo' },
        { kind: 'tool_call', index: 0, name: 'read_file' },
        { kind: 'tool_call', index: 1, name: 'write_file' },
      ]);
      assert.equal(response.content, 'Hello');
      assert.equal(response.finishReason, 'tool_calls');
      assert.equal(response.model, 'copilot/gpt-4.1');
      // a repeated id is made unique so each result pairs with its call
      assert.deepEqual(response.toolCalls, [
        { id: 'call-1', name: 'read_file', arguments: '{"path":"src/a.ts"}' },
        { id: 'call-1_1', name: 'write_file', arguments: '{"path":"b","content":"x"}' },
      ]);
      assert.deepEqual(response.usage, { promptTokens: 10, completionTokens: 5, totalTokens: 15 });
      assert.equal(response.warnings, undefined);
      // the calls map back onto the LM API unchanged: a full round trip
      const back = plain(toLmMessages([{ role: 'assistant', content: response.content, toolCalls: response.toolCalls }], lm));
      assert.deepEqual(back, [
        {
          role: 'assistant',
          parts: [
            { text: 'Hello' },
            { call: 'call-1', name: 'read_file', input: { path: 'src/a.ts' } },
            { call: 'call-1_1', name: 'write_file', input: { path: 'b', content: 'x' } },
          ],
        },
      ]);
    });

    it('ignores unknown parts with a warning, marks a nameless or absurd call malformed, and ends with stop without calls', () => {
      const assembler = new LmResponseAssembler('m', lm);
      assembler.add(new DataPart(new Uint8Array([1])));
      assembler.add(null);
      assembler.add(new ToolCallPart('', '', {}));
      assembler.add(new ToolCallPart('k', 'x'.repeat(300), {}));
      const response = assembler.finish({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });
      assert.deepEqual(response.warnings, ['a reply part of kind DataPart was ignored', 'a reply part of kind object was ignored']);
      assert.equal(response.toolCalls[0].id, 'call_0');
      assert.equal(response.toolCalls[0].malformed, 'the tool call has no name');
      assert.match(response.toolCalls[1].malformed ?? '', /longer than 256/);
      assert.equal(response.toolCalls[1].name, '');

      const plainText = new LmResponseAssembler('m', lm);
      plainText.add(new TextPart('just text'));
      assert.equal(plainText.finish({ promptTokens: 0, completionTokens: 0, totalTokens: 0 }).finishReason, 'stop');
    });

    it('serializes a cyclic tool input as a malformed call instead of throwing', () => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const assembler = new LmResponseAssembler('m', lm);
      assembler.add(new ToolCallPart('c', 'read_file', cyclic));
      const [call] = assembler.finish({ promptTokens: 0, completionTokens: 0, totalTokens: 0 }).toolCalls;
      assert.equal(call.malformed, 'the tool-call input is not serializable to JSON');
    });
  });

  describe('classifyLmError', () => {
    const cases: [string, Error, string, boolean][] = [
      ['NoPermissions → consent', LanguageModelErrorFake.NoPermissions('User did not consent.'), 'consent', false],
      ['NotFound → not_found', LanguageModelErrorFake.NotFound('Language model x is unknown.'), 'not_found', false],
      ['Blocked → content_filter', LanguageModelErrorFake.Blocked('Response got filtered.'), 'content_filter', false],
      [
        'Blocked with a quota message → quota',
        LanguageModelErrorFake.Blocked('You have exceeded your premium request allowance.'),
        'quota',
        false,
      ],
      [
        'Blocked with a rate-limit message → rate_limit, retried',
        LanguageModelErrorFake.Blocked('Rate limit exceeded, please slow down.'),
        'rate_limit',
        true,
      ],
      [
        'Unknown with a context message → context_length',
        new LanguageModelErrorFake('prompt token count exceeds the limit: maximum context length is 8192', 'Unknown'),
        'context_length',
        false,
      ],
      ['Unknown network failure → outage, retried', new LanguageModelErrorFake('fetch failed: ECONNRESET', 'Unknown'), 'outage', true],
      ['Unknown 503 → outage, retried', new LanguageModelErrorFake('Server error: 503 Service Unavailable', 'Unknown'), 'outage', true],
      ['Unknown auth → auth', new LanguageModelErrorFake('Not signed in to GitHub', 'Unknown'), 'auth', false],
      ['plain Error from a provider → unknown', new Error('something odd'), 'unknown', false],
    ];
    for (const [title, error, fault, retryable] of cases) {
      it(title, () => {
        const failure = classifyLmError(error, lm);
        assert.ok(failure);
        assert.equal(failure.fault, fault);
        assert.equal(failure.retryable, retryable);
      });
    }

    it('reads the cause of an unspecified error', () => {
      const error = new LanguageModelErrorFake('Request failed', 'Unknown');
      (error as { cause?: unknown }).cause = new Error('429 Too Many Requests');
      assert.deepEqual(classifyLmError(error, lm), {
        fault: 'rate_limit',
        retryable: true,
        reason: 'Request failed: 429 Too Many Requests',
      });
    });

    it('leaves our own errors and programming errors alone', () => {
      assert.equal(classifyLmError(new StopRequestedError(), lm), undefined);
      assert.equal(classifyLmError(new TypeError('x is not a function'), lm), undefined);
      assert.equal(classifyLmError('a string', lm), undefined);
    });

    it('turns a failure into a ModelError with its fault and what to do', () => {
      const error = lmModelError('copilot/gpt-4.1', { fault: 'consent', retryable: false, reason: 'User did not consent.' }, 1);
      assert.ok(error instanceof ModelError);
      assert.equal(error.fault, 'consent');
      assert.equal(error.retryable, false);
      assert.match(
        error.message,
        /^editor model copilot\/gpt-4\.1 failed: User did not consent\. \(Ralph Loop was not allowed to use this model/,
      );
      const retried = lmModelError('m', { fault: 'outage', retryable: true, reason: 'fetch failed' }, 5);
      assert.match(retried.message, /failed after 5 attempts: fetch failed$/);
    });
  });
});
