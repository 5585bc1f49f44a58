import { errorMessage } from '../errors';
import type { ChatMessage, ModelClient, TokenUsage, ToolSpec } from '../llm/types';

/** The first line of the message re-inserted after every compaction (DESIGN §4). */
export const PINNED_HEADER = '[ORIGINAL REQUEST — pinned]';
/** The first line of the message that replaces the summarized turns. */
export const SUMMARY_HEADER = '[SUMMARY OF EARLIER CONVERSATION — compacted]';

/** The share of the compaction threshold the kept recent turns may take (at least the last turn is kept). */
const KEEP_SHARE = 0.4;
/** Per-message cap in the transcript handed to the summarizer. */
const TRANSCRIPT_MESSAGE_CHARS = 4000;

export const SUMMARIZER_PROMPT = `You compress the earlier part of a coding agent's working conversation so that the agent can go on with less context.
Write a faithful, dense summary in plain text:
- the completion criteria, constraints and feedback (failed checks, earlier attempts) the conversation started with;
- what was done: files read, created or changed (exact paths), commands run and their results (exit codes, failing tests, error messages verbatim);
- what was learned about the code, and decisions taken with their reasons;
- what is still open, what failed, and the next steps that were planned.
Keep exact paths, identifiers, numbers and error messages. Invent nothing. Do not restate the original request: it is re-attached verbatim after your summary.`;

export interface CompactionSettings {
  contextWindow: number;
  /** Compaction fires when the next request would pass `compactAt × contextWindow` tokens. */
  compactAt: number;
}

export interface CompactorDeps extends CompactionSettings {
  model: ModelClient;
  /** The summary is written by the conversation's own model. */
  modelName: string;
  temperature?: number;
  /** Re-inserted verbatim after the summary. */
  pinned: string;
  signal: AbortSignal;
}

export interface CompactionOutcome {
  tokensBefore: number;
  tokensAfter: number;
  /** The summary call: its model as reported, finish reason and tokens. */
  model: string;
  finishReason: string;
  usage: TokenUsage;
}

/** ~4 characters a token: close enough to decide when to compact, and needs no tokenizer. */
export function estimateTokens(messages: readonly ChatMessage[]): number {
  let chars = 0;
  for (const message of messages) {
    chars += (message.content ?? '').length;
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) chars += call.name.length + call.arguments.length;
  }
  return Math.ceil(chars / 4);
}

function estimateToolTokens(tools: readonly ToolSpec[]): number {
  return tools.length === 0 ? 0 : Math.ceil(JSON.stringify(tools).length / 4);
}

/**
 * Keeps one conversation under `compactAt × contextWindow`. When the model port can count
 * tokens itself (ModelClient.tokens, the editor's models), the conversation is measured with it
 * and the model's own input limit replaces `contextWindow`. Otherwise token use comes from the API:
 * the last response's prompt + completion tokens cover every message up to and including the
 * assistant message it produced; messages appended since (tool results) are estimated. With no
 * usage reported (some servers), the whole conversation is estimated.
 *
 * When the next request would pass the threshold, the older turns are summarized by one model
 * call; the system message and the most recent turns stay as they are (an assistant message is
 * never separated from its tool results), and right after the summary the exact original
 * request is pinned: `[ORIGINAL REQUEST — pinned]\n<request>`.
 */
export class Compactor {
  private knownTokens = 0;
  /** How many leading messages `knownTokens` covers; 0 when unknown. */
  private knownCount = 0;
  private gaveUp = false;

  constructor(private readonly deps: CompactorDeps) {
    this.contextWindow = deps.contextWindow;
  }

  get threshold(): number {
    return this.deps.compactAt * this.contextWindow;
  }

  /** The configured window, or the model's own input limit once the model told it. */
  private contextWindow: number;
  private limitKnown = false;

  /**
   * Tokens the next request would carry, counted by the model's own tokenizer when the
   * provider can (the editor's models); the estimate otherwise, or when counting fails.
   */
  private async measure(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): Promise<number> {
    const counter = this.deps.model.tokens;
    if (!counter) return this.estimate(messages, tools);
    try {
      if (!this.limitKnown) {
        this.limitKnown = true;
        const limit = await counter.maxInputTokens(this.deps.modelName);
        if (limit !== undefined && limit > 0) this.contextWindow = limit;
      }
      return await counter.countTokens(this.deps.modelName, messages, tools, this.deps.signal);
    } catch (error) {
      if (this.deps.signal.aborted) throw error;
      return this.estimate(messages, tools);
    }
  }

  /** Records the usage of the response whose assistant message is now the last of `messageCount`. */
  noteResponse(usage: TokenUsage, messageCount: number): void {
    const tokens = usage.promptTokens + usage.completionTokens;
    this.knownTokens = tokens > 0 ? tokens : 0;
    this.knownCount = tokens > 0 ? messageCount : 0;
  }

  /** Tokens the next request would carry. */
  estimate(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): number {
    if (this.knownCount === 0 || this.knownCount > messages.length) return estimateTokens(messages) + estimateToolTokens(tools);
    return this.knownTokens + estimateTokens(messages.slice(this.knownCount));
  }

