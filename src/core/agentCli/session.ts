import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createInterface } from 'node:readline';
import type { ModelFaultKind } from '../errors';
import type { RalphEventBody } from '../events';
import type { IterationRunResult } from '../agent/iteration';
import { COMMAND_MARKER_ENV, killProcessTree } from '../commands/processTree';
import { addUsage, type TokenUsage, ZERO_USAGE } from '../llm/types';
import { parseSignals } from '../signals/parser';
import type { Signal } from '../signals/types';
import { sandboxedCommand } from './cliSandbox';
import { HOOK_CONTEXT_ENV, HOOK_STOP_FILE, type HookContext, type HookQuestion, readHookQuestions, stopHooks } from './hookGate';
import { readSignalFile, SIGNAL_FILE_ENV } from './signalFile';
import type { AgentCliAdapter, AgentCliEvent, McpLaunch } from './types';

/** How one session of an agent CLI is run, and what it reports to. */
export interface AgentSessionOptions {
  adapter: AgentCliAdapter;
  /** The CLI's executable, resolved. */
  command: string;
  cwd: string;
  prompt: string;
  model?: string;
  extraArgs: readonly string[];
  /** The whole environment of the CLI's process (the surface's, less Ralph's own secrets, plus `agent.env`). */
  env: Record<string, string>;
  /** How `ralph mcp` is started (the signal file is added here). */
  mcp: Omit<McpLaunch, 'name'>;
  /** `ralph hook` (the event added per hook), and what it judges by (the session writes its context file). */
  hook?: { command: string; args: string[]; context: Omit<HookContext, 'questionsFile' | 'eventsFile'> };
  writableRoots: readonly string[];
  /** Ralph's sandbox around the CLI's whole process (bubblewrap's executable), and the task's notes it may write. */
  sandbox?: { bwrap: string; progressFile?: string; links?: readonly string[] };
  taskId: string;
  iteration: number;
  /** Stop, the task's time limit: ends the CLI's whole process tree. */
  signal: AbortSignal;
  emit(body: RalphEventBody): void;
  /** Each turn's tokens as the CLI reports them; throwing (a budget reached) ends the session. */
  onUsage?(model: string, usage: TokenUsage): void;
  /** The session's total cost as the CLI reports it at its end, beyond its turns. */
  onTotalCost?(model: string, totalUsd: number): void;
  /** Between SIGTERM and SIGKILL of the CLI's process tree. */
  killGraceMs?: number;
}

/** The iteration's result, with what only an agent CLI's session has. */
export interface AgentSessionResult extends IterationRunResult {
  sessionId?: string;
  /** The model the CLI said it used. */
  model?: string;
  exitCode: number | null;
  /** Commands Ralph's hook kept for a person (they need an approval nobody could give in the session). */
  questions?: HookQuestion[];
}

const STDERR_TAIL = 4_000;

/**
 * One iteration through an agent CLI: a fresh headless session in the task's folder, its stream
 * read into Ralph's events (tool calls and results, usage, signals), its whole process tree ended
 * when it finishes, is stopped, or reaches the task's limit. Never throws for the CLI's trouble:
 * a crash, a non-zero exit or a silent session is the iteration's `error`.
 */
