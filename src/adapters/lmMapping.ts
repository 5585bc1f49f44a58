/**
 * Translation between the core's chat types and VS Code's Language Model API (`vscode.lm`):
 * messages and tools out, streamed parts in, LanguageModelError → ModelError. Pure: the few
 * LM API classes it needs are passed in (`LmShapes`), so it runs in plain Node with a fake of
 * them in unit tests; nothing here imports 'vscode' at runtime.
 */
import type * as vscode from 'vscode';
import { ModelError, RalphError, type ModelFaultKind } from '../core/errors';
import { ReplyText, WIRE_LIMITS } from '../core/llm/openaiWire';
import type { ChatMessage, ChatResponse, StreamDelta, ToolCall, ToolSpec } from '../core/llm/types';

/** The LM API classes the mapping constructs or recognizes (the real `vscode` namespace fits). */
export interface LmShapes {
  LanguageModelChatMessage: Pick<typeof vscode.LanguageModelChatMessage, 'User' | 'Assistant'>;
  LanguageModelTextPart: new (value: string) => vscode.LanguageModelTextPart;
  LanguageModelToolCallPart: new (callId: string, name: string, input: object) => vscode.LanguageModelToolCallPart;
  LanguageModelToolResultPart: new (callId: string, content: unknown[]) => vscode.LanguageModelToolResultPart;
  LanguageModelError: abstract new (...args: never[]) => vscode.LanguageModelError;
}

/** The tool name a malformed call is echoed with: providers refuse an empty one. */
const INVALID_TOOL_NAME = 'invalid_tool_call';

/**
 * Our conversation as LM API messages. The API has only user and assistant roles: system
 * messages become user messages (in place, marked as instructions), a tool result becomes a
 * LanguageModelToolResultPart in a user message (consecutive results share one message, right
 * after the assistant message whose calls they answer), and an assistant's tool calls become
 * LanguageModelToolCallParts with their JSON arguments parsed back to an object.
 */
export function toLmMessages(messages: readonly ChatMessage[], lm: LmShapes): vscode.LanguageModelChatMessage[] {
  const out: vscode.LanguageModelChatMessage[] = [];
  let results: vscode.LanguageModelToolResultPart[] | undefined;
  const flushResults = () => {
    if (results) out.push(lm.LanguageModelChatMessage.User(results));
    results = undefined;
  };
  for (const message of messages) {
    if (message.role === 'tool') {
      (results ??= []).push(new lm.LanguageModelToolResultPart(message.toolCallId, [new lm.LanguageModelTextPart(message.content)]));
      continue;
    }
    flushResults();
    switch (message.role) {
      case 'system':
        out.push(lm.LanguageModelChatMessage.User([new lm.LanguageModelTextPart(message.content)]));
        break;
      case 'user':
        out.push(lm.LanguageModelChatMessage.User([new lm.LanguageModelTextPart(message.content)]));
        break;
      case 'assistant': {
        const parts: (vscode.LanguageModelTextPart | vscode.LanguageModelToolCallPart)[] = [];
        if (message.content) parts.push(new lm.LanguageModelTextPart(message.content));
        for (const call of message.toolCalls ?? []) {
          parts.push(new lm.LanguageModelToolCallPart(call.id, call.name || INVALID_TOOL_NAME, toolInput(call)));
        }
        if (parts.length === 0) parts.push(new lm.LanguageModelTextPart(''));
        out.push(lm.LanguageModelChatMessage.Assistant(parts));
        break;
      }
    }
  }
  flushResults();
  return out;
}

/** A call's arguments as the object the LM API wants; a malformed call keeps its raw text visible. */
function toolInput(call: ToolCall): object {
  if (call.malformed) return { invalid_arguments: call.arguments };
  try {
    const parsed: unknown = JSON.parse(call.arguments || '{}');
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? parsed : { value: parsed };
  } catch {
    return { invalid_arguments: call.arguments };
  }
}

export function toLmTools(tools: readonly ToolSpec[]): vscode.LanguageModelChatTool[] {
  return tools.map((tool) => ({ name: tool.name, description: tool.description, inputSchema: tool.parameters }));
}

