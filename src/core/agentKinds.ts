/**
 * Who does the work of an iteration: Ralph's own agent, or an agent CLI (issue 46) — one for which
 * an adapter exists in `agentCli/adapters/`. A leaf: imports nothing.
 */
export const AGENT_KINDS = ['builtin', 'claude-code', 'codex', 'opencode', 'copilot', 'gemini'] as const;
export type AgentKind = (typeof AGENT_KINDS)[number];
export type CliAgentKind = Exclude<AgentKind, 'builtin'>;