export async function runAgentSession(options: AgentSessionOptions): Promise<AgentSessionResult> {
  const sessionDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-agent-'));
  try {
    return await new AgentSession(options, sessionDir).run();
  } finally {
    await fs.rm(sessionDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

class AgentSession {
  private readonly result: AgentSessionResult = {
    signals: [],
    finalText: '',
    usage: ZERO_USAGE,
    steps: 0,
    stepLimitHit: false,
    toolCalls: 0,
    toolErrors: 0,
    stopped: false,
    exitCode: null,
  };
  private readonly calls = new Map<string, { name: string; started: number }>();
  private reported?: { text: string; isError: boolean; message?: string };
  private streamErrors: string[] = [];
  private stderr = '';
  private budgetError?: string;
  private authError?: string;
  private events = 0;
  /** The cost of the turns as reported per turn (what a reported total adds to). */
  private turnsUsd = 0;

  constructor(
    private readonly o: AgentSessionOptions,
    private readonly sessionDir: string,
  ) {}

  async run(): Promise<AgentSessionResult> {
    const { o } = this;
    const signalFile = path.join(this.sessionDir, 'signals.ndjson');
    const hookEnv = await this.writeHookContext();
    const launch = await o.adapter.launch({
      cwd: o.cwd,
      prompt: o.prompt,
      model: o.model,
      extraArgs: o.extraArgs,
      mcp: { name: 'ralph', command: o.mcp.command, args: o.mcp.args, env: { ...o.mcp.env, [SIGNAL_FILE_ENV]: signalFile } },
      ...(o.hook ? { hook: { command: o.hook.command, args: o.hook.args } } : {}),
      sessionDir: this.sessionDir,
      writableRoots: o.writableRoots,
      env: o.env,
    });
    const marker = randomBytes(8).toString('hex');
    const started = o.sandbox ? await sandboxedCommand(o, this.sessionDir, o.sandbox, launch.args) : { file: o.command, args: launch.args };
    const child = spawn(started.file, started.args, {
      cwd: o.cwd,
      // the hook runs Ralph's CLI as the MCP server does (under Electron-as-Node, in the editor)
      env: { ...o.env, ...launch.env, ...(o.hook ? o.mcp.env : {}), ...hookEnv, [COMMAND_MARKER_ENV]: marker },
      detached: process.platform !== 'win32',
      stdio: ['pipe', 'pipe', 'pipe'],
      windowsHide: true,
    });
    const kill = (): Promise<void> => killProcessTree(child.pid, marker, o.killGraceMs ?? 3_000);
    const onAbort = (): void => {
      this.result.stopped = true;
      void kill();
    };
    o.signal.addEventListener('abort', onAbort, { once: true });
    if (o.signal.aborted) onAbort();
    child.stdin.on('error', () => undefined);
    child.stdin.end(launch.stdin ?? '');
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-STDERR_TAIL);
    });
    const parser = o.adapter.createParser({ sessionDir: this.sessionDir });
    const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
    lines.on('line', (line) => this.take(parser.line(line), kill));
    const exit = new Promise<{ code: number | null; error?: Error }>((resolve) => {
      child.once('error', (error) => resolve({ code: null, error }));
      child.once('close', (code) => resolve({ code }));
    });
    const watching = this.o.hook ? this.watchContext(kill) : undefined;
    const { code, error } = await exit;
    if (watching) clearInterval(watching);
    this.take(parser.end(), kill);
    o.signal.removeEventListener('abort', onAbort);
    // whatever the session left behind (its MCP server, a background shell) ends with it
    await kill();
    this.result.exitCode = code;
    await this.finish(signalFile, code, error);
    if (o.hook) this.result.questions = await readHookQuestions(path.join(this.sessionDir, 'questions.ndjson'));
    return this.result;
  }

  /**
   * The CLI's `PreCompact` hook said its context is full: the session ends there (nothing of it is
   * lost: the loop commits the working tree), and the next iteration starts fresh from the notes.
   */
  private watchContext(kill: () => Promise<void>): NodeJS.Timeout {
    const file = path.join(this.sessionDir, 'hook-events.ndjson');
    const timer = setInterval(() => {
      void fs.readFile(file, 'utf8').then(
        (text) => {
          if (this.result.contextFull || !text.includes('"pre-compact"')) return;
          this.contextFull(`${this.o.adapter.label}'s context is full (it was about to compact it)`);
          void kill();
        },
        () => undefined,
      );
    }, 200);
    timer.unref?.();
    return timer;
  }

  private contextFull(why: string): void {
    this.result.contextFull = true;
    this.o.emit({
      type: 'warning',
      taskId: this.o.taskId,
      iteration: this.o.iteration,
      code: 'agent-context-full',
      message: `${why}: the session ends here and the next iteration starts fresh from the notes`,
    });
  }

  /** The hook's context file in the session's folder, and the variable that names it (to the CLI, and so to its hooks). */
  private async writeHookContext(): Promise<Record<string, string>> {
    if (!this.o.hook) return {};
    const file = path.join(this.sessionDir, 'hook-context.json');
    const context: HookContext = {
      ...this.o.hook.context,
      questionsFile: path.join(this.sessionDir, 'questions.ndjson'),
      stopFile: path.join(this.sessionDir, HOOK_STOP_FILE),
      eventsFile: path.join(this.sessionDir, 'hook-events.ndjson'),
    };
    await fs.writeFile(file, JSON.stringify(context), { mode: 0o600 });
    return { [HOOK_CONTEXT_ENV]: file };
  }

  /** Events of the stream, in order: Ralph's events, the usage (and the budget), the session's end. */
  private take(events: AgentCliEvent[], kill: () => Promise<void>): void {
    for (const event of events) {
      this.events++;
      try {
        this.apply(event);
      } catch (error) {
        // a reached budget (or refused credentials): the session ends within the turn that reached it
        if (error instanceof AuthRefused) this.authError ??= error.message;
        else this.budgetError ??= error instanceof Error ? error.message : String(error);
        if (this.o.hook) stopHooks(this.sessionDir, this.authError ?? this.budgetError ?? 'the session ended');
        void kill();
      }
    }
  }

  private apply(event: AgentCliEvent): void {
    const { o, result } = this;
    const at = { taskId: o.taskId, iteration: o.iteration };
    switch (event.kind) {
      case 'session':
        result.sessionId = event.id;
        result.model ??= event.model;
        return;
      case 'text':
        result.finalText = event.text;
        if (event.text.trim()) o.emit({ type: 'model.delta', ...at, text: event.text });
        return;
      case 'tool_call':
        result.toolCalls++;
        this.calls.set(event.id, { name: event.name, started: Date.now() });
        o.emit({ type: 'tool.call', ...at, callId: event.id, tool: event.name, args: abbreviate(JSON.stringify(event.input ?? {}), 300) });
        return;
      case 'tool_result': {
        const call = this.calls.get(event.id);
        if (!event.ok) result.toolErrors++;
        o.emit({
          type: 'tool.result',
          ...at,
          callId: event.id,
          tool: call?.name ?? 'tool',
          ok: event.ok,
          summary: abbreviate(event.output.replace(/\s+/g, ' ').trim(), 200),
          durationMs: call ? Date.now() - call.started : 0,
        });
        return;
      }
      case 'usage':
        return this.usage(event);
      case 'total_cost':
        o.onTotalCost?.(this.modelName(), event.costUsd - this.turnsUsd);
        this.turnsUsd = event.costUsd;
        return;
      case 'result':
        this.reported = { text: event.text, isError: event.isError, message: event.message };
        if (event.text) result.finalText = event.text;
        return;
      case 'error':
        this.streamErrors.push(event.message);
        return;
      case 'retry':
        return this.retry(event);
    }
  }

  /** The CLI's own retry of a model call: shown as the built-in agent's are; a refused key is not retried by Ralph's loop. */
  private retry(event: Extract<AgentCliEvent, { kind: 'retry' }>): void {
    const auth = event.status === 401 || event.status === 403;
    this.o.emit({
      type: 'model.retry',
      taskId: this.o.taskId,
      attempt: event.attempt,
      maxRetries: event.maxRetries,
      delayMs: event.delayMs,
      reason: `${this.o.adapter.label}: ${event.message}`,
      ...(auth ? { fault: 'auth' as const } : event.status === 429 ? { fault: 'rate_limit' as const } : {}),
    });
    // another try with the same key fails the same way: the session ends now, as an auth fault
    if (auth) throw new AuthRefused(`${this.o.adapter.label}: the model provider refused the credentials (${event.message})`);
  }

  private usage(event: Extract<AgentCliEvent, { kind: 'usage' }>): void {
    const usage: TokenUsage = {
      promptTokens: event.inputTokens,
      completionTokens: event.outputTokens,
      totalTokens: event.inputTokens + event.outputTokens,
      ...(event.cachedTokens !== undefined ? { cachedPromptTokens: event.cachedTokens } : {}),
      // a CLI that reports only the session's total: its turns cost nothing until the total comes
      ...(event.costUsd !== undefined || this.o.adapter.reportsTotalCost ? { providerCostUsd: event.costUsd ?? 0 } : {}),
    };
    this.turnsUsd += event.costUsd ?? 0;
    this.result.steps++;
    this.result.usage = addUsage(this.result.usage, usage);
    const model = this.modelName();
    this.o.emit({
      type: 'model.response',
      taskId: this.o.taskId,
      iteration: this.o.iteration,
      model,
      usage,
      toolCalls: 0,
      finishReason: 'agent-cli',
    });
    this.o.onUsage?.(model, usage);
  }

  private modelName(): string {
    return this.result.model ?? this.o.model ?? this.o.adapter.kind;
  }

  /** Signals (the MCP tools' file first, then the text tags), and the error the iteration ends with, if any. */
  private async finish(signalFile: string, code: number | null, spawnError: Error | undefined): Promise<void> {
    const { o, result } = this;
    const signals = [...(await readSignalFile(signalFile)), ...parseSignals(result.finalText)];
    for (const signal of dedupe(signals)) {
      result.signals.push(signal);
      o.emit({ type: 'signal', taskId: o.taskId, iteration: o.iteration, signal });
    }
    const label = o.adapter.label;
    if (spawnError) {
      result.error = `${label} could not be started (${o.command}): ${spawnError.message}`;
      return;
    }
    if (this.budgetError) {
      result.error = this.budgetError;
      return;
    }
    if (this.authError) {
      result.error = this.authError;
      result.fault = 'auth';
      return;
    }
    if (result.stopped || result.contextFull) return;
    const said = this.reported?.message ?? (this.reported?.isError ? this.reported.text : undefined) ?? this.streamErrors.at(-1);
    const stderr = lastLines(this.stderr, 5);
    // the CLI refused to go on because its context is full ("Prompt is too long"): the loop's answer
    // is the same as to its PreCompact hook — the session ends, the next one starts fresh
    if ((code !== 0 || this.reported?.isError) && CONTEXT_FULL.test(`${said ?? ''}\n${stderr}`)) {
      this.contextFull(`${label}'s context is full (${oneLine(said || stderr)})`);
      return;
    }
    if (code !== 0) {
      result.error = `${label} exited with code ${code}${said || stderr ? `: ${oneLine(said || stderr)}` : ''}`;
      result.fault = faultOf(`${said ?? ''}\n${stderr}`);
    } else if (this.reported?.isError) {
      result.error = `${label} ended its session with an error: ${oneLine(said ?? 'no message')}`;
      result.fault = faultOf(said ?? '');
    } else if (this.events === 0) {
      result.error = `${label} printed nothing it could be read from (exit 0)${stderr ? `: ${oneLine(stderr)}` : ''}`;
    }
  }
}

