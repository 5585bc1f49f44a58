/**
 * The scripted agent of a scenario, served by the scripted OpenAI-compatible server: in its first
 * iteration it writes the scenario's files whole (`write_file`, one call per file) and claims
 * COMPLETE (`ralph_complete`) — or, with `completeAt`, ends that iteration without a signal; in
 * every later iteration it claims COMPLETE (from `completeAt` on) without touching anything. It keeps what it was told at the start of each iteration, and every tool result the
 * product answered with an error.
 */
import type { RecordedRequest, StaticStep, StepFunction, WireMessage } from '../fixtures/scriptedServer';

export interface AgentPlan {
  /** Workspace-relative path → the whole new content, written in iteration 1. */
  writes: Record<string, string>;
  summary: string;
  promiseEvidence: string;
  /** The iteration of the first COMPLETE (default 1): the iterations before it end with a line of text, no signal. */
  completeAt?: number;
}

export interface ScriptedAgent {
  step: StepFunction;
  /** What each iteration's first request said to the agent: its user message(s), in order (the system prompt left out). */
  contexts: string[];
  /** Tool results the product answered with `ERROR: …` (an agent whose edits failed tests nothing). */
  toolErrors: string[];
  /** Model calls that were not the agent's own turns (council, wind-down…), by their first words. */
  otherCalls: string[];
}

const textOf = (m: WireMessage | undefined) => (typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? ''));

/** The user messages of a request, joined. */
export function userText(request: RecordedRequest): string {
  return (request.body?.messages ?? [])
    .filter((m) => m.role === 'user')
    .map(textOf)
    .join('\n');
}

export function scriptedAgent(plan: AgentPlan): ScriptedAgent {
  const agent: ScriptedAgent = { step: () => ({ content: '' }), contexts: [], toolErrors: [], otherCalls: [] };
  const complete: StaticStep = {
    toolCalls: [{ name: 'ralph_complete', arguments: { summary: plan.summary, promiseEvidence: plan.promiseEvidence } }],
  };
  agent.step = (request) => {
    const messages = request.body?.messages ?? [];
    const last = messages.at(-1);
    const tools = (request.body?.tools ?? []).map((t) => t.function.name);
    if (!tools.includes('ralph_complete') || (last?.role === 'user' && textOf(last).includes('[WIND-DOWN]'))) {
      agent.otherCalls.push(textOf(messages.find((m) => m.role !== 'system') ?? last).slice(0, 120));
      return { content: 'Nothing to add.' };
    }
    if (last?.role === 'tool') {
      for (const m of messages)
        if (m.role === 'tool' && textOf(m).startsWith('ERROR:') && !agent.toolErrors.includes(textOf(m))) agent.toolErrors.push(textOf(m));
      return agent.contexts.length < (plan.completeAt ?? 1) ? { content: 'The fix is written; I will check it next iteration.' } : complete;
    }
    // a fresh context: a new iteration
    agent.contexts.push(userText(request));
    const writes = agent.contexts.length === 1 ? Object.entries(plan.writes) : [];
    if (writes.length === 0) return complete;
    return { toolCalls: writes.map(([path, content]) => ({ name: 'write_file', arguments: { path, content } })) };
  };
  return agent;
}