/**
 * Accumulates the streamed parts of one LM API reply: text parts are reply text, tool-call
 * parts are tool calls (their input serialized back to the JSON text our tool registry parses).
 * Parts of other kinds (images, data, thinking) are ignored with a warning. The same limits as
 * the OpenAI wire apply, so an editor model cannot flood memory either.
 */
export class LmResponseAssembler {
  private readonly text: ReplyText;
  private readonly calls: ToolCall[] = [];
  private readonly ids = new Set<string>();
  private dropped = 0;
  private readonly warnings = new Set<string>();

  constructor(
    private readonly model: string,
    private readonly lm: LmShapes,
    private readonly onDelta?: (delta: StreamDelta) => void,
  ) {
    this.text = new ReplyText((message) => this.warn(message), onDelta);
  }

  add(part: unknown): void {
    if (part instanceof this.lm.LanguageModelTextPart) return this.addText(part.value);
    if (part instanceof this.lm.LanguageModelToolCallPart) return this.addCall(part);
    const kind = (part as { constructor?: { name?: string } } | null)?.constructor?.name ?? typeof part;
    this.warn(`a reply part of kind ${kind} was ignored`);
  }

  private addText(value: unknown): void {
    if (typeof value === 'string') this.text.add(value);
  }

  private addCall(part: vscode.LanguageModelToolCallPart): void {
    if (this.calls.length >= WIRE_LIMITS.maxToolCalls) {
      this.dropped++;
      return;
    }
    const index = this.calls.length;
    let id = typeof part.callId === 'string' && part.callId && part.callId.length <= 200 ? part.callId : `call_${index}`;
    if (this.ids.has(id)) id = `${id}_${index}`;
    this.ids.add(id);
    const name = typeof part.name === 'string' ? part.name : '';
    let args = '';
    let malformed: string | undefined;
    try {
      args = JSON.stringify(part.input ?? {});
    } catch {
      malformed = 'the tool-call input is not serializable to JSON';
    }
    if (!malformed && args.length > WIRE_LIMITS.maxArgumentChars) {
      malformed = `the arguments are longer than ${WIRE_LIMITS.maxArgumentChars} characters`;
      args = '';
    }
    if (!malformed && !name) malformed = 'the tool call has no name';
    if (!malformed && name.length > WIRE_LIMITS.maxToolNameChars)
      malformed = `the tool name is longer than ${WIRE_LIMITS.maxToolNameChars} characters`;
    this.calls.push({
      id,
      name: malformed && name.length > WIRE_LIMITS.maxToolNameChars ? '' : name,
      arguments: args,
      ...(malformed ? { malformed } : {}),
    });
    this.onDelta?.({ kind: 'tool_call', index, ...(name && name.length <= WIRE_LIMITS.maxToolNameChars ? { name } : {}) });
  }

  private warn(message: string): void {
    if (this.warnings.size < 20) this.warnings.add(message);
  }

  /** The reply; usage is filled in by the client (counted with the model's tokenizer). */
  finish(usage: ChatResponse['usage']): ChatResponse {
    if (this.dropped > 0) this.warn(`${this.dropped} tool calls beyond the limit of ${WIRE_LIMITS.maxToolCalls} per reply were dropped`);
    return {
      model: this.model,
      content: this.text.text,
      toolCalls: [...this.calls],
      finishReason: this.calls.length > 0 ? 'tool_calls' : 'stop',
      usage,
      ...(this.warnings.size ? { warnings: [...this.warnings] } : {}),
    };
  }

  /** What the reply said so far, for counting its tokens. */
  get textForCounting(): string {
    return this.text.text + this.calls.map((c) => `${c.name}${c.arguments}`).join('');
  }
}

/** What one failed LM API request was, and whether another attempt may help. */
export interface LmFailure {
  fault: ModelFaultKind;
  retryable: boolean;
  /** The provider's words, kept short. */
  reason: string;
}