class AuthRefused extends Error {}

/** A CLI's words for a context it cannot fit into the model's window any more. */
const CONTEXT_FULL = /prompt is too long|blocking_limit|context[ _-]?(length|window)[ _-]?exceeded|maximum context length/i;

/** The fault kind a CLI's own error message names (auth and quota halt the task, as a provider's do). */
function faultOf(text: string): ModelFaultKind | undefined {
  if (/\b401\b|unauthori[sz]ed|invalid (x-)?api[ _-]?key|authentication|not logged in|please run \/?login/i.test(text)) return 'auth';
  if (/insufficient_quota|quota exceeded|credit balance is too low|billing/i.test(text)) return 'quota';
  if (/\b429\b|rate.?limit/i.test(text)) return 'rate_limit';
  if (/\b5\d\d\b|overloaded|service unavailable|connection (refused|error)|ECONNREFUSED|timed? ?out/i.test(text)) return 'outage';
  return undefined;
}

function dedupe(signals: readonly Signal[]): Signal[] {
  const seen = new Set<string>();
  return signals.filter((s) => {
    const key = JSON.stringify(s);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function abbreviate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function oneLine(text: string): string {
  return abbreviate(text.replace(/\s+/g, ' ').trim(), 500);
}

function lastLines(text: string, n: number): string {
  return text.trim().split('\n').slice(-n).join('\n');
}
