/**
 * The adapter of OpenAI's Codex CLI (`@openai/codex`, checked against 0.171.0): one iteration is
 * one `codex exec --json` session, headless, the prompt on stdin, its JSONL events on stdout.
 *
 * Its sandbox stays Codex's own `workspace-write` (bubblewrap on Linux: the task's folder and the
 * temporary folders are writable, the rest of the disk is read-only, the network is off), with
 * approvals never asked: a command the sandbox refuses fails and the model sees the failure.
 * On Linux Ralph's sandbox wraps the whole CLI as well (cliSandbox.ts): Codex's bubblewrap nests
 * inside Ralph's, so its commands are confined by both.
 * Ralph's signal server reaches it through `-c mcp_servers.<name>.…` overrides, so the user's own
 * `~/.codex/config.toml` and login stay untouched; its tools are approved up front, since
 * `exec` refuses any MCP call that would need an approval.
 */

import * as path from 'node:path';
import type { AgentCliAdapter, AgentCliEvent, McpLaunch, SessionInput, SessionLaunch, StreamParser } from '../types';
import { jsonObjectOf, num } from './streamValues';

/** The arguments and stdin of one `codex exec` session. */
export function codexLaunch(input: SessionInput): SessionLaunch {
  const args = ['exec', '--json', '--skip-git-repo-check', '--sandbox', 'workspace-write', '-C', input.cwd];
  args.push('-c', 'approval_policy="never"');
  for (const root of input.writableRoots) if (root !== input.cwd) args.push('--add-dir', root);
  if (input.model) args.push('--model', input.model);
  args.push(...mcpOverrides(input.mcp));
  args.push(...input.extraArgs);
  // `-` reads the prompt from stdin: no length limit, and it never shows in the process list.
  args.push('-');
  return { args, env: {}, stdin: input.prompt };
}

/** `-c` overrides that declare one stdio MCP server, its tools approved (TOML values). */
export function mcpOverrides(mcp: McpLaunch): string[] {
  const name = mcp.name.replace(/[^A-Za-z0-9_-]/g, '_');
  const key = `mcp_servers.${name}`;
  const env = Object.entries(mcp.env)
    .map(([k, v]) => `${tomlKey(k)}=${tomlString(v)}`)
    .join(',');
  return [
    '-c',
    `${key}.command=${tomlString(mcp.command)}`,
    '-c',
    `${key}.args=[${mcp.args.map(tomlString).join(',')}]`,
    '-c',
    `${key}.env={${env}}`,
    '-c',
    `${key}.default_tools_approval_mode="approve"`,
    // the session waits for Ralph's server before its first turn: under load Codex otherwise sent
    // its first request without the signal tools (the real-repository tier saw it 3 times in 3)
    '-c',
    `${key}.required=true`,
  ];
}

/**
 * A TOML basic string. JSON's string escapes (`\"`, `\\`, `\n`, `\uXXXX`…) are all valid TOML,
 * except a lone surrogate, which no TOML string can hold: it becomes U+FFFD.
 */
