import { errorMessage } from '../../errors';
import type { RalphEventBody } from '../../events';
import type { ChatMessage, ModelClient, TokenUsage } from '../../llm/types';
import type { CompactionSettings } from '../compaction';
import { runIteration } from '../iteration';
import { ToolRegistry } from '../toolRegistry';
import { oneLine } from '../tools/results';
import type { AgentTool, ToolContext } from '../tools/types';
import { createEscalateTool } from './escalateTool';
import { defaultMissingEvidence, mergeMissing } from './defaultEvidence';
import { evidenceOf, missingEvidence } from './evidence';
import { describeFindings, parseFindings } from './findings';
import type { AgentProfile } from './profiles';
import { atMostPartial, deriveStatus } from './status';
import type { DelegationRequest, DelegationResult, ToolEvidence } from './types';

export interface SubAgentRun {
  request: DelegationRequest;
  profile: AgentProfile;
  /** The profile's tools (escalate is added here). */
  tools: readonly AgentTool[];
  model: ModelClient;
  modelName: string;
  temperature?: number;
  compaction?: CompactionSettings;
  /** The orchestrator's tool context: same workspace, commands, commit and abort signal. */
  toolContext: ToolContext;
  taskId: string;
  iteration: number;
  /** The task's exact prompt, handed on verbatim. */
  taskPrompt: string;
  emit(body: RalphEventBody): void;
}

export interface SubAgentOutcome {
  result: DelegationResult;
  usage: TokenUsage;
}

/**
 * One sub-agent conversation: its own system prompt, its own registry (the profile's tools plus
 * `escalate`), its own step limit. Evidence is taken from its tool log as the calls run, and the
 * status derived from it with no model call.
 */
export async function runSubAgent(run: SubAgentRun): Promise<SubAgentOutcome> {
  const { request, profile } = run;
  let escalation: string | undefined;
  const evidence: ToolEvidence[] = [];
  const registry = new ToolRegistry([...run.tools, createEscalateTool((reason) => (escalation ??= reason))]);
  const brief = delegationBrief(request, run.taskPrompt);
  const messages: ChatMessage[] = [
    { role: 'system', content: profile.systemPrompt },
    { role: 'user', content: brief },
  ];

  const conversation = await runIteration(messages, {
    model: run.model,
    modelName: run.modelName,
    temperature: run.temperature,
    registry,
    toolContext: run.toolContext,
    maxSteps: profile.maxSteps,
    taskId: run.taskId,
    iteration: run.iteration,
    signal: run.toolContext.signal,
    emit: run.emit,
    agent: profile.name,
    // A sub-agent's original request is its whole brief: the objective it was given and, inside
    // it, the task's exact prompt. Pinning both keeps it on its objective and on the task's intent.
    request: brief,
    compaction: run.compaction,
    onToolResult: (call, outcome) => {
      if (call.name !== 'escalate') evidence.push(evidenceOf(call, outcome));
    },
  });

  // What stopped the conversation early is evidence too (from the runner's log, not the agent's words).
  if (conversation.error) evidence.push({ tool: 'model', success: false, summary: `model call failed: ${oneLine(conversation.error)}` });
  if (conversation.stepLimitHit && escalation === undefined) {
    evidence.push({ tool: 'step_limit', success: false, summary: `stopped after ${profile.maxSteps} model calls without finishing` });
  }
  if (conversation.stopped)
    evidence.push({ tool: 'stopped', success: false, summary: 'the run was stopped before the sub-agent finished' });

  return { result: buildResult(request, profile, evidence, escalation, conversation.finalText), usage: conversation.usage };
}

/** The status table, then the caps: missing expected evidence (named or the profile's default), a scout's low confidence or invalid findings. */
export function buildResult(
  request: DelegationRequest,
  profile: Pick<AgentProfile, 'name' | 'tools'>,
  evidence: ToolEvidence[],
  escalation: string | undefined,
  answer: string,
): DelegationResult {
  let status = deriveStatus(evidence, escalation !== undefined, answer);
  let summary = answer.trim();
  const result: DelegationResult = { status, summary, toolEvidence: evidence };

  // what the orchestrator named, then what the profile always expects (DESIGN §4's [MISSING] without being asked)
  const missing = mergeMissing(
    missingEvidence(evidence, request.expectedEvidence),
    defaultMissingEvidence(profile.name, profile.tools, request, evidence),
  );
  if (missing.length > 0) {
    result.missingEvidence = missing;
    status = atMostPartial(status);
  }
  if (escalation !== undefined) result.escalation = escalation;

  if (profile.name === 'scout' && escalation === undefined) {
    const parsed = parseFindings(answer);
    if (parsed.ok) {
      result.findings = parsed.findings;
      summary = describeFindings(parsed.summary ?? withoutJsonBlocks(answer), parsed.findings);
      if (parsed.findings.confidence === 'low') status = atMostPartial(status);
    } else {
      summary = `${summary}\n\n[findings invalid: ${parsed.error}]`.trim();
      status = atMostPartial(status);
    }
  }
  result.status = status;
  result.summary = summary;
  return result;
}

/** The sub-agent's first (and pinned) message. */
export function delegationBrief(request: DelegationRequest, taskPrompt: string): string {
  const sections = [`# Objective\n${request.objective}`];
  if (request.constraints && request.constraints.length > 0)
    sections.push(`# Constraints\n${request.constraints.map((c) => `- ${c}`).join('\n')}`);
  if (request.expectedOutcome) sections.push(`# Expected outcome\n${request.expectedOutcome}`);
  if (request.expectedEvidence && request.expectedEvidence.length > 0) {
    sections.push(`# Evidence the orchestrator will check\nAt least one successful call of each: ${request.expectedEvidence.join(', ')}`);
  }
  sections.push(`# The task this serves (its original request, verbatim)\n${taskPrompt}`);
  return sections.join('\n\n');
}

/** A failed result for a delegation that could not run at all. */
export function failedResult(error: unknown): DelegationResult {
  return { status: 'failed', summary: '', toolEvidence: [{ tool: 'delegation', success: false, summary: oneLine(errorMessage(error)) }] };
}

function withoutJsonBlocks(text: string): string {
  return text.replace(/```(?:json)?\s*\n[\s\S]*?```/g, '').trim();
}
