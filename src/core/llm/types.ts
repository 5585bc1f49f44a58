/** The model port the core talks to; the OpenAI-compatible adapter implements it. */

import type { ModelFaultKind } from '../errors';

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON text the model produced; parsed and validated by the tool registry. */
  arguments: string;
  /** Set by the wire boundary when the call arrived malformed; the call is answered with this, never run. */
  malformed?: string;
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls?: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string };

/** A function tool offered to the model; `parameters` is a JSON schema object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Of `promptTokens`, how many the provider served from its prompt cache (when it says). */
  cachedPromptTokens?: number;
  /** The cost the provider itself reported for the call in USD (e.g. OpenRouter's `usage.cost`). */
  providerCostUsd?: number;
}

export type StreamDelta = { kind: 'text'; text: string } | { kind: 'tool_call'; index: number; name?: string };

export interface ChatRequest {
  model: string;
  messages: readonly ChatMessage[];
  tools?: readonly ToolSpec[];
  temperature?: number;
  signal?: AbortSignal;
  /** Called with streamed text and tool-call starts as they arrive. */
  onDelta?: (delta: StreamDelta) => void;
  /** Caps the reply's tokens (sent as `max_completion_tokens`); the wind-down turn uses it. */
  maxTokens?: number;
  /**
   * The one bounded turn of a wind-down (budget, timeout or Stop reached mid-iteration): allowed
   * past a reached budget cap so the agent can write its progress notes; still metered.
   */
  windDown?: boolean;
  /** Who makes the call, for the cost receipt: `orchestrator`, a sub-agent (`scout`, `devo`, `caio`), `council`, `compaction`. */
  purpose?: string;
  /** Called before each retry of this request (besides the client's own `onRetry`): the receipt counts failed attempts. */
  onRetry?: (notice: RetryNotice) => void;
}

export interface ChatResponse {
  model: string;
  content: string;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: TokenUsage;
  /** What the wire boundary repaired or ignored in this reply (bad usage, odd chunks), for warning events. */
  warnings?: string[];
  /** The configured model that served the call when it was not the requested one (an `llm.fallback` entry); priced as that model. */
  servedBy?: string;
}

/** A retry the client is about to make, for events and logs. */
export interface RetryNotice {
  attempt: number;
  maxRetries: number;
  delayMs: number;
  reason: string;
  /** The fault retried: `rate_limit` (after the server's delay) or `outage`. */
  fault?: ModelFaultKind;
}

/**
 * An optional capability of a model port: measuring a conversation with the model's own
 * tokenizer, and telling the model's real input limit. The editor's models (VS Code's
 * Language Model API) have it; compaction uses it when present instead of its estimate.
 */
export interface TokenCounter {
  /** Tokens `messages` and `tools` take when sent to `model`. */
  countTokens(model: string, messages: readonly ChatMessage[], tools: readonly ToolSpec[], signal?: AbortSignal): Promise<number>;
  /** The most tokens `model` accepts in one request; undefined when the model does not say. */
  maxInputTokens(model: string): Promise<number | undefined>;
}

export interface ModelClient {
  chat(request: ChatRequest): Promise<ChatResponse>;
  /** Present when the provider counts tokens itself (see TokenCounter). */
  readonly tokens?: TokenCounter;
}

export const ZERO_USAGE: TokenUsage = Object.freeze({ promptTokens: 0, completionTokens: 0, totalTokens: 0 });

export function addUsage(a: TokenUsage, b: TokenUsage): TokenUsage {
  const sum: TokenUsage = {
    promptTokens: a.promptTokens + b.promptTokens,
    completionTokens: a.completionTokens + b.completionTokens,
    totalTokens: a.totalTokens + b.totalTokens,
  };
  if (a.cachedPromptTokens !== undefined || b.cachedPromptTokens !== undefined)
    sum.cachedPromptTokens = (a.cachedPromptTokens ?? 0) + (b.cachedPromptTokens ?? 0);
  // a provider's cost is not summed here: a sum over calls of which only some reported one would read as the whole; the receipt keeps it per call
  return sum;
}
