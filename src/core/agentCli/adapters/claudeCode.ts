/**
 * The Claude Code adapter (`@anthropic-ai/claude-code`, the `claude` executable): one headless
 * `claude -p` session per iteration, its prompt on stdin, its progress read from
 * `--output-format stream-json --verbose` (one JSON object a line).
 *
 * Permissions: `--permission-mode acceptEdits` lets the agent edit files inside its working folder
 * without asking, and `--allowedTools` pre-approves Bash and Ralph's MCP tools. Anything else that
 * would ask (an edit outside the folder, a web fetch) is refused at once in `-p` mode, never left
 * waiting for an answer. `--strict-mcp-config` keeps the user's other MCP servers out of the session.
 */

import { mkdir, writeFile } from 'node:fs/promises';
import * as path from 'node:path';

import type { AgentCliAdapter, AgentCliEvent, SessionInput, SessionLaunch, StreamParser } from '../types';

/** Tool output longer than this (characters) is cut in `tool_result` events. */
export const CLAUDE_TOOL_OUTPUT_LIMIT = 4000;

/** The file the session's MCP configuration is written to, inside `sessionDir`. */
export const CLAUDE_MCP_CONFIG_FILE = 'mcp.json';

/** The Claude Code adapter. */
export const claudeCodeAdapter: AgentCliAdapter = {
  kind: 'claude-code',
  label: 'Claude Code',
  defaultCommand: 'claude',
  install: 'npm install -g @anthropic-ai/claude-code',
  npmPackage: '@anthropic-ai/claude-code',
  keyVariables: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
  reportsTotalCost: true,
  hooks: true,
  launch: launchClaudeCode,
  // its settings, login (`.credentials.json`) and sessions. `~/.claude.json` stays readable, not written: Claude Code
  // replaces it by a rename in the home folder, which stays read-only (a headless session runs on without it)
  stateDirs: (env, home) => [env.CLAUDE_CONFIG_DIR || path.join(home, '.claude')],
  createParser: () => new ClaudeStreamParser(),
};

