/** Translation between the core's chat types and the OpenAI wire format (requests and streamed chunks). */

import type {
  ChatCompletionChunk,
  ChatCompletionFunctionTool,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import { ZERO_USAGE } from './types';
import type { ChatMessage, ChatResponse, StreamDelta, ToolCall, ToolSpec } from './types';

export function toWireMessages(messages: readonly ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content: message.content };
      case 'tool':
        return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
      case 'assistant':
        // OpenAI rejects an empty tool_calls array, so it is only sent when there are calls.
        return message.toolCalls?.length
          ? {
              role: 'assistant',
              content: message.content,
              tool_calls: message.toolCalls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : { role: 'assistant', content: message.content ?? '' };
    }
  });
}

export function toWireTools(tools: readonly ToolSpec[]): ChatCompletionFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }));
}

/** Raised when a stream ends cleanly but without a finish reason: the server cut it short. */
export class StreamTruncatedError extends Error {
  constructor() {
    super('stream ended before the model finished');
    this.name = 'StreamTruncatedError';
  }
}

/**
 * Accumulates the chunks of one streamed completion. Text arrives in pieces; tool calls arrive
 * keyed by `index`, their id and name usually in the first piece and the arguments in fragments.
 */
export class StreamAssembler {
  private model: string;
  private content = '';
  private readonly calls: { id: string; name: string; arguments: string }[] = [];
  private finishReason: string | undefined;
  private usage: ChatResponse['usage'] | undefined;

  constructor(
    requestedModel: string,
    private readonly onDelta?: (delta: StreamDelta) => void,
  ) {
    this.model = requestedModel;
  }

  add(chunk: ChatCompletionChunk): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) {
      const { prompt_tokens = 0, completion_tokens = 0 } = chunk.usage;
      this.usage = {
        promptTokens: prompt_tokens,
        completionTokens: completion_tokens,
        totalTokens: chunk.usage.total_tokens ?? prompt_tokens + completion_tokens,
      };
    }
    // Usage chunks (and Azure's content-filter preamble) carry no choices.
    const choice = chunk.choices?.find((c) => c.index === 0) ?? chunk.choices?.[0];
    if (!choice) return;
    const delta = choice.delta ?? {};
    if (typeof delta.content === 'string' && delta.content.length > 0) {
      this.content += delta.content;
      this.onDelta?.({ kind: 'text', text: delta.content });
    }
    for (const piece of delta.tool_calls ?? []) this.addToolCallPiece(piece);
    if (choice.finish_reason) this.finishReason = choice.finish_reason;
  }

  private addToolCallPiece(piece: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    const index = piece.index ?? this.calls.length;
    let call = this.calls[index];
    const isNew = call === undefined;
    if (!call) {
      call = { id: '', name: '', arguments: '' };
      this.calls[index] = call;
    }
    if (piece.id) call.id = piece.id;
    if (piece.function?.name) call.name = piece.function.name;
    if (piece.function?.arguments) call.arguments += piece.function.arguments;
    if (isNew) this.onDelta?.({ kind: 'tool_call', index, ...(call.name ? { name: call.name } : {}) });
  }

  /** The assembled response; throws StreamTruncatedError when no finish reason ever arrived. */
  finish(): ChatResponse {
    if (this.finishReason === undefined) throw new StreamTruncatedError();
    const toolCalls: ToolCall[] = [];
    this.calls.forEach((call, index) => {
      // Some servers omit ids; the conversation still needs one to pair the tool result with.
      if (call) toolCalls.push({ id: call.id || `call_${index}`, name: call.name, arguments: call.arguments });
    });
    return {
      model: this.model,
      content: this.content,
      toolCalls,
      finishReason: this.finishReason,
      usage: this.usage ?? { ...ZERO_USAGE },
    };
  }
}
