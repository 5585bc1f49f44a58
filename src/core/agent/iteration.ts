import { errorMessage, ModelError, type ModelFaultKind, StopRequestedError } from '../errors';
import { faultLabel } from '../llm/faults';
import type { RalphEventBody } from '../events';
import { addUsage, type ChatMessage, type ChatResponse, type ModelClient, type TokenUsage, type ToolCall, ZERO_USAGE } from '../llm/types';
import { parseSignals } from '../signals/parser';
import type { Signal } from '../signals/types';
import { type CompactionSettings, Compactor } from './compaction';
import type { ToolRegistry } from './toolRegistry';
import type { ToolContext, ToolResult } from './tools/types';

export interface IterationDeps {
  model: ModelClient;
  modelName: string;
  temperature?: number;
  registry: ToolRegistry;
  toolContext: ToolContext;
  maxSteps: number;
  taskId: string;
  iteration: number;
  signal: AbortSignal;
  emit(body: RalphEventBody): void;
  /** The conversation's exact original request: pinned after a compaction, handed to delegations. Default: the first user message. */
  request?: string;
  /** Compact the conversation when the next request would pass `compactAt × contextWindow`. */
  compaction?: CompactionSettings;
  /** A sub-agent's name: its events carry it, and signals in its text are not the task's. */
  agent?: string;
  /** Every tool execution, as it happens (a sub-agent's evidence log). */
  onToolResult?(call: ToolCall, outcome: ToolResult): void;
  /**
   * Pause/Resume: waited on before every model call; `signal` aborts on Pause, which cancels a
   * model request in flight (asked again after Resume).
   */
  pause?: { wait(signal?: AbortSignal): Promise<void>; readonly signal?: AbortSignal };
  /**
   * Called with the conversation when it is cut short: the run stopped (Stop, task timeout) or
   * a model call failed (`error`, e.g. a reached budget). The loop's wind-down turn lives there.
   */
  onInterrupted?(messages: readonly ChatMessage[], error?: unknown): Promise<void>;
}

export interface IterationRunResult {
  signals: Signal[];
  /** The assistant's text of the last turn. */
  finalText: string;
  usage: TokenUsage;
  steps: number;
  stepLimitHit: boolean;
  toolCalls: number;
  toolErrors: number;
  /** Set when the conversation could not go on (model unreachable after retries, …). */
  error?: string;
  /** The kind of model fault behind `error` (auth and quota halt the task), or the last content filter. */
  fault?: ModelFaultKind;
  stopped: boolean;
  /** An agent CLI's context filled up and its session was ended there (the next iteration starts fresh). */
  contextFull?: boolean;
  /** The agent CLI's session of the iteration: which CLI, its session id, the model it used. */
  agentSession?: { agent: string; id: string; model?: string };
}

/** Content-filter refusals answered with feedback in one conversation before it ends with the error. */
const MAX_FILTERED = 2;

/** What the agent is told when the provider's content filter blocked its request or reply. */
export function contentFilterFeedback(detail: string): string {
  return `The model provider's content filter blocked the last ${detail}. Nothing of it was used. Rephrase: keep to the task, avoid quoting the flagged material verbatim, and go on.`;
}

const TERMINAL: ReadonlySet<Signal['kind']> = new Set(['COMPLETE', 'BLOCKED', 'NEEDS_HELP']);

/**
 * One iteration: a tool-calling conversation that starts from `messages` (a fresh context)
 * and runs until the model stops calling tools, gives a terminal signal, hits the step limit,
 * fails, or the run is stopped. Never throws for model or tool trouble: it reports it.
 */
export async function runIteration(initial: readonly ChatMessage[], deps: IterationDeps): Promise<IterationRunResult> {
  return new IterationConversation(initial, deps).run();
}

/** What one model request came to: its reply, another try of the step, or the end of the iteration. */
type Asked = { reply: ChatResponse } | { again: true } | { end: IterationRunResult };

/**
 * The state of one iteration's conversation: its messages, the result so far, and how often a
 * context-length refusal and the content filter were met (each is answered only so often).
 */
class IterationConversation {
  private readonly messages: ChatMessage[];
  private readonly result: IterationRunResult = {
    signals: [],
    finalText: '',
    usage: ZERO_USAGE,
    steps: 0,
    stepLimitHit: false,
    toolCalls: 0,
    toolErrors: 0,
    stopped: false,
  };
  private readonly tools: ReturnType<ToolRegistry['specs']>;
  private readonly tag: { agent?: string };
  private readonly toolContext: ToolContext;
  private readonly compactor: Compactor | undefined;
  private contextRetried = false;
  private filtered = 0;

