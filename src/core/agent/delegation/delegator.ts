import type { RalphConfig } from '../../config/schema';
import { addUsage, type ModelClient, type TokenUsage, ZERO_USAGE } from '../../llm/types';
import { type ApprovalPrompt, refuseApprovals } from '../../ports';
import { Mutex } from '../../util/mutex';
import { editFileTool, gitCommitTool, listFilesTool, readFileTool, runCommandTool, searchTool, writeFileTool } from '../tools';
import type { AgentTool, ToolContext } from '../tools/types';
import { createCaioTools } from './caioTools';
import { buildEnvelope, ENVELOPE_RESPONSE_CHARS } from './envelope';
import { type AgentProfile, profileModel, resolveProfiles } from './profiles';
import { failedResult, runSubAgent } from './subAgent';
import type { AgentName, DelegationRequest, DelegationResult } from './types';

/** The workspace tools a sub-agent can be given (no signal tools: only the orchestrator ends an iteration). */
const WORKSPACE_TOOLS: readonly AgentTool[] = [
  readFileTool,
  writeFileTool,
  editFileTool,
  listFilesTool,
  searchTool,
  runCommandTool,
  gitCommitTool,
];

/** Tools that change the one shared working tree; two agents with them at once would mix their work and their evidence. */
const TREE_WRITING_TOOLS: ReadonlySet<string> = new Set(['write_file', 'edit_file', 'run_command', 'git_commit']);

export interface DelegatorDeps {
  config: RalphConfig;
  model: ModelClient;
  /** Asked before every caio action; default: refuse (the action stays pending). */
  approval?: ApprovalPrompt;
}

/** A finished delegation: the structured result and the envelope the orchestrator reads. */
export interface DelegationOutcome {
  request: DelegationRequest;
  result: DelegationResult;
  envelope: string;
  usage: TokenUsage;
  model: string;
}

/**
 * Runs delegations for the orchestrator's `delegate` and `delegate_parallel`: resolves the
 * profile and its model, runs the sub-agent, builds the envelope, and emits
 * `delegation.started` / `delegation.result`. Built once per run.
 */
export class Delegator {
  readonly profiles: Record<AgentName, AgentProfile>;
  private readonly tools = new Map<string, AgentTool>();
  private seq = 0;

  constructor(private readonly deps: DelegatorDeps) {
    const approvals = new Mutex();
    const approval = deps.approval ?? refuseApprovals;
    // one question at a time, even when parallel caio delegations ask together
    const serialized: ApprovalPrompt = { approve: (request) => approvals.run(() => approval.approve(request)) };
    for (const tool of [...WORKSPACE_TOOLS, ...createCaioTools(deps.config.agents.caio?.commands ?? {}, serialized)]) {
      this.tools.set(tool.name, tool);
    }
    this.profiles = resolveProfiles(deps.config.agents, [...this.tools.keys()]);
  }

  get maxParallel(): number {
    return this.deps.config.agents.maxParallel;
  }

  /** Whether a target can change the working tree (edit files, run commands, commit): such agents never run side by side. */
  writesTree(target: AgentName): boolean {
    return this.profiles[target].tools.some((tool) => TREE_WRITING_TOOLS.has(tool));
  }

  /** The tool names a target may call, `escalate` included. */
  toolsOf(target: AgentName): string[] {
    return [...this.profiles[target].tools, 'escalate'];
  }

  /** Runs one delegation to its end; never throws (a delegation that cannot run is a failed result). */
  async delegate(request: DelegationRequest, ctx: ToolContext, maxResponseChars = ENVELOPE_RESPONSE_CHARS): Promise<DelegationOutcome> {
    const conversation = ctx.conversation;
    if (!conversation) throw new Error('delegation needs the conversation of the caller');
    const { config } = this.deps;
    const profile = this.profiles[request.target];
    const model = profileModel(profile, config.llm.models, conversation.modelName);
    const delegationId = `${conversation.iteration}.${++this.seq}`;
    const where = {
      taskId: conversation.taskId,
      iteration: conversation.iteration,
      delegationId,
      target: request.target,
      objective: request.objective,
    };
    const started = Date.now();
    conversation.emit({
      type: 'delegation.started',
      ...where,
      model,
      ...(request.expectedOutcome ? { expectedOutcome: request.expectedOutcome } : {}),
    });

    let result: DelegationResult;
    let usage = ZERO_USAGE;
    try {
      const outcome = await runSubAgent({
        request,
        profile,
        tools: profile.tools.map((name) => this.tools.get(name)).filter((tool): tool is AgentTool => tool !== undefined),
        model: this.deps.model,
        modelName: model,
        temperature: config.llm.temperature,
        compaction: { contextWindow: config.llm.contextWindow, compactAt: config.llm.compactAt },
        toolContext: ctx,
        taskId: conversation.taskId,
        iteration: conversation.iteration,
        taskPrompt: conversation.request,
        emit: conversation.emit,
      });
      result = outcome.result;
      usage = outcome.usage;
    } catch (error) {
      result = failedResult(error);
    }
    const envelope = buildEnvelope(request, result, maxResponseChars);
    conversation.emit({
      type: 'delegation.result',
      ...where,
      model,
      status: result.status,
      result,
      envelope,
      usage,
      durationMs: Date.now() - started,
    });
    return { request, result, envelope, usage, model };
  }

  /** Runs delegations at most `agents.maxParallel` at a time; outcomes in the order asked. */
  async delegateAll(requests: readonly DelegationRequest[], ctx: ToolContext, maxResponseChars?: number): Promise<DelegationOutcome[]> {
    const outcomes: DelegationOutcome[] = new Array(requests.length);
    let next = 0;
    const worker = async () => {
      while (next < requests.length) {
        const index = next++;
        outcomes[index] = await this.delegate(requests[index], ctx, maxResponseChars);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.maxParallel, requests.length) }, worker));
    return outcomes;
  }
}

export function totalUsage(outcomes: readonly DelegationOutcome[]): TokenUsage {
  return outcomes.reduce((sum, o) => addUsage(sum, o.usage), ZERO_USAGE);
}
