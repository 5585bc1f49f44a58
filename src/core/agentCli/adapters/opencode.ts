/**
 * The OpenCode adapter (`opencode-ai`, the `opencode` executable, checked against 1.18.33): one
 * iteration is one `opencode run --format json` session, headless, a new session each time, the
 * prompt on stdin, its JSON events on stdout (one a line).
 *
 * Ralph's additions reach it through `OPENCODE_CONFIG_CONTENT`, the inline configuration OpenCode
 * merges over the person's own (their providers, models, rules and login stay theirs): Ralph's
 * signal server as a local MCP server, and permission rules that keep the session in the task's
 * folder (`external_directory` denied but for the other writable roots) and never let it wait for
 * an answer (`doom_loop` denied). In `run`, whatever would still ask is refused at once. Its
 * snapshots are off: Ralph's commits and checkpoints are the history of a task.
 * `--title` spares the extra model request OpenCode makes to name a session.
 */

import * as path from 'node:path';
import type { AgentCliAdapter, AgentCliEvent, McpLaunch, SessionInput, SessionLaunch, StreamParser } from '../types';
import { clip, jsonObjectOf, num, text } from './streamValues';

/** The variable OpenCode reads an inline configuration from (merged over the person's own files). */
export const OPENCODE_CONFIG_ENV = 'OPENCODE_CONFIG_CONTENT';

/** The arguments, environment and stdin of one `opencode run` session. */
export function opencodeLaunch(input: SessionInput): SessionLaunch {
  // `--dir` and PWD: OpenCode takes its project folder from PWD, not from the process's working
  // folder; an inherited PWD (the workspace's, in a parallel run) would send it to work there.
  const args = ['run', '--format', 'json', '--title', 'Ralph iteration', '--dir', input.cwd];
  if (input.model) args.push('--model', input.model);
  args.push(...input.extraArgs);
  const env = { [OPENCODE_CONFIG_ENV]: JSON.stringify(opencodeConfig(input)), OPENCODE_DISABLE_AUTOUPDATE: '1', PWD: input.cwd };
  return { args, env, stdin: input.prompt };
}

/** The inline configuration of a session: Ralph's MCP server and the folder it may work in. */
export function opencodeConfig(input: Pick<SessionInput, 'cwd' | 'mcp' | 'writableRoots'>): Record<string, unknown> {
  const external: Record<string, string> = { '*': 'deny' };
  for (const root of input.writableRoots) if (root !== input.cwd) external[`${root.replace(/\/+$/, '')}/**`] = 'allow';
  return {
    permission: { external_directory: external, doom_loop: 'deny' },
    mcp: { [input.mcp.name]: mcpEntry(input.mcp) },
    // OpenCode's own undo history (a shadow git repository of the folder, made at each session's
    // start): Ralph commits every iteration and checkpoints the task, and a headless session is never undone
    snapshot: false,
  };
}

function mcpEntry(mcp: McpLaunch): Record<string, unknown> {
  return { type: 'local', command: [mcp.command, ...mcp.args], environment: mcp.env, enabled: true };
}

/** What `opencode run --format json` prints (only the fields read here). */
interface OpenCodeEvent {
  type?: string;
  sessionID?: string;
  part?: {
    type?: string;
    text?: string;
    tool?: string;
    callID?: string;
    reason?: string;
    state?: { status?: string; input?: unknown; output?: unknown; error?: unknown };
    tokens?: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
    cost?: number;
  };
  error?: { name?: string; message?: string; data?: { message?: string; statusCode?: number } };
}

/** Reads `opencode run --format json`; a malformed or unknown line is skipped. It prints no end event: the stream's end is the result. */
export function createOpenCodeParser(): StreamParser {
  let lastText = '';
  let lastError: string | undefined;
  let session: string | undefined;

  function parse(event: OpenCodeEvent): AgentCliEvent[] {
    const events: AgentCliEvent[] = [];
    if (!session && typeof event.sessionID === 'string') {
      session = event.sessionID;
      events.push({ kind: 'session', id: session });
    }
    const part = event.part ?? {};
    switch (event.type) {
      case 'text':
        if (typeof part.text === 'string' && part.text.trim()) {
          lastText = part.text;
          events.push({ kind: 'text', text: part.text });
        }
        break;
      case 'tool_use': {
        const id = part.callID ?? '';
        const state = part.state ?? {};
        events.push({ kind: 'tool_call', id, name: part.tool ?? '?', input: state.input ?? {} });
        if (state.status === 'completed' || state.status === 'error') {
          const ok = state.status === 'completed';
          events.push({ kind: 'tool_result', id, ok, output: clip(text(ok ? state.output : state.error)) });
        }
        break;
      }
      case 'step_finish':
        events.push(stepUsage(part));
        break;
      case 'error':
        lastError = errorMessage(event.error);
        events.push({ kind: 'error', message: lastError });
        break;
      default:
        break;
    }
    return events;
  }

  return {
    line(line: string): AgentCliEvent[] {
      const event = jsonObjectOf(line);
      return event ? parse(event as OpenCodeEvent) : [];
    },
    end(): AgentCliEvent[] {
      if (!session && lastError === undefined) return [];
      if (lastError !== undefined) return [{ kind: 'result', text: lastText, isError: true, message: lastError }];
      return [{ kind: 'result', text: lastText, isError: false }];
    },
  };
}

/** A step's tokens: OpenCode counts the cached input and the reasoning apart from `input` and `output`. */
function stepUsage(part: NonNullable<OpenCodeEvent['part']>): AgentCliEvent {
  const t = part.tokens ?? {};
  const cached = num(t.cache?.read);
  const usage: AgentCliEvent = {
    kind: 'usage',
    inputTokens: num(t.input) + cached + num(t.cache?.write),
    outputTokens: num(t.output) + num(t.reasoning),
    cachedTokens: cached,
  };
  // a model OpenCode has no price for reports 0: that is no cost figure, and `llm.prices` may price it
  return num(part.cost) > 0 ? { ...usage, costUsd: num(part.cost) } : usage;
}

/** The failure OpenCode reports (an API error carries the provider's message and HTTP status). */
function errorMessage(error: OpenCodeEvent['error']): string {
  const message = error?.data?.message ?? error?.message ?? error?.name ?? 'OpenCode reported an error';
  const status = error?.data?.statusCode;
  return typeof status === 'number' && !message.includes(String(status)) ? `${message} (HTTP ${status})` : message;
}

/** OpenCode (`opencode run`). */
export const opencodeAdapter: AgentCliAdapter = {
  kind: 'opencode',
  label: 'OpenCode',
  defaultCommand: 'opencode',
  install: 'npm install -g opencode-ai',
  npmPackage: 'opencode-ai',
  keyVariables: ['OPENCODE_API_KEY', 'ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
  launch: opencodeLaunch,
  // its login (data), settings, state and cache, each under its XDG folder
  stateDirs: (env, home) => [
    path.join(env.XDG_DATA_HOME || path.join(home, '.local', 'share'), 'opencode'),
    path.join(env.XDG_CONFIG_HOME || path.join(home, '.config'), 'opencode'),
    path.join(env.XDG_STATE_HOME || path.join(home, '.local', 'state'), 'opencode'),
    path.join(env.XDG_CACHE_HOME || path.join(home, '.cache'), 'opencode'),
  ],
  createParser: createOpenCodeParser,
};