/** Writes the session's MCP configuration and returns the `claude -p` arguments, environment and prompt. */
export async function launchClaudeCode(input: SessionInput): Promise<SessionLaunch> {
  await mkdir(input.sessionDir, { recursive: true });
  const mcpFile = path.join(input.sessionDir, CLAUDE_MCP_CONFIG_FILE);
  const { name, command, args, env } = input.mcp;
  const config = { mcpServers: { [name]: { type: 'stdio', command, args, env } } };
  await writeFile(mcpFile, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

  // The `--flag=value` forms: these options are variadic, and a separate value would let a later
  // positional argument (from `agent.args`) be read as one more of their values.
  const launchArgs = [
    '-p',
    '--output-format',
    'stream-json',
    '--verbose',
    '--permission-mode',
    'acceptEdits',
    `--allowedTools=${['Bash', `mcp__${name}__*`].join(',')}`,
    `--mcp-config=${mcpFile}`,
    '--strict-mcp-config',
  ];
  if (input.hook) launchArgs.push(`--settings=${await writeHookSettings(input.sessionDir, input.hook)}`);
  if (input.model) launchArgs.push('--model', input.model);
  launchArgs.push(...input.extraArgs);
  // No self-update in the middle of a loop; everything else (telemetry, the user's settings) is the user's.
  return { args: launchArgs, env: { DISABLE_AUTOUPDATER: '1' }, stdin: input.prompt };
}

/** The tools whose calls Ralph's hook judges: the shell, and the file tools (nothing under `.ralph/` but the task's notes). */
export const CLAUDE_HOOKED_TOOLS = 'Bash|Write|Edit|MultiEdit|NotebookEdit';

/** Claude Code settings with Ralph's `PreToolUse` hook (its exit 2 blocks the call; the agent reads why). */
async function writeHookSettings(dir: string, hook: { command: string; args: string[] }): Promise<string> {
  const file = path.join(dir, 'settings.json');
  const line = (event: string) => [hook.command, ...hook.args, event].map(shellQuote).join(' ');
  const settings = {
    hooks: {
      PreToolUse: [{ matcher: CLAUDE_HOOKED_TOOLS, hooks: [{ type: 'command', command: line('pre-tool-use'), timeout: 60 }] }],
      // the context is full: the session ends there, and the next iteration starts fresh (seed 002)
      PreCompact: [{ hooks: [{ type: 'command', command: line('pre-compact'), timeout: 30 }] }],
    },
  };
  await writeFile(file, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
  return file;
}

/** One word for the shell Claude Code runs a hook's command in. */
function shellQuote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

interface Counts {
  input: number;
  output: number;
  cached: number;
}

/**
 * Reads Claude Code's stream-json. Token counts: an assistant line carries the usage of its API
 * message as it stood when the line was written (the output count is often still 1, as in
 * `message_start`), and one API message with several content blocks comes as several lines with
 * the same id; so each id counts once (growth of its output count is added), and the `result`
 * line's totals add whatever the lines left out.
 */
export class ClaudeStreamParser implements StreamParser {
  private readonly perMessage = new Map<string, Counts>();
  private readonly sum: Counts = { input: 0, output: 0, cached: 0 };
  private sawResult = false;

  line(text: string): AgentCliEvent[] {
    const trimmed = text.trim();
    if (!trimmed) return [];
    let value: unknown;
    try {
      value = JSON.parse(trimmed);
    } catch {
      return /error/i.test(trimmed) ? [{ kind: 'error', message: trimmed.slice(0, 500) }] : [];
    }
    if (!isObject(value)) return [];
    try {
      switch (value.type) {
        case 'system':
          if (value.subtype === 'api_retry') return [apiRetry(value)];
          return value.subtype === 'init' && typeof value.session_id === 'string'
            ? [{ kind: 'session', id: value.session_id, ...(typeof value.model === 'string' ? { model: value.model } : {}) }]
            : [];
        case 'assistant':
          return this.assistant(value);
        case 'user':
          return toolResults(value);
        case 'result':
          return this.result(value);
        default:
          return [];
      }
    } catch {
      return []; // a shape we did not expect: never a throw
    }
  }

  end(): AgentCliEvent[] {
    return this.sawResult ? [] : [{ kind: 'error', message: 'Claude Code stopped without reporting a result' }];
  }

  private assistant(value: Record<string, unknown>): AgentCliEvent[] {
    const message = isObject(value.message) ? value.message : {};
    const blocks = Array.isArray(message.content) ? message.content.filter(isObject) : [];
    const texts = blocks.filter((b) => b.type === 'text' && typeof b.text === 'string').map((b) => b.text as string);
    // Claude Code reports a failed API call as a made-up assistant message ("API Error: 500 …").
    if (value.is_api_error_message === true || message.model === '<synthetic>') {
      const status = typeof value.api_error_status === 'number' ? ` ${value.api_error_status}` : '';
      return texts.length || status ? [{ kind: 'error', message: texts.join('\n') || `API error${status}` }] : [];
    }
    const events: AgentCliEvent[] = texts.filter((t) => t.trim()).map((t) => ({ kind: 'text', text: t }));
    for (const block of blocks) {
      if (block.type !== 'tool_use' || typeof block.name !== 'string') continue;
      events.push({ kind: 'tool_call', id: String(block.id ?? ''), name: block.name, input: block.input ?? {} });
    }
    const usage = this.messageUsage(typeof message.id === 'string' ? message.id : undefined, message.usage);
    if (usage) events.push(usage);
    return events;
  }

  /** The usage of one API message, counted once per id (only growth after its first line). */
  private messageUsage(id: string | undefined, raw: unknown): AgentCliEvent | undefined {
    const counts = readCounts(raw);
    if (!counts) return undefined;
    const before = (id && this.perMessage.get(id)) || { input: 0, output: 0, cached: 0 };
    const delta = {
      input: Math.max(0, counts.input - before.input),
      output: Math.max(0, counts.output - before.output),
      cached: Math.max(0, counts.cached - before.cached),
    };
    if (id) this.perMessage.set(id, maxCounts(before, counts));
    return this.usageEvent(delta);
  }

  private usageEvent(delta: Counts): AgentCliEvent | undefined {
    if (delta.input === 0 && delta.output === 0 && delta.cached === 0) return undefined;
    this.sum.input += delta.input;
    this.sum.output += delta.output;
    this.sum.cached += delta.cached;
    return {
      kind: 'usage',
      inputTokens: delta.input,
      outputTokens: delta.output,
      ...(delta.cached ? { cachedTokens: delta.cached } : {}),
    };
  }

  private result(value: Record<string, unknown>): AgentCliEvent[] {
    this.sawResult = true;
    const events: AgentCliEvent[] = [];
    const totals = readCounts(value.usage);
    if (totals) {
      const rest = this.usageEvent({
        input: Math.max(0, totals.input - this.sum.input),
        output: Math.max(0, totals.output - this.sum.output),
        cached: Math.max(0, totals.cached - this.sum.cached),
      });
      if (rest) events.push(rest);
    }
    const cost = value.total_cost_usd;
    if (typeof cost === 'number' && Number.isFinite(cost) && cost >= 0) events.push({ kind: 'total_cost', costUsd: cost });
    const subtype = typeof value.subtype === 'string' ? value.subtype : undefined;
    const isError = value.is_error === true || (subtype !== undefined && subtype !== 'success');
    const text = typeof value.result === 'string' ? value.result : '';
    events.push({ kind: 'result', text, isError, ...(isError ? { message: resultMessage(value, subtype, text) } : {}) });
    return events;
  }
}

/** Why a result is an error, in one line: its subtype or end reason, the API status, its errors. */
function resultMessage(value: Record<string, unknown>, subtype: string | undefined, text: string): string {
  const parts: string[] = [];
  if (typeof value.api_error_status === 'number') parts.push(`API error ${value.api_error_status}`);
  const reason = typeof value.terminal_reason === 'string' ? value.terminal_reason : undefined;
  if (subtype && subtype !== 'success') parts.push(subtype);
  else if (reason && reason !== 'completed' && reason !== 'api_error') parts.push(reason);
  const errors = Array.isArray(value.errors) ? value.errors.filter((e) => typeof e === 'string') : [];
  if (errors.length) parts.push(errors.join('; '));
  else if (text) parts.push(text.slice(0, 500));
  return parts.join(': ') || 'Claude Code reported an error';
}

/** A `system/api_retry` line: Claude Code retries a failed API call (a 401 too, for minutes, by default). */
function apiRetry(value: Record<string, unknown>): AgentCliEvent {
  const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  const status = typeof value.error_status === 'number' ? value.error_status : undefined;
  const error = typeof value.error === 'string' ? value.error : 'API error';
  return {
    kind: 'retry',
    attempt: num(value.attempt),
    maxRetries: num(value.max_retries),
    delayMs: num(value.retry_delay_ms),
    ...(status !== undefined ? { status } : {}),
    message: `${error}${status !== undefined ? ` (HTTP ${status})` : ''}`,
  };
}

/** `tool_result` blocks of a user line (the CLI's answers to the agent's tool calls). */
function toolResults(value: Record<string, unknown>): AgentCliEvent[] {
  const message = isObject(value.message) ? value.message : {};
  if (!Array.isArray(message.content)) return [];
  return message.content
    .filter(isObject)
    .filter((b) => b.type === 'tool_result')
    .map((b) => ({
      kind: 'tool_result',
      id: String(b.tool_use_id ?? ''),
      ok: b.is_error !== true,
      output: truncate(contentText(b.content)),
    }));
}

/** A tool result's content as text: a string, or its text blocks (an image reads `[image]`). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter(isObject)
    .map((part) => (typeof part.text === 'string' ? part.text : part.type === 'image' ? '[image]' : ''))
    .join('\n');
}

function truncate(text: string): string {
  if (text.length <= CLAUDE_TOOL_OUTPUT_LIMIT) return text;
  return `${text.slice(0, CLAUDE_TOOL_OUTPUT_LIMIT)}\n… [${text.length - CLAUDE_TOOL_OUTPUT_LIMIT} more characters]`;
}

/**
 * Anthropic usage as Ralph counts it: `input_tokens` leaves out the prompt tokens read from or
 * written to the cache, so the prompt is all three, and the cache reads are its cached part.
 */
function readCounts(raw: unknown): Counts | undefined {
  if (!isObject(raw)) return undefined;
  const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
  const cached = n(raw.cache_read_input_tokens);
  return { input: n(raw.input_tokens) + cached + n(raw.cache_creation_input_tokens), output: n(raw.output_tokens), cached };
}

function maxCounts(a: Counts, b: Counts): Counts {
  return { input: Math.max(a.input, b.input), output: Math.max(a.output, b.output), cached: Math.max(a.cached, b.cached) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