  constructor(
    initial: readonly ChatMessage[],
    private readonly deps: IterationDeps,
  ) {
    this.messages = [...initial];
    this.tools = deps.registry.specs();
    const agent = deps.agent;
    this.tag = agent ? { agent } : {};
    const request = deps.request ?? initial.find((m) => m.role === 'user')?.content ?? '';
    this.toolContext = {
      ...deps.toolContext,
      conversation: { taskId: deps.taskId, iteration: deps.iteration, modelName: deps.modelName, request, agent, emit: deps.emit },
    };
    this.compactor = deps.compaction
      ? new Compactor({
          ...deps.compaction,
          model: deps.model,
          modelName: deps.modelName,
          temperature: deps.temperature,
          pinned: request,
          signal: deps.signal,
        })
      : undefined;
  }

  private get speaker(): string {
    return this.deps.agent ?? 'orchestrator';
  }

  async run(): Promise<IterationRunResult> {
    const { deps } = this;
    while (this.result.steps < deps.maxSteps) {
      await deps.pause?.wait(deps.signal);
      if (deps.signal.aborted) return this.interrupted({ ...this.result, stopped: true });
      if (this.compactor) {
        try {
          await this.compactNow(false);
        } catch (error) {
          if (deps.signal.aborted) return this.interrupted({ ...this.result, stopped: true });
          deps.emit({
            type: 'warning',
            taskId: deps.taskId,
            code: 'compaction-failed',
            message: `${this.speaker}: ${errorMessage(error)}`,
          });
        }
      }
      this.result.steps++;
      const asked = await this.ask();
      if ('end' in asked) return asked.end;
      if ('again' in asked) continue;
      const ended = await this.answer(asked.reply);
      if (ended) return ended;
    }
    return { ...this.result, stepLimitHit: true };
  }

  /** One model request; a refusal it can answer (pause, context length, content filter) is another try. */
  private async ask(): Promise<Asked> {
    const { deps, tag } = this;
    const pausing = deps.pause?.signal;
    try {
      const reply = await deps.model.chat({
        model: deps.modelName,
        messages: this.messages,
        tools: this.tools,
        temperature: deps.temperature,
        signal: pausing ? AbortSignal.any([deps.signal, pausing]) : deps.signal,
        purpose: this.speaker,
        onDelta: (delta) => {
          if (delta.kind === 'text')
            deps.emit({ type: 'model.delta', taskId: deps.taskId, iteration: deps.iteration, text: delta.text, ...tag });
        },
      });
      return { reply };
    } catch (error) {
      if (!deps.signal.aborted && pausing?.aborted) {
        // Pause cancelled the request: the same request goes out again after Resume (loop top)
        deps.emit({
          type: 'warning',
          taskId: deps.taskId,
          iteration: deps.iteration,
          code: 'request-paused',
          message: `${this.speaker}: paused — the model request in flight was cancelled; it is sent again on Resume`,
        });
        this.result.steps--;
        return { again: true };
      }
      return this.refused(error);
    }
  }

  /** A model request that failed: compact and retry once on a context refusal, feedback on the content filter, else the end. */
  private async refused(error: unknown): Promise<Asked> {
    const { deps } = this;
    if (deps.signal.aborted || error instanceof StopRequestedError)
      return { end: await this.interrupted({ ...this.result, stopped: true }) };
    const kind = error instanceof ModelError ? error.fault : undefined;
    if (kind === 'context_length' && this.compactor && !this.contextRetried) {
      // compact and retry once; a second refusal (or nothing to compact) ends the iteration with the error
      this.contextRetried = true;
      this.fault(kind, 'compact-retry', errorMessage(error));
      const compacted = await this.compactNow(true).catch((failure: unknown) => {
        deps.emit({
          type: 'warning',
          taskId: deps.taskId,
          code: 'compaction-failed',
          message: `${this.speaker}: ${errorMessage(failure)}`,
        });
        return false;
      });
      if (deps.signal.aborted) return { end: await this.interrupted({ ...this.result, stopped: true }) };
      if (compacted) {
        this.result.steps--;
        return { again: true };
      }
    }
    if (kind === 'content_filter' && this.filtered < MAX_FILTERED) {
      this.filtered++;
      this.result.fault = kind;
      this.fault(kind, 'feedback', errorMessage(error));
      this.messages.push({ role: 'user', content: contentFilterFeedback('request') });
      return { again: true };
    }
    // a sub-agent's conversation only ends; the orchestrator's next call halts the task
    if (kind && kind !== 'unknown')
      this.fault(kind, !deps.agent && (kind === 'auth' || kind === 'quota') ? 'halt' : 'error', errorMessage(error));
    return {
      end: await this.interrupted(
        { ...this.result, error: errorMessage(error), ...(kind && kind !== 'unknown' ? { fault: kind } : {}) },
        error,
      ),
    };
  }

