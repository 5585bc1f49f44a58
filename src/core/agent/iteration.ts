import { errorMessage, StopRequestedError } from '../errors';
import type { RalphEventBody } from '../events';
import { addUsage, type ChatMessage, type ModelClient, type TokenUsage, ZERO_USAGE } from '../llm/types';
import { parseSignals } from '../signals/parser';
import type { Signal } from '../signals/types';
import type { ToolRegistry } from './toolRegistry';
import type { ToolContext } from './tools/types';

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
  stopped: boolean;
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

  while (result.steps < deps.maxSteps) {
    if (deps.signal.aborted) return { ...result, stopped: true };
    result.steps++;
    let response;
    try {
      response = await deps.model.chat({
        model: deps.modelName,
        messages,
        tools,
        temperature: deps.temperature,
        signal: deps.signal,
        onDelta: (delta) => {
          if (delta.kind === 'text') deps.emit({ type: 'model.delta', taskId: deps.taskId, iteration: deps.iteration, text: delta.text });
        },
      });
    } catch (error) {
      if (deps.signal.aborted || error instanceof StopRequestedError) return { ...result, stopped: true };
      return { ...result, error: errorMessage(error) };
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
    });
    messages.push({ role: 'assistant', content: response.content || null, toolCalls: response.toolCalls.length ? response.toolCalls : undefined });
    const stepSignals = parseSignals(response.content);

    for (const call of response.toolCalls) {
      if (deps.signal.aborted) {
        // every tool call needs an answer for the transcript to stay valid
        messages.push({ role: 'tool', toolCallId: call.id, content: 'not run: the run was stopped' });
        continue;
      }
      result.toolCalls++;
      deps.emit({ type: 'tool.call', taskId: deps.taskId, iteration: deps.iteration, callId: call.id, tool: call.name, args: abbreviate(call.arguments, 300) });
      const started = Date.now();
      const outcome = await deps.registry.execute(call, deps.toolContext);
      if (!outcome.ok) result.toolErrors++;
      if (outcome.signal) stepSignals.push(outcome.signal);
      deps.emit({
        type: 'tool.result',
        taskId: deps.taskId,
        iteration: deps.iteration,
        callId: call.id,
        tool: call.name,
        ok: outcome.ok,
        summary: outcome.summary,
        durationMs: Date.now() - started,
      });
      messages.push({ role: 'tool', toolCallId: call.id, content: outcome.ok ? outcome.content : `ERROR: ${outcome.content}` });
    }

    for (const signal of stepSignals) {
      result.signals.push(signal);
      deps.emit({ type: 'signal', taskId: deps.taskId, iteration: deps.iteration, signal });
    }
    if (deps.signal.aborted) return { ...result, stopped: true };
    if (stepSignals.some((s) => TERMINAL.has(s.kind))) return result;
    if (response.toolCalls.length === 0) return result;
  }
  return { ...result, stepLimitHit: true };
}

function abbreviate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}