export function tomlString(value: string): string {
  return JSON.stringify(value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD'));
}

function tomlKey(key: string): string {
  return /^[A-Za-z0-9_-]+$/.test(key) ? key : tomlString(key);
}

/** What Codex's `exec --json` items look like (only the fields read here). */
interface CodexItem {
  id?: string;
  type?: string;
  text?: string;
  message?: string;
  command?: string;
  aggregated_output?: string;
  exit_code?: number | null;
  status?: string;
  changes?: { path?: string; kind?: string }[];
  server?: string;
  tool?: string;
  arguments?: unknown;
  result?: { content?: { type?: string; text?: string }[]; structured_content?: unknown } | null;
  error?: { message?: string } | null;
  query?: string;
}

interface CodexEvent {
  type?: string;
  thread_id?: string;
  item?: CodexItem;
  usage?: { input_tokens?: number; cached_input_tokens?: number; output_tokens?: number; reasoning_output_tokens?: number };
  error?: { message?: string };
  message?: string;
}

/** Reads `codex exec --json` (one JSON event a line); a malformed or unknown line is skipped. */
export function createCodexParser(): StreamParser {
  let lastText = '';
  let lastError: string | undefined;
  let started = false;
  let finished = false;
  const called = new Set<string>();

  function item(event: CodexEvent, done: boolean): AgentCliEvent[] {
    const it = event.item;
    if (!it || typeof it.type !== 'string') return [];
    const id = it.id ?? '';
    if (it.type === 'agent_message') {
      if (!done || typeof it.text !== 'string') return [];
      lastText = it.text;
      return [{ kind: 'text', text: it.text }];
    }
    const call = toolCall(it);
    if (!call) return [];
    const events: AgentCliEvent[] = [];
    if (!called.has(id)) {
      called.add(id);
      events.push({ kind: 'tool_call', id, name: call.name, input: call.input });
    }
    if (done) events.push({ kind: 'tool_result', id, ok: toolOk(it), output: toolOutput(it) });
    return events;
  }

  function parse(event: CodexEvent): AgentCliEvent[] {
    switch (event.type) {
      case 'thread.started':
        started = true;
        return typeof event.thread_id === 'string' ? [{ kind: 'session', id: event.thread_id }] : [];
      case 'item.started':
        return item(event, false);
      case 'item.completed':
        return item(event, true);
      case 'turn.completed':
        finished = true;
        return [turnUsage(event), { kind: 'result', text: lastText, isError: false }];
      case 'turn.failed': {
        finished = true;
        const message = event.error?.message ?? lastError ?? 'Codex reported a failed turn';
        const events: AgentCliEvent[] = message === lastError ? [] : [{ kind: 'error', message }];
        return [...events, { kind: 'result', text: lastText, isError: true, message }];
      }
      case 'error': {
        // "Reconnecting... 2/5 (…)" and "Reconnecting... waiting for network" are retries, not the end.
        if (typeof event.message !== 'string' || event.message.startsWith('Reconnecting...')) return [];
        lastError = event.message;
        return [{ kind: 'error', message: event.message }];
      }
      default:
        return [];
    }
  }

  return {
    line(text: string): AgentCliEvent[] {
      const event = jsonObjectOf(text);
      return event ? parse(event as CodexEvent) : [];
    },
    end(): AgentCliEvent[] {
      if (!started || finished) return [];
      finished = true;
      const message = lastError ?? 'Codex stopped before its turn ended';
      return [{ kind: 'result', text: lastText, isError: true, message }];
    },
  };
}

/** A turn's tokens, summed over its requests by Codex. */
function turnUsage(event: CodexEvent): AgentCliEvent {
  const u = event.usage ?? {};
  return { kind: 'usage', inputTokens: num(u.input_tokens), outputTokens: num(u.output_tokens), cachedTokens: num(u.cached_input_tokens) };
}

/** The tool call an item stands for: its name as Ralph shows it and its input. */
function toolCall(it: CodexItem): { name: string; input: unknown } | undefined {
  switch (it.type) {
    case 'command_execution':
      return { name: 'shell', input: { command: it.command ?? '' } };
    case 'file_change':
      return { name: 'apply_patch', input: { changes: it.changes ?? [] } };
    case 'mcp_tool_call':
      return { name: `mcp__${it.server ?? '?'}__${it.tool ?? '?'}`, input: it.arguments ?? {} };
    case 'web_search':
      return { name: 'web_search', input: { query: it.query ?? '' } };
    default:
      // agent_message, reasoning, todo_list, and `error` items (warnings such as unknown model metadata).
      return undefined;
  }
}

function toolOk(it: CodexItem): boolean {
  if (it.type === 'command_execution') return it.exit_code === 0 && it.status !== 'failed';
  if (it.type === 'mcp_tool_call') return !it.error && it.status !== 'failed';
  return it.status !== 'failed';
}

function toolOutput(it: CodexItem): string {
  switch (it.type) {
    case 'command_execution': {
      const code = typeof it.exit_code === 'number' ? `exit code ${it.exit_code}` : (it.status ?? '');
      return `${it.aggregated_output ?? ''}${it.aggregated_output ? '\n' : ''}(${code})`;
    }
    case 'file_change':
      return (
        (it.changes ?? []).map((c) => `${c.kind ?? 'change'} ${c.path ?? '?'}`).join('\n') + (it.status === 'failed' ? '\n(failed)' : '')
      );
    case 'mcp_tool_call':
      if (it.error) return it.error.message ?? 'failed';
      return (it.result?.content ?? [])
        .map((part) => (part.type === 'text' && typeof part.text === 'string' ? part.text : JSON.stringify(part)))
        .join('\n');
    default:
      return it.status ?? '';
  }
}

/** Codex CLI (`codex exec`). */
export const codexAdapter: AgentCliAdapter = {
  kind: 'codex',
  label: 'Codex',
  defaultCommand: 'codex',
  install: 'npm install -g @openai/codex',
  npmPackage: '@openai/codex',
  keyVariables: ['CODEX_API_KEY', 'OPENAI_API_KEY'],
  launch: codexLaunch,
  stateDirs: (env, home) => [env.CODEX_HOME || path.join(home, '.codex')],
  createParser: createCodexParser,
};
