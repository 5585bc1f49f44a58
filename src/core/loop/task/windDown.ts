/**
 * A graceful wind-down: when the budget, the task timeout or Stop arrives in the middle of an
 * iteration, the agent gets one bounded turn — one model call, a short reply, a short deadline,
 * and only the tools that write its progress notes — before the orchestrator commits.
 */

import { ToolRegistry } from '../../agent/toolRegistry';
import { editFileTool, writeFileTool } from '../../agent/tools';
import { errorResult } from '../../agent/tools/results';
import type { AgentTool, ToolContext } from '../../agent/tools/types';
import { errorMessage } from '../../errors';
import type { ChatMessage } from '../../llm/types';
import type { TaskLoopServices } from './types';

export type WindDownCause = 'budget' | 'timeout' | 'stop';

/** The reply's token cap of the wind-down turn: room for notes, not for new work. */
export const WIND_DOWN_MAX_TOKENS = 1500;
/** Tool calls of the wind-down turn that are executed; any further ones are answered "not run". */
const MAX_CALLS = 2;
/** The recent messages of the cut-short conversation shown to the agent, each capped. */
const RECENT_MESSAGES = 12;
const MESSAGE_CHARS = 1500;

export interface WindDownInput {
  taskId: string;
  iteration: number;
  cause: WindDownCause;
  /** Why the iteration is cut short, in words (the budget message, the timeout, Stop). */
  reason: string;
  /** The model of the iteration. */
  model: string;
  /** The conversation so far. */
  messages: readonly ChatMessage[];
  /** Workspace-relative path of the task's progress notes, the only file the turn may write. */
  progressFile: string;
  /** The iteration's tool context; the turn gets its own deadline instead of the (aborted) signal. */
  toolContext: ToolContext;
  /** Milliseconds the task's time limit leaves; the turn's deadline never goes past them. */
  leftMs?: number;
}

/** The shortest deadline a wind-down turn gets, even when the task's time limit leaves less. */
const MIN_TURN_MS = 2_000;

export interface WindDownResult {
  wrote: string[];
  error?: string;
}

/**
 * Runs the wind-down turn and reports it as a `wind-down` event. Never throws: a turn that
 * fails (the provider is down, the deadline passed) loses only the notes, never the commit.
 */
export async function windDownTurn(
  services: Pick<TaskLoopServices, 'config' | 'model' | 'emit'>,
  input: WindDownInput,
): Promise<WindDownResult | undefined> {
  // the turn ends by the task's time limit too (a model that never answers cannot stretch the task
  // past it), give or take the few seconds a turn needs at all when the limit is tiny
  if (services.config.loop.windDownSeconds <= 0) return undefined;
  const limitMs = Math.min(services.config.loop.windDownSeconds * 1000, Math.max(input.leftMs ?? Number.POSITIVE_INFINITY, MIN_TURN_MS));
  const seconds = Math.round(limitMs / 100) / 10;
  const signal = AbortSignal.timeout(limitMs);
  const registry = new ToolRegistry([onlyProgress(writeFileTool, input.progressFile), onlyProgress(editFileTool, input.progressFile)]);
  const wrote: string[] = [];
  let error: string | undefined;
  try {
    const response = await services.model.chat({
      model: input.model,
      messages: windDownMessages(input, seconds),
      tools: registry.specs(),
      temperature: services.config.llm.temperature,
      maxTokens: WIND_DOWN_MAX_TOKENS,
      windDown: true,
      signal,
    });
    services.emit({
      type: 'model.response',
      taskId: input.taskId,
      iteration: input.iteration,
      model: response.model,
      usage: response.usage,
      toolCalls: response.toolCalls.length,
      finishReason: response.finishReason,
      agent: 'wind-down',
    });
    const context: ToolContext = { ...input.toolContext, signal };
    for (const call of response.toolCalls.slice(0, MAX_CALLS)) {
      if (signal.aborted) break;
      services.emit({
        type: 'tool.call',
        taskId: input.taskId,
        iteration: input.iteration,
        callId: call.id,
        tool: call.name,
        args: call.arguments.slice(0, 300),
        agent: 'wind-down',
      });
      const started = Date.now();
      const outcome = await registry.execute(call, context);
      services.emit({
        type: 'tool.result',
        taskId: input.taskId,
        iteration: input.iteration,
        callId: call.id,
        tool: call.name,
        ok: outcome.ok,
        summary: outcome.summary,
        durationMs: Date.now() - started,
        agent: 'wind-down',
      });
      if (outcome.ok && !wrote.includes(input.progressFile)) wrote.push(input.progressFile);
    }
    if (wrote.length === 0)
      error =
        response.toolCalls.length === 0
          ? 'the agent wrote no progress notes'
          : 'no progress notes were written (refused or failed tool calls)';
  } catch (failure) {
    error = signal.aborted ? `the wind-down turn did not finish within ${seconds} s` : errorMessage(failure);
  }
  services.emit({
    type: 'wind-down',
    taskId: input.taskId,
    iteration: input.iteration,
    cause: input.cause,
    reason: input.reason,
    wrote,
    ...(error ? { error } : {}),
  });
  return { wrote, ...(error ? { error } : {}) };
}

/** A fresh, bounded context: the system prompt, the task, what this iteration did lately, the instruction. */
function windDownMessages(input: WindDownInput, seconds: number): ChatMessage[] {
  const system = input.messages.filter((m) => m.role === 'system');
  const rest = input.messages.filter((m) => m.role !== 'system');
  const task = rest.find((m) => m.role === 'user');
  const recent = rest.slice(-RECENT_MESSAGES).filter((m) => m !== task);
  const digest = recent.map(describe).join('\n\n');
  const instruction = [
    `[WIND-DOWN] This iteration is being cut short: ${input.reason}.`,
    `You have exactly one turn (${seconds} s, a short reply) and only write_file / edit_file on ${input.progressFile}.`,
    `Update ${input.progressFile} now so the next iteration can resume: what is done, what is half-done (name the files and what is missing), what failed, and the next concrete steps.`,
    'Keep what the notes already say that is still true. Do not start new work; every other tool is unavailable. The orchestrator commits your notes and the working tree after this turn.',
  ].join('\n');
  return [
    ...system,
    ...(task ? [task] : []),
    { role: 'user', content: `What this iteration did most recently (abridged):\n\n${digest || '(nothing yet)'}\n\n${instruction}` },
  ];
}

function describe(message: ChatMessage): string {
  if (message.role === 'assistant') {
    const calls = (message.toolCalls ?? []).map((c) => `→ ${c.name}(${cap(c.arguments, 300)})`);
    return [`assistant: ${cap(message.content ?? '', MESSAGE_CHARS)}`, ...calls].join('\n');
  }
  if (message.role === 'tool') return `tool result: ${cap(message.content, MESSAGE_CHARS)}`;
  return `${message.role}: ${cap(message.content, MESSAGE_CHARS)}`;
}

function cap(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** The tool, limited to the progress notes file. */
function onlyProgress(tool: AgentTool, progressFile: string): AgentTool {
  return {
    ...tool,
    description: `${tool.description} During the wind-down only ${progressFile} may be written.`,
    async run(args, ctx) {
      const target = (args as { path?: unknown }).path;
      const allowed =
        typeof target === 'string' &&
        (await ctx.scope.resolve(target, { forWrite: true }).catch(() => '')) ===
          (await ctx.scope.resolve(progressFile, { forWrite: true }));
      if (!allowed) {
        return errorResult(`only ${progressFile} may be written during the wind-down; ${String(target)} was not touched`);
      }
      return tool.run(args, ctx);
    },
  };
}
