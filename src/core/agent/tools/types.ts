import type { z } from 'zod';
import type { Signal } from '../../signals/types';
import type { WorkspaceScope } from '../../safety/workspaceScope';
import type { CommandRunner } from '../../safety/processRunner';

/** What a tool's execution may touch. Built once per iteration by the loop. */
export interface ToolContext {
  scope: WorkspaceScope;
  commands: CommandRunner;
  /** Commits everything staged-able in the workspace; undefined when nothing changed. */
  commit(message: string): Promise<{ sha: string; files: string[] } | undefined>;
  commandTimeoutMs: number;
  maxOutputChars: number;
  signal: AbortSignal;
}

/** The result of one tool call. `content` goes back to the model; `summary` is one line for logs and evidence. */
export interface ToolResult {
  ok: boolean;
  content: string;
  summary: string;
  /** Set by the signal tools (ralph_complete, report_progress, report_blocked, ask_for_help). */
  signal?: Signal;
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
