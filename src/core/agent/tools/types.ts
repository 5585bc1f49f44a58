import type { z } from 'zod';
import type { RalphEventBody } from '../../events';
import type { TokenUsage } from '../../llm/types';
import type { Signal } from '../../signals/types';
import type { WorkspaceScope } from '../../guards/workspaceScope';
import type { CommandRunner } from '../../commands/processRunner';

/** What a tool's execution may touch. Built once per iteration by the loop. */
export interface ToolContext {
  scope: WorkspaceScope;
  commands: CommandRunner;
  /** Commits everything staged-able in the workspace; undefined when nothing changed. */
  commit(message: string): Promise<{ sha: string; files: string[] } | undefined>;
  commandTimeoutMs: number;
  maxOutputChars: number;
  signal: AbortSignal;
  /** The conversation the call belongs to; runIteration fills it in (the delegation tools need it). */
  conversation?: ConversationInfo;
  /** A `run_command` of exactly one of the task's gate commands, run as that gate (`loop/task/agentGateRuns.ts`); absent: none is. */
  gateRuns?: AgentGateRuns;
}

/**
 * The agent's run of a gate's own command, made by the gates' runner (the same sandbox, the
 * same environment, the whole output kept): the run's gate cache keeps it, so the gate on that
 * very tree takes it instead of running the suite again — and the agent takes the result of a
 * run already made on that tree.
 */
export interface AgentGateRuns {
  /** The run, or undefined when `command` is no gate's command (or the policy wants more than a plain run): it runs as any command then. */
  run(command: string, options: { cwd: string; timeoutMs: number; signal: AbortSignal }): Promise<AgentGateRun | undefined>;
}

export interface AgentGateRun {
  /** The gate whose command it is. */
  gate: string;
  exitCode: number | null;
  timedOut: boolean;
  aborted: boolean;
  /** Whole (the gate's cap), not the agent's. */
  output: string;
  /** Taken from a run already made on this tree in this run. */
  reused: boolean;
}

/** Who is calling a tool, and where its events go. */
export interface ConversationInfo {
  taskId: string;
  iteration: number;
  /** The model of this conversation. */
  modelName: string;
  /** The conversation's exact original request (the task's prompt for the orchestrator). */
  request: string;
  /** The sub-agent's name; undefined for the orchestrator. */
  agent?: string;
  emit(body: RalphEventBody): void;
}

/** The result of one tool call. `content` goes back to the model; `summary` is one line for logs and evidence. */
export interface ToolResult {
  ok: boolean;
  content: string;
  summary: string;
  /** Set by the signal tools (ralph_complete, report_progress, report_blocked, ask_for_help). */
  signal?: Signal;
  /** The action waits for a human's approval and did not run (evidence: `[PENDING]`, not a failure). */
  pendingApproval?: boolean;
  /** What an action created outside the working tree (commit sha, pull request URL…). */
  externalId?: string;
  /** What has to happen next for the action to complete. */
  nextStep?: string;
  /** Model tokens the tool spent (a delegation's sub-agent); counted into the iteration's usage. */
  usage?: TokenUsage;
  /** Ends the conversation after this step (a sub-agent's `escalate`). */
  endTurn?: boolean;
}

export interface AgentTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  run(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}

/** Helper that keeps the schema and the handler's argument type tied together. */
export function defineTool<S extends z.ZodType>(tool: AgentTool<S>): AgentTool<S> {
  return tool;
}
