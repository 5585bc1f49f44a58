/**
 * The adapter of Google's Gemini CLI (`@google/gemini-cli`, the `gemini` executable, checked against
 * 0.61.0): one iteration is one headless `gemini --output-format stream-json` session, a new session
 * each time, the prompt on stdin (no `-p`: a piped stdin is the prompt), its JSON events on stdout.
 *
 * Gemini CLI reads its settings from `~/.gemini/settings.json` and has no flag for another file (a
 * system settings file must be owned by root). So each session gets a Gemini home of its own
 * (`GEMINI_CLI_HOME`, in the session's private folder) whose `.gemini/` links to every entry of
 * the person's own (their login, `.env`, GEMINI.md, extensions, chats) but `settings.json`, which
 * is theirs with Ralph's additions merged over it: Ralph's signal server (`mcpServers.ralph`,
 * trusted), no auto-update, no usage statistics, no telemetry. The person's files are never written.
 *
 * Permission mode: `--approval-mode yolo` (nothing is ever asked: a headless session cannot answer)
 * with `--skip-trust` for the task's folder; Gemini's file tools stay inside its workspace (the
 * task's folder and the other writable roots, `--include-directories`). Its shell commands run as
 * the person, in the task's folder — inside Ralph's sandbox around the whole CLI on Linux
 * (cliSandbox.ts); Gemini's own sandbox needs Docker or Podman and is not set up. Its
 * temporary folder is the session's own (Gemini CLI writes the report of a failed API call there).
 * It runs as one process (`GEMINI_CLI_NO_RELAUNCH`): Gemini CLI otherwise starts Node a second
 * time, to raise its heap limit to half the memory and to restart after a change made in its UI;
 * a headless session has no UI and Node's default heap holds it, and the second start cost about
 * a third of a short session's CPU. A person's own `GEMINI_CLI_NO_RELAUNCH` (even empty) is kept.
 */

import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AgentCliAdapter, AgentCliEvent, McpLaunch, SessionInput, SessionLaunch, StreamParser } from '../types';
import { clip, jsonObjectOf, num } from './streamValues';

/** The variable that moves Gemini CLI's home (its `.gemini` folder lives under it). */
export const GEMINI_HOME_ENV = 'GEMINI_CLI_HOME';

/** The arguments, environment and stdin of one session; writes its Gemini home into `input.sessionDir`. */
export async function geminiLaunch(input: SessionInput, userHome: string = defaultGeminiHome(input.env)): Promise<SessionLaunch> {
  const home = path.join(input.sessionDir, 'gemini-home');
  await writeGeminiHome(home, userHome, input.mcp);
  const args = ['--output-format', 'stream-json', '--approval-mode', 'yolo', '--skip-trust'];
  const others = input.writableRoots.filter((root) => path.resolve(root) !== path.resolve(input.cwd));
  if (others.length > 0) args.push('--include-directories', others.join(','));
  if (input.model) args.push('--model', input.model);
  args.push(...input.extraArgs);
  // its temporary files (the report of each failed API call, with the request in it) stay private and go with the session
  const tmp = path.join(input.sessionDir, 'tmp');
  await fs.mkdir(tmp, { recursive: true, mode: 0o700 });
  const tmpEnv: Record<string, string> = process.platform === 'win32' ? { TEMP: tmp, TMP: tmp } : { TMPDIR: tmp };
  const oneProcess: Record<string, string> = input.env && NO_RELAUNCH_ENV in input.env ? {} : { [NO_RELAUNCH_ENV]: 'true' };
  return { args, env: { [GEMINI_HOME_ENV]: home, ...tmpEnv, ...oneProcess }, stdin: input.prompt };
}

/** The variable that keeps Gemini CLI in the process it was started in (no relaunch of Node). */
export const NO_RELAUNCH_ENV = 'GEMINI_CLI_NO_RELAUNCH';

/**
 * Where the person's own `.gemini` folder is, as the CLI started with `env` would find it: under
 * `GEMINI_CLI_HOME` when set, else its home (`HOME`; `USERPROFILE` on Windows) — `agent.env` may set
 * either —, else this process's home.
 */
export function defaultGeminiHome(env: Readonly<Record<string, string | undefined>> = process.env): string {
  return env[GEMINI_HOME_ENV] || (process.platform === 'win32' ? env.USERPROFILE : env.HOME) || os.homedir();
}

/** Ralph's settings, merged over the person's (objects key by key; Ralph's values win). */
export function ralphGeminiSettings(mcp: McpLaunch): Record<string, unknown> {
  return {
    mcpServers: { [mcp.name]: { command: mcp.command, args: mcp.args, env: mcp.env, trust: true } },
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
  };
}

/** The session's Gemini home: links to the person's `.gemini` entries, and their settings with Ralph's merged in. */
async function writeGeminiHome(home: string, userHome: string, mcp: McpLaunch): Promise<void> {
  const own = path.join(userHome, '.gemini');
  const dir = path.join(home, '.gemini');
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const entries = await fs.readdir(own).catch(() => [] as string[]);
  for (const entry of entries) {
    if (entry !== 'settings.json') await link(path.join(own, entry), path.join(dir, entry));
  }
  const theirs = await readSettings(path.join(own, 'settings.json'));
  const settings = mergeSettings(theirs, ralphGeminiSettings(mcp));
  await fs.writeFile(path.join(dir, 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o600 });
}

/** A link to the person's entry (on Windows, a junction for a folder and a copy of a file: its symlinks need a privilege). */
async function link(target: string, at: string): Promise<void> {
  if (process.platform !== 'win32') return fs.symlink(target, at);
  const stat = await fs.stat(target).catch(() => undefined);
  if (stat?.isDirectory()) return fs.symlink(target, at, 'junction');
  if (stat?.isFile()) await fs.copyFile(target, at);
}

