/** Translation between the core's chat types and the OpenAI wire format (requests and streamed chunks). */

import type { ChatCompletionChunk, ChatCompletionFunctionTool, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { ZERO_USAGE } from './types';
import type { ChatMessage, ChatResponse, StreamDelta, TokenUsage, ToolCall, ToolSpec } from './types';

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
                // A malformed call is echoed with a placeholder name: the provider would refuse an empty one.
                function: { name: call.name || 'invalid_tool_call', arguments: call.arguments },
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

/** Limits on what one streamed reply may carry (docs/models.md, "What a model may send"). */
export const WIRE_LIMITS = {
  /** Tool calls kept from one reply; further ones are answered with an error, not run. */
  maxToolCalls: 64,
  /** Highest tool-call `index` accepted; a larger one is a malformed call. */
  maxToolCallIndex: 1023,
  /** A tool name longer than this is malformed (real names are short identifiers). */
  maxToolNameChars: 256,
  /** Arguments of one tool call; beyond this the call is malformed and its text dropped. */
  maxArgumentChars: 4 * 1024 * 1024,
  /** Text of one reply kept in memory. */
  maxContentChars: 4 * 1024 * 1024,
  /** A token count beyond this is not believed (no real request comes near). */
  maxTokenCount: 1e9,
  /** A provider-reported cost (USD) of one call beyond this is not believed. */
  maxCallCostUsd: 10_000,
} as const;

interface PendingCall {
  id: string;
  name: string;
  arguments: string;
  /** Set when a piece of this call was malformed; the call is answered with this error, never run. */
  malformed?: string;
}

/**
 * A reply's text as it streams in, cut at `WIRE_LIMITS.maxContentChars` (said once), each piece
 * kept passed on as a text delta. Shared by the provider adapters' assemblers.
 */
export class ReplyText {
  text = '';
  private cut = false;

  constructor(
    private readonly warn: (message: string) => void,
    private readonly onDelta?: (delta: StreamDelta) => void,
  ) {}

  add(value: string): void {
    if (value.length === 0 || this.cut) return;
    const room = WIRE_LIMITS.maxContentChars - this.text.length;
    const text = value.length > room ? value.slice(0, room) : value;
    if (text.length < value.length) {
      this.cut = true;
      this.warn(`reply text cut at ${WIRE_LIMITS.maxContentChars} characters`);
    }
    this.text += text;
    if (text) this.onDelta?.({ kind: 'text', text });
  }
}

/**
 * Accumulates the chunks of one streamed completion. Text arrives in pieces; tool calls arrive
 * keyed by `index`, their id and name usually in the first piece and the arguments in fragments.
 * Everything the server sends is untrusted: wrong types, absurd indices and counts become a
 * malformed call or unknown usage with a warning, never an exception or an unbounded loop.
 */
export class StreamAssembler {
  private model: string;
  private readonly text: ReplyText;
  private readonly calls = new Map<number, PendingCall>();
  private droppedCalls = 0;
  private finishReason: string | undefined;
  private usage: ChatResponse['usage'] | undefined;
  private readonly warnings = new Set<string>();

  constructor(
    requestedModel: string,
    private readonly onDelta?: (delta: StreamDelta) => void,
  ) {
    this.model = requestedModel;
    this.text = new ReplyText((message) => this.warn(message), onDelta);
  }

  add(chunk: ChatCompletionChunk): void {
    const raw = chunk as unknown as Record<string, unknown>;
    if (raw === null || typeof raw !== 'object') return this.warn('a stream chunk was not a JSON object; ignored');
    if (typeof raw.model === 'string' && raw.model.length > 0 && raw.model.length <= 200) this.model = raw.model;
    if (raw.usage !== undefined && raw.usage !== null) this.usage = this.readUsage(raw.usage);
    // Usage chunks (and Azure's content-filter preamble) carry no choices.
    const choices = Array.isArray(raw.choices) ? (raw.choices as unknown[]).filter(isObject) : [];
    const choice = choices.find((c) => c.index === 0) ?? choices[0];
    if (!choice) return;
    const delta = isObject(choice.delta) ? choice.delta : {};
    if (delta.content !== undefined && delta.content !== null) this.addText(delta.content);
    if (Array.isArray(delta.tool_calls)) {
      for (const piece of delta.tool_calls as unknown[]) this.addToolCallPiece(piece);
    } else if (delta.tool_calls !== undefined && delta.tool_calls !== null) {
      this.warn('tool_calls in a stream chunk was not an array; ignored');
    }
    if (typeof choice.finish_reason === 'string' && choice.finish_reason) this.finishReason = choice.finish_reason.slice(0, 100);
  }

  private addText(value: unknown): void {
    if (typeof value !== 'string') return this.warn(`reply text of type ${typeName(value)} ignored`);
    this.text.add(value);
  }

  private addToolCallPiece(piece: unknown): void {
    if (!isObject(piece)) return this.warn('a tool-call piece was not an object; ignored');
    const index = this.indexOf(piece.index);
    let call = this.calls.get(index);
    const isNew = call === undefined;
    if (!call) {
      if (this.calls.size >= WIRE_LIMITS.maxToolCalls) {
        this.droppedCalls++;
        return;
      }
      call = { id: '', name: '', arguments: '' };
      this.calls.set(index, call);
      if (typeof piece.index === 'number' && index !== piece.index)
        call.malformed = `tool-call index ${String(piece.index)} is not a whole number from 0 to ${WIRE_LIMITS.maxToolCallIndex}`;
    }
    if (piece.id !== undefined && piece.id !== null) {
      if (typeof piece.id === 'string' && piece.id.length <= 200) call.id = piece.id;
      else call.malformed ??= `the tool-call id is ${typeName(piece.id)}, not a short string`;
    }
    const fn = piece.function;
    if (fn !== undefined && fn !== null) {
      if (!isObject(fn)) call.malformed ??= `the tool call's "function" is ${typeName(fn)}, not an object`;
      else {
        this.addName(call, fn.name);
        this.addArguments(call, fn.arguments);
      }
    }
    if (isNew) this.onDelta?.({ kind: 'tool_call', index, ...(call.name ? { name: call.name } : {}) });
  }

  /** A usable map key: the given index when sane, else the next free slot past the bound. */
  private indexOf(value: unknown): number {
    if (value === undefined || value === null) return this.nextFree(this.calls.size);
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= WIRE_LIMITS.maxToolCallIndex) return value;
    this.warn(`tool-call index ${describe(value)} out of range`);
    return this.nextFree(WIRE_LIMITS.maxToolCallIndex + 1);
  }

  private nextFree(from: number): number {
    let n = from;
    while (this.calls.has(n)) n++; // at most maxToolCalls steps
    return n;
  }

  private addName(call: PendingCall, name: unknown): void {
    if (name === undefined || name === null || name === '') return;
    if (typeof name !== 'string') {
      call.malformed ??= `the tool name is ${typeName(name)}, not a string`;
      return;
    }
    if (name.length > WIRE_LIMITS.maxToolNameChars) {
      call.malformed ??= `the tool name is longer than ${WIRE_LIMITS.maxToolNameChars} characters`;
      return;
    }
    call.name = name;
  }

  private addArguments(call: PendingCall, args: unknown): void {
    if (args === undefined || args === null || args === '') return;
    if (typeof args !== 'string') {
      call.malformed ??= `the arguments are ${typeName(args)}, not a JSON string`;
      return;
    }
    if (call.arguments.length + args.length > WIRE_LIMITS.maxArgumentChars) {
      call.malformed ??= `the arguments are longer than ${WIRE_LIMITS.maxArgumentChars} characters`;
      call.arguments = '';
      return;
    }
    if (!call.malformed) call.arguments += args;
  }

  private readUsage(value: unknown): ChatResponse['usage'] | undefined {
    if (!isObject(value)) {
      this.warn(`token usage of type ${typeName(value)} ignored (usage unknown)`);
      return undefined;
    }
    const prompt = this.count(value.prompt_tokens, 'prompt_tokens');
    const completion = this.count(value.completion_tokens, 'completion_tokens');
    const total = this.count(value.total_tokens, 'total_tokens');
    if (prompt === null || completion === null || total === null) return undefined;
    const promptTokens = prompt ?? 0;
    const completionTokens = completion ?? 0;
    const usage: TokenUsage = { promptTokens, completionTokens, totalTokens: total ?? promptTokens + completionTokens };
    const cached = this.cachedTokens(value.prompt_tokens_details, promptTokens);
    if (cached !== undefined) usage.cachedPromptTokens = cached;
    const cost = this.providerCost(value.cost);
    if (cost !== undefined) usage.providerCostUsd = cost;
    return usage;
  }

  /** OpenAI's `usage.prompt_tokens_details.cached_tokens`: a count no larger than the prompt, else ignored. */
  private cachedTokens(details: unknown, promptTokens: number): number | undefined {
    if (details === undefined || details === null) return undefined;
    if (!isObject(details)) {
      this.warn(`token usage prompt_tokens_details of type ${typeName(details)} ignored (cached tokens unknown)`);
      return undefined;
    }
    const cached = this.count(details.cached_tokens, 'prompt_tokens_details.cached_tokens', 'cached tokens unknown');
    if (cached === null || cached === undefined) return undefined;
    if (cached > promptTokens) {
      this.warn(`token usage reports ${cached} cached of ${promptTokens} prompt tokens; cached tokens unknown`);
      return undefined;
    }
    return cached;
  }

  /** OpenRouter's `usage.cost` (USD, as the provider billed it): a finite, non-negative, believable number. */
  private providerCost(value: unknown): number | undefined {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isFinite(value) && value >= 0 && value <= WIRE_LIMITS.maxCallCostUsd) return value;
    this.warn(`token usage cost = ${describe(value)} is not a believable USD amount; the provider's cost of this reply is unknown`);
    return undefined;
  }

  /** A sane token count, undefined when absent, null (with a warning) when not believable. */
  private count(value: unknown, field: string, consequence = 'usage of this reply treated as unknown'): number | undefined | null {
    if (value === undefined || value === null) return undefined;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= WIRE_LIMITS.maxTokenCount) return value;
    this.warn(`token usage ${field} = ${describe(value)} is not a believable count; ${consequence}`);
    return null;
  }

  private warn(message: string): void {
    if (this.warnings.size < 20) this.warnings.add(message);
  }

  /** The assembled response; throws StreamTruncatedError when no finish reason ever arrived. */
  finish(): ChatResponse {
    if (this.finishReason === undefined) throw new StreamTruncatedError();
    const toolCalls: ToolCall[] = [];
    const seenIds = new Set<string>();
    [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .forEach(([index, call]) => {
        // Some servers omit ids (or repeat them); the conversation needs a unique one to pair the result with.
        let id = call.id || `call_${index}`;
        if (seenIds.has(id)) id = `${id}_${index}`;
        seenIds.add(id);
        let malformed = call.malformed;
        if (!malformed && !call.name) malformed = 'the tool call has no name';
        toolCalls.push({ id, name: call.name, arguments: call.arguments, ...(malformed ? { malformed } : {}) });
      });
    if (this.droppedCalls > 0)
      this.warn(`${this.droppedCalls} tool calls beyond the limit of ${WIRE_LIMITS.maxToolCalls} per reply were dropped`);
    return {
      model: this.model,
      content: this.text.text,
      toolCalls,
      finishReason: this.finishReason,
      usage: this.usage ?? { ...ZERO_USAGE },
      ...(this.warnings.size ? { warnings: [...this.warnings] } : {}),
    };
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** A short, safe rendering of a hostile value for a warning. */
function describe(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  return typeName(value);
}