const RATE_LIMIT = /rate.?limit|too many requests|\b429\b|slow down|throttl/i;
const QUOTA = /quota|billing|premium request|usage limit|limit reached|exceeded your|insufficient.?(credit|funds)|allowance/i;
const CONTEXT = /context (length|window)|too (long|large|many tokens)|maximum (context|input|prompt)|token limit|prompt.{0,20}exceeds/i;
const TRANSIENT =
  /timed? ?out|timeout|ECONNRESET|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|socket hang up|network|fetch failed|\b50[0-4]\b|unavailable|overloaded|temporar/i;
const AUTH = /unauthori[sz]ed|\b401\b|\b403\b|not signed in|sign in|authenticat|forbidden/i;

/**
 * Sorts an LM API failure into a fault kind: the LanguageModelError codes first
 * (NoPermissions → consent, NotFound → not_found, Blocked → quota / rate_limit when the message
 * says so, content_filter otherwise), then the wording of the error and its cause. Returns
 * undefined for errors that are not the model's (a bug in our own code, e.g. in onDelta).
 */
export function classifyLmError(error: unknown, lm: LmShapes): LmFailure | undefined {
  const isLmError = error instanceof lm.LanguageModelError || (error instanceof Error && error.name === 'LanguageModelError');
  if (!isLmError && !looksLikeProviderError(error)) return undefined;
  const code = isLmError ? String((error as { code?: unknown }).code ?? 'Unknown') : 'Unknown';
  const reason = describe(error);
  switch (code) {
    case 'NoPermissions':
      return { fault: 'consent', retryable: false, reason };
    case 'NotFound':
      return { fault: 'not_found', retryable: false, reason };
    case 'Blocked':
      if (RATE_LIMIT.test(reason)) return { fault: 'rate_limit', retryable: true, reason };
      if (QUOTA.test(reason)) return { fault: 'quota', retryable: false, reason };
      return { fault: 'content_filter', retryable: false, reason };
    default:
      if (RATE_LIMIT.test(reason)) return { fault: 'rate_limit', retryable: true, reason };
      if (QUOTA.test(reason)) return { fault: 'quota', retryable: false, reason };
      if (CONTEXT.test(reason)) return { fault: 'context_length', retryable: false, reason };
      if (AUTH.test(reason)) return { fault: 'auth', retryable: false, reason };
      if (TRANSIENT.test(reason)) return { fault: 'outage', retryable: true, reason };
      return { fault: 'unknown', retryable: false, reason };
  }
}

/** Errors a provider extension throws are plain Errors too (not ours: those are RalphErrors or TypeErrors). */
function looksLikeProviderError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof RalphError) return false;
  if (error instanceof TypeError || error instanceof RangeError || error instanceof ReferenceError || error instanceof SyntaxError)
    return false;
  return true;
}

/** The error's message with its cause's, kept short. */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    const text = e instanceof Error ? e.message : typeof e === 'string' ? e : '';
    if (text && !parts.includes(text)) parts.push(text);
  }
  const text = parts.join(': ') || 'the editor reported an unspecified language model error';
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

/** What the person can do about each fault of an editor model, appended to the message. */
const HINTS: Partial<Record<ModelFaultKind, string>> = {
  consent:
    'Ralph Loop was not allowed to use this model: allow it when VS Code asks (or in the Accounts menu → Manage Language Model Access), then run the task again',
  not_found: 'the model is not available in this editor (any more): run "Ralph: Select Model" to choose another',
  quota: 'the model\'s quota is used up: wait for it to renew, or choose another model with "Ralph: Select Model"',
  rate_limit: 'the model is rate-limited: wait a little and run the task again',
  content_filter: 'the request or the reply was blocked by the model provider',
  auth: "sign in to the model's provider in VS Code (Accounts menu)",
  context_length: 'the conversation is larger than the model accepts',
};

/** The ModelError a failed editor-model request ends with: what failed, why, and what to do. */
export function lmModelError(model: string, failure: LmFailure, attempts: number): ModelError {
  const tries = failure.retryable ? ` after ${attempts} attempt${attempts === 1 ? '' : 's'}` : '';
  const hint = HINTS[failure.fault];
  return new ModelError(
    `editor model ${model} failed${tries}: ${failure.reason}${hint ? ` (${hint})` : ''}`,
    undefined,
    failure.retryable,
    failure.fault,
  );
}
