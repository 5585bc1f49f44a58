import { z } from 'zod';
import { AGENT_KINDS } from '../agentKinds';

/** Which agent runs a task's iterations: the built-in one, or an agent CLI the person already uses. */
export const AgentKindSchema = z.enum(AGENT_KINDS);

/** `.ralph/config.json` `agent` (issue 46). */
export const AgentConfigSchema = z
  .strictObject({
    kind: AgentKindSchema.default('builtin').describe(
      'who does the work of an iteration: "builtin" (Ralph\'s own agent over llm), or an agent CLI: "claude-code" (Claude Code), "codex" (Codex CLI), "opencode" (OpenCode), "copilot" (GitHub Copilot CLI), "gemini" (Gemini CLI) — one fresh headless session per iteration, verified by the same gates',
    ),
    command: z
      .string()
      .min(1)
      .optional()
      .describe("the agent CLI's executable (default: its usual name found on PATH: claude, codex, opencode, copilot, gemini)"),
    args: z
      .array(z.string())
      .default([])
      .describe('extra arguments given to every session of agent.kind\'s CLI (with "builtin": of any CLI), after Ralph\'s own'),
    model: z.string().min(1).optional().describe("the model the agent CLI is told to use (default: the CLI's own choice)"),
    env: z
      .record(z.string(), z.string())
      .default({})
      .describe("variables set for the agent CLI's sessions (its own key variables and login reach it from the environment anyway)"),
  })
  .prefault({});
export type AgentConfig = z.infer<typeof AgentConfigSchema>;