  /**
   * Compacts `messages` in place when the next request would pass the threshold (or always,
   * with `force`: the provider refused it as too long). Returns what
   * happened, or undefined when nothing was (or could be) compacted. Throws only when the
   * summary call fails, after which this compactor stops trying (the caller reports it).
   */
  async beforeRequest(
    messages: ChatMessage[],
    tools: readonly ToolSpec[],
    options: { force?: boolean } = {},
  ): Promise<CompactionOutcome | undefined> {
    if (this.gaveUp) return undefined;
    const tokensBefore = await this.measure(messages, tools);
    // forced: the provider said the request is over the model's context, whatever our measure
    if (tokensBefore <= this.threshold && !options.force) return undefined;

    // The cut is made on the 4-characters-a-token estimate: scale the share it may keep to the
    // measure that decided (a model's own tokenizer may count far more tokens than the estimate).
    const estimated = estimateTokens(messages) + estimateToolTokens(tools);
    const scale = this.deps.model.tokens && tokensBefore > estimated ? estimated / tokensBefore : 1;
    const split = splitForCompaction(messages, this.threshold * KEEP_SHARE * scale);
    if (!split) return undefined;
    let response;
    try {
      response = await this.deps.model.chat({
        model: this.deps.modelName,
        temperature: this.deps.temperature,
        signal: this.deps.signal,
        purpose: 'compaction',
        messages: [
          { role: 'system', content: SUMMARIZER_PROMPT },
          { role: 'user', content: transcript(split.older, Math.max(2000, this.contextWindow * 2)) },
        ],
      });
    } catch (error) {
      this.gaveUp = true;
      throw new Error(`compaction failed, the conversation goes on uncompacted: ${errorMessage(error)}`, { cause: error });
    }
    const compacted: ChatMessage[] = [
      ...split.head,
      { role: 'user', content: `${SUMMARY_HEADER}\n${response.content.trim() || '(the summarizer returned nothing)'}` },
      { role: 'user', content: `${PINNED_HEADER}\n${this.deps.pinned}` },
      ...split.recent,
    ];
    messages.splice(0, messages.length, ...compacted);
    this.knownTokens = 0;
    this.knownCount = 0;
    return {
      tokensBefore,
      tokensAfter: await this.measure(messages, tools),
      model: response.model,
      finishReason: response.finishReason,
      usage: response.usage,
    };
  }
}

interface Split {
  /** The system message(s) at the start, kept. */
  head: ChatMessage[];
  /** Summarized (earlier summaries included; earlier pins dropped, the pin is re-inserted). */
  older: ChatMessage[];
  /** The most recent turns, kept intact. */
  recent: ChatMessage[];
}

/**
 * Cuts the conversation at a turn boundary: a turn is a user message, or an assistant message
 * with the tool results that answer it. Recent turns are kept while they fit in `keepTokens`
 * (the last one always, the oldest never). Undefined when there is nothing new to summarize.
 */
export function splitForCompaction(messages: readonly ChatMessage[], keepTokens: number): Split | undefined {
  let start = 0;
  while (start < messages.length && messages[start].role === 'system') start++;
  const turns: ChatMessage[][] = [];
  for (const message of messages.slice(start)) {
    if (message.role === 'tool' && turns.length > 0) turns[turns.length - 1].push(message);
    else turns.push([message]);
  }
  let kept = 1;
  let tokens = estimateTokens(turns[turns.length - 1] ?? []);
  // the oldest turn is always folded in: being over the threshold must shrink something
  while (kept < turns.length - 1) {
    const next = estimateTokens(turns[turns.length - 1 - kept]);
    if (tokens + next > keepTokens) break;
    tokens += next;
    kept++;
  }
  const older = turns
    .slice(0, turns.length - kept)
    .flat()
    .filter((m) => !isPinned(m));
  if (!older.some((m) => !isSummary(m))) return undefined;
  return {
    head: messages.slice(0, start),
    older,
    recent: turns
      .slice(turns.length - kept)
      .flat()
      .filter((m) => !isPinned(m)),
  };
}

function isPinned(message: ChatMessage): boolean {
  return message.role === 'user' && message.content.startsWith(PINNED_HEADER);
}

function isSummary(message: ChatMessage): boolean {
  return message.role === 'user' && message.content.startsWith(SUMMARY_HEADER);
}

/** The turns to summarize as plain text, each message and the whole capped (with markers). */
function transcript(messages: readonly ChatMessage[], maxChars: number): string {
  const parts = messages.map((m) => {
    if (m.role === 'tool') return `### tool result (${m.toolCallId})\n${cap(m.content, TRANSCRIPT_MESSAGE_CHARS)}`;
    if (m.role === 'assistant') {
      const calls = (m.toolCalls ?? []).map((c) => `→ ${c.name}(${cap(c.arguments, 500)})`);
      return [`### assistant`, cap(m.content ?? '', TRANSCRIPT_MESSAGE_CHARS), ...calls].filter(Boolean).join('\n');
    }
    return `### ${m.role}\n${cap(m.content, TRANSCRIPT_MESSAGE_CHARS)}`;
  });
  const text = `Summarize this conversation:\n\n${parts.join('\n\n')}`;
  if (text.length <= maxChars) return text;
  const half = Math.floor(maxChars / 2);
  return `${text.slice(0, half)}\n… [${text.length - 2 * half} characters of the middle left out] …\n${text.slice(-half)}`;
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}
