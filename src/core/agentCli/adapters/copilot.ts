/**
 * The GitHub Copilot CLI adapter (`@github/copilot`, the `copilot` executable, checked against
 * 1.0.102): one iteration is one non-interactive session, `copilot --output-format json`, the
 * prompt on stdin, its session events on stdout (JSON, one a line), a new session each time.
 *
 * Permissions: `--allow-all-tools` (a headless session cannot answer a prompt: whatever would ask
 * is refused at once) with Copilot's own path check left on — its file tools and the paths its
 * shell commands name stay in the task's folder and the other writable roots (`--add-dir`), not
 * even the temporary folder (`--disallow-temp-dir`); every URL denied (`url` covers its shell's and
 * its web tools'), `git push` denied (Ralph lands the work), the built-in GitHub MCP servers off,
 * no question to a user (`--no-ask-user`). Ralph's signal server is added for the session only
 * (`--additional-mcp-config`); the person's login, settings and MCP servers stay theirs.
 *
 * Its JSON stream carries no tokens (Copilot leaves `assistant.usage` out of it): the session's
 * totals per model come from `--usage-output-file`, read when the stream ends.
 */

import { promises as fs, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { AgentCliAdapter, AgentCliEvent, McpLaunch, SessionInput, SessionLaunch, StreamParser } from '../types';
import { clip, jsonObjectOf, num, str, text } from './streamValues';

/** Copilot's retries of a failed model call (its message says "retried 5 times"). */
const COPILOT_MAX_RETRIES = 5;

/** The session's files in its private folder: Ralph's MCP server, the usage totals, Copilot's logs. */
export function copilotFiles(sessionDir: string): { mcpConfig: string; usage: string; logs: string } {
  return {
    mcpConfig: path.join(sessionDir, 'copilot-mcp.json'),
    usage: path.join(sessionDir, 'copilot-usage.json'),
    logs: path.join(sessionDir, 'copilot-logs'),
  };
}

/** The arguments of one session (no file written). */
export function copilotArgs(input: SessionInput): string[] {
  const files = copilotFiles(input.sessionDir);
  const args = ['--output-format', 'json', '--allow-all-tools', '--disallow-temp-dir'];
  for (const root of input.writableRoots) if (root !== input.cwd) args.push('--add-dir', root);
  args.push('--deny-tool=url', '--deny-tool=shell(git push)', '--disable-builtin-mcps', '--no-ask-user', '--no-auto-update');
  args.push('--additional-mcp-config', `@${files.mcpConfig}`, '--usage-output-file', files.usage, '--log-dir', files.logs);
  if (input.model) args.push('--model', input.model);
  args.push(...input.extraArgs);
  return args;
}

/** Ralph's signal server as a Copilot MCP configuration (a `local` stdio server, all its tools). */
export function copilotMcpConfig(mcp: McpLaunch): Record<string, unknown> {
  return { mcpServers: { [mcp.name]: { type: 'local', command: mcp.command, args: mcp.args, env: mcp.env, tools: ['*'] } } };
}

/** The arguments, environment and stdin of one session; writes its MCP configuration into the session's folder. */
export async function copilotLaunch(input: SessionInput): Promise<SessionLaunch> {
  await fs.writeFile(copilotFiles(input.sessionDir).mcpConfig, JSON.stringify(copilotMcpConfig(input.mcp)), { mode: 0o600 });
  return { args: copilotArgs(input), env: { COPILOT_AUTO_UPDATE: 'false' }, stdin: input.prompt };
}

/** What `copilot --output-format json` prints (only the fields read here). */
interface CopilotEvent {
  type?: string;
  sessionId?: string;
  exitCode?: number;
  data?: {
    model?: string;
    content?: string;
    parentToolCallId?: string;
    toolCallId?: string;
    toolName?: string;
    arguments?: unknown;
    success?: boolean;
    result?: { content?: unknown };
    error?: { message?: string; code?: string };
    statusCode?: number;
    retryAttempt?: number;
    errorMessage?: string;
    message?: string;
  };
}

/** `--usage-output-file`'s totals per model (only the fields read here). */
interface CopilotUsageFile {
  modelMetrics?: Record<string, { usage?: { inputTokens?: number; outputTokens?: number; cacheReadTokens?: number } }>;
}

/**
 * Reads `copilot --output-format json`; a malformed or unknown line is skipped. Its `result` line
 * ends the session (with its id and exit code); the usage file, when the session has one, is read
 * at the stream's end.
 */
export function createCopilotParser(session?: { sessionDir: string }): StreamParser {
  let lastText = '';
  let lastError: string | undefined;
  let model: string | undefined;
  let lastFailure: Extract<AgentCliEvent, { kind: 'retry' }> | undefined;
  let ended = false;

  function parse(event: CopilotEvent): AgentCliEvent[] {
    const data = event.data ?? {};
    switch (event.type) {
      case 'session.tools_updated':
        if (typeof data.model === 'string') model ??= data.model;
        return [];
      case 'assistant.message':
        if (typeof data.model === 'string') model = data.model;
        // a sub-agent's message is not the session's last word
        if (typeof data.content !== 'string' || !data.content.trim() || data.parentToolCallId) return [];
        lastText = data.content;
        return [{ kind: 'text', text: data.content }];
      case 'tool.execution_start':
        return [{ kind: 'tool_call', id: str(data.toolCallId), name: data.toolName ?? '?', input: data.arguments ?? {} }];
      case 'tool.execution_complete': {
        const ok = data.success === true;
        const output = ok ? text(data.result?.content) : (data.error?.message ?? text(data.result?.content));
        return [{ kind: 'tool_result', id: str(data.toolCallId), ok, output: clip(output) }];
      }
      case 'model.call_failure': {
        // a refused key ends the session at its first refusal; another failure counts once Copilot retries it
        lastFailure = failure(data);
        return lastFailure.status === 401 || lastFailure.status === 403 ? [lastFailure] : [];
      }
      case 'assistant.turn_retry':
        return lastFailure && lastFailure.status !== 401 && lastFailure.status !== 403 ? [lastFailure] : [];
      case 'session.error':
        lastError = data.message ?? 'Copilot reported an error';
        return [{ kind: 'error', message: lastError }];
      case 'result': {
        ended = true;
        const events: AgentCliEvent[] = [];
        if (typeof event.sessionId === 'string') events.push({ kind: 'session', id: event.sessionId, ...(model ? { model } : {}) });
        const isError = (typeof event.exitCode === 'number' && event.exitCode !== 0) || lastError !== undefined;
        events.push({ kind: 'result', text: lastText, isError, ...(lastError !== undefined ? { message: lastError } : {}) });
        return events;
      }
      default:
        return [];
    }
  }

  return {
    line(line: string): AgentCliEvent[] {
      const event = jsonObjectOf(line);
      return event ? parse(event as CopilotEvent) : [];
    },
    end(): AgentCliEvent[] {
      if (!session) return [];
      const files = copilotFiles(session.sessionDir);
      // a session that stopped before its result line says why only in its log (its stdout and stderr stay empty)
      const why = ended ? undefined : logErrors(files.logs);
      return [...(why ? [{ kind: 'error' as const, message: `its log says: ${why}` }] : []), ...usageOf(files.usage)];
    },
  };
}

/** The last `[ERROR]` lines of Copilot's logs in `dir` (at most two, joined), or undefined. */
export function logErrors(dir: string): string | undefined {
  let lines: string[] = [];
  try {
    for (const name of readdirSync(dir)
      .filter((n) => n.endsWith('.log'))
      .sort())
      lines.push(...readFileSync(path.join(dir, name), 'utf8').split('\n'));
  } catch {
    return undefined;
  }
  lines = lines.map((l) => /\[ERROR\] (.*\S)/.exec(l)?.[1]).filter((l): l is string => !!l);
  return lines.length ? [...new Set(lines)].slice(-2).join('; ') : undefined;
}

/** A failed model call (Copilot retries it): its HTTP status, so that a refused key ends the session at once. */
function failure(data: NonNullable<CopilotEvent['data']>): Extract<AgentCliEvent, { kind: 'retry' }> {
  const status = typeof data.statusCode === 'number' ? data.statusCode : undefined;
  let message = data.errorMessage ?? 'the model call failed';
  try {
    const parsed = JSON.parse(message) as { message?: unknown };
    if (typeof parsed?.message === 'string') message = parsed.message;
  } catch {
    // not JSON: the message as it is
  }
  if (status !== undefined && !message.includes(String(status))) message = `${message} (HTTP ${status})`;
  const attempt = (typeof data.retryAttempt === 'number' ? data.retryAttempt : 0) + 1;
  return { kind: 'retry', attempt, maxRetries: COPILOT_MAX_RETRIES, delayMs: 0, ...(status !== undefined ? { status } : {}), message };
}

/** The session's tokens per model from the usage file; none when it is missing or unreadable (a killed session). */
export function usageOf(file: string): AgentCliEvent[] {
  let parsed: CopilotUsageFile;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8')) as CopilotUsageFile;
  } catch {
    return [];
  }
  const metrics = parsed && typeof parsed.modelMetrics === 'object' && parsed.modelMetrics ? parsed.modelMetrics : {};
  return Object.values(metrics).flatMap((m): AgentCliEvent[] => {
    const u = m?.usage ?? {};
    const input = num(u.inputTokens);
    const output = num(u.outputTokens);
    if (input === 0 && output === 0) return [];
    return [{ kind: 'usage', inputTokens: input, outputTokens: output, cachedTokens: num(u.cacheReadTokens) }];
  });
}

/** GitHub Copilot CLI (`copilot`). */
export const copilotAdapter: AgentCliAdapter = {
  kind: 'copilot',
  label: 'Copilot CLI',
  defaultCommand: 'copilot',
  install: 'npm install -g @github/copilot',
  npmPackage: '@github/copilot',
  keyVariables: ['COPILOT_GITHUB_TOKEN', 'GH_TOKEN', 'GITHUB_TOKEN', 'COPILOT_PROVIDER_API_KEY', 'COPILOT_PROVIDER_BEARER_TOKEN'],
  launch: copilotLaunch,
  // its login, settings and sessions (`~/.copilot` — under HOME even where XDG_CONFIG_HOME is set, as
  // in the editor's extension host), and the package it unpacks into its cache on first start
  stateDirs: (env, home) => [
    env.COPILOT_HOME || path.join(home, '.copilot'),
    path.join(env.XDG_CACHE_HOME || path.join(home, '.cache'), 'copilot'),
  ],
  createParser: createCopilotParser,
};