/** The person's settings (Gemini CLI allows comments in them); none when the file is missing. */
async function readSettings(file: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    return {};
  }
  try {
    const value = JSON.parse(stripJsonComments(text)) as unknown;
    if (isObject(value)) return value;
  } catch {
    // reported below
  }
  throw new Error(`Gemini CLI's settings (${file}) are not a JSON object: fix the file, or Gemini CLI would not read it either`);
}

/** `//` and `/* *\/` comments and trailing commas removed, strings left as they are. */
export function stripJsonComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') {
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      out += '\n';
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else out += c;
  }
  return out.replace(/,(\s*[}\]])/g, '$1');
}

/** `over` merged into `base`: nested objects key by key, anything else replaced. */
export function mergeSettings(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const mine = merged[key];
    merged[key] = isObject(mine) && isObject(value) ? mergeSettings(mine, value) : value;
  }
  return merged;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** What `gemini --output-format stream-json` prints (only the fields read here). */
interface GeminiEvent {
  type?: string;
  session_id?: string;
  model?: string;
  role?: string;
  content?: string;
  delta?: boolean;
  tool_name?: string;
  tool_id?: string;
  parameters?: unknown;
  status?: string;
  output?: string;
  severity?: string;
  message?: string;
  error?: { type?: string; message?: string };
  stats?: GeminiStats;
}

interface GeminiStats {
  input_tokens?: number;
  output_tokens?: number;
  cached?: number;
  models?: Record<string, { input_tokens?: number; output_tokens?: number; cached?: number }>;
}

/**
 * Reads the stream (one JSON event a line); a malformed or unknown line is skipped. The agent's
 * text comes in pieces (`delta`): a message is whole when anything else comes. Gemini CLI reports
 * its tokens once, in the `result` at the session's end.
 */
export function createGeminiParser(): StreamParser {
  let pending = '';
  let lastText = '';
  let lastError: string | undefined;
  let started = false;
  let finished = false;

  /** The message being streamed, now whole. */
  function flush(): AgentCliEvent[] {
    if (!pending.trim()) return [];
    lastText = pending;
    pending = '';
    return [{ kind: 'text', text: lastText }];
  }

  function parse(event: GeminiEvent): AgentCliEvent[] {
    switch (event.type) {
      case 'init':
        started = true;
        return typeof event.session_id === 'string'
          ? [{ kind: 'session', id: event.session_id, ...(typeof event.model === 'string' ? { model: event.model } : {}) }]
          : [];
      case 'message':
        if (event.role !== 'assistant' || typeof event.content !== 'string') return [];
        if (event.delta) {
          pending += event.content;
          return [];
        }
        pending = event.content;
        return flush();
      case 'tool_use':
        return [...flush(), { kind: 'tool_call', id: event.tool_id ?? '', name: event.tool_name ?? '?', input: event.parameters ?? {} }];
      case 'tool_result': {
        const ok = event.status === 'success';
        const output = ok ? (event.output ?? '') : (event.error?.message ?? event.output ?? 'failed');
        return [...flush(), { kind: 'tool_result', id: event.tool_id ?? '', ok, output: clip(output) }];
      }
      case 'error': {
        if (event.severity === 'warning' || typeof event.message !== 'string') return flush();
        lastError = event.message;
        return [...flush(), { kind: 'error', message: event.message }];
      }
      case 'result':
        finished = true;
        return [...flush(), ...usage(event.stats), result(event)];
      default:
        return [];
    }
  }

  function result(event: GeminiEvent): AgentCliEvent {
    if (event.status === 'success') return { kind: 'result', text: lastText, isError: false };
    const message = event.error?.message ?? lastError ?? 'Gemini CLI reported a failed session';
    return { kind: 'result', text: lastText, isError: true, message };
  }

  return {
    line(text: string): AgentCliEvent[] {
      const event = jsonObjectOf(text);
      return event ? parse(event as GeminiEvent) : [];
    },
    end(): AgentCliEvent[] {
      const text = flush();
      if (!started || finished) return text;
      finished = true;
      return [
        ...text,
        { kind: 'result', text: lastText, isError: true, message: lastError ?? 'Gemini CLI stopped before its session ended' },
      ];
    },
  };
}

/** The session's tokens, from the result's stats (its only report of them). */
function usage(stats: GeminiStats | undefined): AgentCliEvent[] {
  if (!stats) return [];
  const input = num(stats.input_tokens);
  const output = num(stats.output_tokens);
  if (input === 0 && output === 0) return [];
  return [{ kind: 'usage', inputTokens: input, outputTokens: output, cachedTokens: num(stats.cached) }];
}

/** Gemini CLI (`gemini --output-format stream-json`). */
export const geminiAdapter: AgentCliAdapter = {
  kind: 'gemini',
  label: 'Gemini CLI',
  defaultCommand: 'gemini',
  install: 'npm install -g @google/gemini-cli',
  npmPackage: '@google/gemini-cli',
  keyVariables: ['GEMINI_API_KEY', 'GOOGLE_API_KEY', 'GOOGLE_APPLICATION_CREDENTIALS'],
  launch: (input) => geminiLaunch(input),
  // the session's Gemini home is in its private folder; its links lead to the person's own `.gemini` (their login)
  stateDirs: (env, home) => [path.join(env[GEMINI_HOME_ENV] || home, '.gemini')],
  createParser: createGeminiParser,
};
