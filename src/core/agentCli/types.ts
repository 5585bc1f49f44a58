/**
 * The agent port for agent CLIs (issue 46): one iteration of a task is one fresh, headless session
 * of a coding agent's own CLI (Claude Code, Codex, …) in the task's working folder, beside the
 * built-in agent (`agent/iteration.ts`). An adapter per CLI says how to start a session and how
 * to read what it streams; `session.ts` runs it and turns its events into the iteration's result.
 */

import type { CliAgentKind } from '../agentKinds';

export { AGENT_KINDS, type AgentKind, type CliAgentKind } from '../agentKinds';

/** How Ralph's signal tools reach the session: `ralph mcp` over stdio, which the CLI starts itself. */
export interface McpLaunch {
  /** The server's name as the CLI sees it (its tools read `mcp__ralph__ralph_complete` in Claude Code). */
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/** Everything an adapter needs to start one session. */
export interface SessionInput {
  /** The task's working folder (its worktree, or the workspace). */
  cwd: string;
  /** The iteration's whole prompt (the same the built-in agent gets, as one text). */
  prompt: string;
  model?: string;
  /** `agent.args` of the config: appended after the adapter's own arguments. */
  extraArgs: readonly string[];
  mcp: McpLaunch;
  /**
   * `ralph hook`'s command line (the event is added: `pre-tool-use`, `pre-compact`), for a CLI with
   * hooks (Claude Code's `PreToolUse`: Ralph's command rules judge the agent's shell commands there;
   * `PreCompact`: the context is full, the session ends).
   */
  hook?: { command: string; args: string[] };
  /** A private folder of this session (outside the task's folder): the adapter may write its config files there. */
  sessionDir: string;
  /** The task's folder may be written; nothing else (the CLI's own permission mode). */
  writableRoots: readonly string[];
  /** The CLI's environment (the surface's, plus `agent.env`): where its own config is found (its `HOME`, …). */
  env?: Readonly<Record<string, string>>;
}

/** How to start the session: arguments, environment additions, what goes to stdin. */
export interface SessionLaunch {
  args: string[];
  env: Record<string, string>;
  /** Written to the CLI's stdin, then closed; undefined closes stdin at once. */
  stdin?: string;
}

/** What a CLI's stream says, in Ralph's words. */
export type AgentCliEvent =
  | { kind: 'session'; id: string; model?: string }
  /** A message of the agent's (its text, whole). */
  | { kind: 'text'; text: string }
  | { kind: 'tool_call'; id: string; name: string; input: unknown }
  | { kind: 'tool_result'; id: string; ok: boolean; output: string }
  /** Tokens (and the CLI's own cost when it reports one) of one model turn: added up by the session. */
  | { kind: 'usage'; inputTokens: number; outputTokens: number; cachedTokens?: number; costUsd?: number }
  /** The session's own total cost, when the CLI reports one at its end (Claude Code's `total_cost_usd`): replaces the sum. */
  | { kind: 'total_cost'; costUsd: number }
  /** The session's end as the CLI reports it: its last message and whether it says it failed. */
  | { kind: 'result'; text: string; isError: boolean; message?: string }
  | { kind: 'error'; message: string }
  /** The CLI retries a failed model call (its own retries): an HTTP status of 401 or 403 ends the session as an auth fault. */
  | { kind: 'retry'; attempt: number; maxRetries: number; delayMs: number; status?: number; message: string };

/** Reads a CLI's stdout, one line at a time. */
export interface StreamParser {
  line(text: string): AgentCliEvent[];
  /** stdout ended. */
  end(): AgentCliEvent[];
}

/** One agent CLI. */
export interface AgentCliAdapter {
  kind: CliAgentKind;
  /** Its name in messages: "Claude Code". */
  label: string;
  /** The executable looked for on PATH when `agent.command` is not set. */
  defaultCommand: string;
  /** How to install it (named when it is missing). */
  install: string;
  /** The npm package it comes from (the test tier installs it pinned). */
  npmPackage: string;
  /** Its API key variables: they reach the CLI from the environment; no key of Ralph's does. */
  keyVariables: readonly string[];
  /** The session's arguments, environment and stdin; may write config files into `input.sessionDir`. */
  /** It calls Ralph's hooks (`SessionInput.hook`): only then does a session write the hook's context and watch for its events. */
  hooks?: boolean;
  /** It reports the session's whole cost at its end (`total_cost`) and no cost per turn: its turns are not priced from `llm.prices`. */
  reportsTotalCost?: boolean;
  launch(input: SessionInput): Promise<SessionLaunch> | SessionLaunch;
  /**
   * The CLI's own login and state folders (made when missing), from the
   * session's environment and the user's home: writable inside Ralph's sandbox (`cliSandbox.ts`),
   * so its login keeps working and it keeps its sessions and caches. One place per CLI.
   */
  stateDirs(env: Readonly<Record<string, string | undefined>>, home: string): string[];
  /** A parser of one session's stdout (the session's folder: where the adapter's launch put its files). */
  createParser(session?: { sessionDir: string }): StreamParser;
}
