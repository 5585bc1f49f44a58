import { errorMessage, ModelError, type ModelFaultKind, StopRequestedError } from '../errors';
import { faultLabel } from '../llm/faults';
import type { RalphEventBody } from '../events';
import { addUsage, type ChatMessage, type ModelClient, type TokenUsage, type ToolCall, ZERO_USAGE } from '../llm/types';
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
  const messages: ChatMessage[] = [...initial];
  const result: IterationRunResult = {
    signals: [],
    finalText: '',
    usage: ZERO_USAGE,
    steps: 0,
    stepLimitHit: false,
    toolCalls: 0,
    toolErrors: 0,
    stopped: false,
  };
  const tools = deps.registry.specs();
  const agent = deps.agent;
  const tag = agent ? { agent } : {};
  const request = deps.request ?? initial.find((m) => m.role === 'user')?.content ?? '';
  const toolContext: ToolContext = {
    ...deps.toolContext,
    conversation: { taskId: deps.taskId, iteration: deps.iteration, modelName: deps.modelName, request, agent, emit: deps.emit },
  };
  const compactor = deps.compaction
    ? new Compactor({ ...deps.compaction, model: deps.model, modelName: deps.modelName, temperature: deps.temperature, pinned: request, signal: deps.signal })
    : undefined;

  const interrupted = async (out: IterationRunResult, error?: unknown): Promise<IterationRunResult> => {
    await deps.onInterrupted?.(messages, error);
    return out;
  };
  const fault = (kind: ModelFaultKind, action: 'halt' | 'compact-retry' | 'feedback' | 'error', message: string) =>
    deps.emit({ type: 'model.fault', taskId: deps.taskId, iteration: deps.iteration, model: deps.modelName, fault: kind, action, message, ...tag });
  let contextRetried = false;
  let filtered = 0;
  const compactNow = async (force: boolean): Promise<boolean> => {
    const compacted = await compactor?.beforeRequest(messages, tools, { force });
    if (!compacted) return false;
    result.usage = addUsage(result.usage, compacted.usage);
    // the summary is a model call like any other: usage and cost meters read model.response
    const { model, usage, finishReason } = compacted;
    deps.emit({ type: 'model.response', taskId: deps.taskId, iteration: deps.iteration, model, usage, toolCalls: 0, finishReason, ...tag });
    deps.emit({
      type: 'compaction',
      taskId: deps.taskId,
      iteration: deps.iteration,
      scope: agent ?? 'orchestrator',
      tokensBefore: compacted.tokensBefore,
      tokensAfter: compacted.tokensAfter,
    });
    return true;
  };

  while (result.steps < deps.maxSteps) {
    await deps.pause?.wait(deps.signal);
    if (deps.signal.aborted) return interrupted({ ...result, stopped: true });
    if (compactor) {
      try {
        await compactNow(false);
      } catch (error) {
        if (deps.signal.aborted) return interrupted({ ...result, stopped: true });
        deps.emit({ type: 'warning', taskId: deps.taskId, code: 'compaction-failed', message: `${agent ?? 'orchestrator'}: ${errorMessage(error)}` });
      }
    }
    result.steps++;
    const pausing = deps.pause?.signal;
    let response;
    try {
      response = await deps.model.chat({
        model: deps.modelName,
        messages,
        tools,
        temperature: deps.temperature,
        signal: pausing ? AbortSignal.any([deps.signal, pausing]) : deps.signal,
        purpose: agent ?? 'orchestrator',
        onDelta: (delta) => {
          if (delta.kind === 'text') deps.emit({ type: 'model.delta', taskId: deps.taskId, iteration: deps.iteration, text: delta.text, ...tag });
        },
      });
    } catch (error) {
      if (!deps.signal.aborted && pausing?.aborted) {
        // Pause cancelled the request: the same request goes out again after Resume (loop top)
        deps.emit({ type: 'warning', taskId: deps.taskId, iteration: deps.iteration, code: 'request-paused', message: `${agent ?? 'orchestrator'}: paused — the model request in flight was cancelled; it is sent again on Resume` });
        result.steps--;
        continue;
      }
      if (deps.signal.aborted || error instanceof StopRequestedError) return interrupted({ ...result, stopped: true });
      const kind = error instanceof ModelError ? error.fault : undefined;
      if (kind === 'context_length' && compactor && !contextRetried) {
        // compact and retry once; a second refusal (or nothing to compact) ends the iteration with the error
        contextRetried = true;
        fault(kind, 'compact-retry', errorMessage(error));
        const compacted = await compactNow(true).catch((failure: unknown) => {
          deps.emit({ type: 'warning', taskId: deps.taskId, code: 'compaction-failed', message: `${agent ?? 'orchestrator'}: ${errorMessage(failure)}` });
          return false;
        });
        if (deps.signal.aborted) return interrupted({ ...result, stopped: true });
        if (compacted) {
          result.steps--;
          continue;
        }
      }
      if (kind === 'content_filter' && filtered < MAX_FILTERED) {
        filtered++;
        result.fault = kind;
        fault(kind, 'feedback', errorMessage(error));
        messages.push({ role: 'user', content: contentFilterFeedback('request') });
        continue;
      }
      // a sub-agent's conversation only ends; the orchestrator's next call halts the task
      if (kind && kind !== 'unknown') fault(kind, !agent && (kind === 'auth' || kind === 'quota') ? 'halt' : 'error', errorMessage(error));
      return interrupted({ ...result, error: errorMessage(error), ...(kind && kind !== 'unknown' ? { fault: kind } : {}) }, error);
    }
    for (const message of response.warnings ?? []) {
      deps.emit({ type: 'warning', taskId: deps.taskId, iteration: deps.iteration, code: 'model-wire', message: `${agent ?? 'orchestrator'}: ${message}` });
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
    messages.push({ role: 'assistant', content: response.content || null, toolCalls: response.toolCalls.length ? response.toolCalls : undefined });
    compactor?.noteResponse(response.usage, messages.length);
    const stepSignals = agent ? [] : parseSignals(response.content);
    let endTurn = false;

    for (const call of response.toolCalls) {
      if (deps.signal.aborted) {
        // every tool call needs an answer for the transcript to stay valid
        messages.push({ role: 'tool', toolCallId: call.id, content: 'not run: the run was stopped' });
        continue;
      }
      result.toolCalls++;
      deps.emit({ type: 'tool.call', taskId: deps.taskId, iteration: deps.iteration, callId: call.id, tool: call.name, args: abbreviate(call.arguments, 300), ...tag });
      const started = Date.now();
      const outcome = await deps.registry.execute(call, toolContext);
      if (!outcome.ok) result.toolErrors++;
      if (outcome.signal && !agent) stepSignals.push(outcome.signal);
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
      messages.push({ role: 'tool', toolCallId: call.id, content: outcome.ok ? outcome.content : `ERROR: ${outcome.content}` });
    }

    for (const signal of stepSignals) {
      result.signals.push(signal);
      deps.emit({ type: 'signal', taskId: deps.taskId, iteration: deps.iteration, signal });
    }
    if (deps.signal.aborted) return interrupted({ ...result, stopped: true });
    if (endTurn || stepSignals.some((s) => TERMINAL.has(s.kind))) return result;
    if (response.finishReason === 'content_filter') {
      result.fault = 'content_filter';
      const message = `the provider stopped ${deps.modelName}'s reply (finish_reason content_filter)`;
      if (filtered >= MAX_FILTERED) {
        fault('content_filter', 'error', message);
        return { ...result, error: `${faultLabel('content_filter')}: ${message}, ${filtered + 1} times in this iteration` };
      }
      filtered++;
      fault('content_filter', 'feedback', message);
      if (response.toolCalls.length === 0) {
        messages.push({ role: 'user', content: contentFilterFeedback('reply') });
        continue;
      }
    }
    if (response.toolCalls.length === 0) return result;
  }
  return { ...result, stepLimitHit: true };
}

function abbreviate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