  /** The model's reply: recorded, its tool calls run, its signals taken; the result when the iteration ends here. */
  private async answer(response: ChatResponse): Promise<IterationRunResult | undefined> {
    const { deps, result, tag } = this;
    for (const message of response.warnings ?? []) {
      deps.emit({
        type: 'warning',
        taskId: deps.taskId,
        iteration: deps.iteration,
        code: 'model-wire',
        message: `${this.speaker}: ${message}`,
      });
    }
    result.usage = addUsage(result.usage, response.usage);
    result.finalText = response.content;
    deps.emit({
      type: 'model.response',
      taskId: deps.taskId,
      iteration: deps.iteration,
      model: response.model,
      usage: response.usage,
      toolCalls: response.toolCalls.length,
      finishReason: response.finishReason,
      ...tag,
    });
    this.messages.push({
      role: 'assistant',
      content: response.content || null,
      toolCalls: response.toolCalls.length ? response.toolCalls : undefined,
    });
    this.compactor?.noteResponse(response.usage, this.messages.length);
    const stepSignals = deps.agent ? [] : parseSignals(response.content);
    const endTurn = await this.runTools(response.toolCalls, stepSignals);
    for (const signal of stepSignals) {
      result.signals.push(signal);
      deps.emit({ type: 'signal', taskId: deps.taskId, iteration: deps.iteration, signal });
    }
    if (deps.signal.aborted) return this.interrupted({ ...result, stopped: true });
    if (endTurn || stepSignals.some((s) => TERMINAL.has(s.kind))) return result;
    if (response.finishReason === 'content_filter') {
      result.fault = 'content_filter';
      const message = `the provider stopped ${deps.modelName}'s reply (finish_reason content_filter)`;
      if (this.filtered >= MAX_FILTERED) {
        this.fault('content_filter', 'error', message);
        return { ...result, error: `${faultLabel('content_filter')}: ${message}, ${this.filtered + 1} times in this iteration` };
      }
      this.filtered++;
      this.fault('content_filter', 'feedback', message);
      if (response.toolCalls.length === 0) this.messages.push({ role: 'user', content: contentFilterFeedback('reply') });
      return undefined;
    }
    return response.toolCalls.length === 0 ? result : undefined;
  }

  /** Runs the reply's tool calls in order (each answered, run or not); true when one ends the turn. */
  private async runTools(calls: readonly ToolCall[], stepSignals: Signal[]): Promise<boolean> {
    const { deps, result, tag } = this;
    let endTurn = false;
    for (const call of calls) {
      if (deps.signal.aborted) {
        // every tool call needs an answer for the transcript to stay valid
        this.messages.push({ role: 'tool', toolCallId: call.id, content: 'not run: the run was stopped' });
        continue;
      }
      result.toolCalls++;
      deps.emit({
        type: 'tool.call',
        taskId: deps.taskId,
        iteration: deps.iteration,
        callId: call.id,
        tool: call.name,
        args: abbreviate(call.arguments, 300),
        ...tag,
      });
      const started = Date.now();
      const outcome = await deps.registry.execute(call, this.toolContext);
      if (!outcome.ok) result.toolErrors++;
      if (outcome.signal && !deps.agent) stepSignals.push(outcome.signal);
      if (outcome.usage) result.usage = addUsage(result.usage, outcome.usage);
      if (outcome.endTurn) endTurn = true;
      deps.onToolResult?.(call, outcome);
      deps.emit({
        type: 'tool.result',
        taskId: deps.taskId,
        iteration: deps.iteration,
        callId: call.id,
        tool: call.name,
        ok: outcome.ok,
        summary: outcome.summary,
        durationMs: Date.now() - started,
        ...tag,
      });
      this.messages.push({ role: 'tool', toolCallId: call.id, content: outcome.ok ? outcome.content : `ERROR: ${outcome.content}` });
    }
    return endTurn;
  }

  /** A summary in place of the older turns (when due, or `force`d after a context refusal); its call is metered like any. */
  private async compactNow(force: boolean): Promise<boolean> {
    const { deps } = this;
    const compacted = await this.compactor?.beforeRequest(this.messages, this.tools, { force });
    if (!compacted) return false;
    this.result.usage = addUsage(this.result.usage, compacted.usage);
    // the summary is a model call like any other: usage and cost meters read model.response
    const { model, usage, finishReason } = compacted;
    deps.emit({
      type: 'model.response',
      taskId: deps.taskId,
      iteration: deps.iteration,
      model,
      usage,
      toolCalls: 0,
      finishReason,
      ...this.tag,
    });
    deps.emit({
      type: 'compaction',
      taskId: deps.taskId,
      iteration: deps.iteration,
      scope: this.speaker,
      tokensBefore: compacted.tokensBefore,
      tokensAfter: compacted.tokensAfter,
    });
    return true;
  }

  private fault(kind: ModelFaultKind, action: 'halt' | 'compact-retry' | 'feedback' | 'error', message: string): void {
    const { deps } = this;
    deps.emit({
      type: 'model.fault',
      taskId: deps.taskId,
      iteration: deps.iteration,
      model: deps.modelName,
      fault: kind,
      action,
      message,
      ...this.tag,
    });
  }

  /** The conversation was cut short: the loop's wind-down turn sees it. */
  private async interrupted(out: IterationRunResult, error?: unknown): Promise<IterationRunResult> {
    await this.deps.onInterrupted?.(this.messages, error);
    return out;
  }
}

function abbreviate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
