import { promises as fs, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { RalphConfig } from '../config/schema';
import { evaluateCommand } from '../commands/commandPolicy';
import { TaskChanges } from '../commands/taskChanges';

/**
 * Where an agent CLI's tool-use hook (`ralph hook pre-tool-use`, Claude Code's `PreToolUse`) finds
 * what it judges by: a JSON file the session writes into its private folder, named by this variable.
 */
export const HOOK_CONTEXT_ENV = 'RALPH_HOOK_CONTEXT';
/** In the session's folder once the session must end (a budget reached, a refused key): `{ reason }`. */
export const HOOK_STOP_FILE = 'stop.json';

/**
 * Written at once (before the session's kill) when a session must end: the CLI's next tool-use
 * hook stops it, so the tool call of the turn that reached a budget runs no tool and starts no
 * further model call, even when the kill lands late on a busy machine.
 */
export function stopHooks(sessionDir: string, reason: string): void {
  try {
    writeFileSync(path.join(sessionDir, HOOK_STOP_FILE), JSON.stringify({ reason }), { mode: 0o600 });
  } catch {
    // the kill still ends the session
  }
}

/** The reason a stop file gives; a file caught half-written still stops the session. */
function stopReason(text: string): string {
  try {
    return String((JSON.parse(text) as { reason?: unknown }).reason);
  } catch {
    return 'the session ended';
  }
}

/** What the hook judges the agent's tool calls by. */
export interface HookContext {
  /** The task's folder: paths in commands are judged against it. */
  root: string;
  /** The task's base commit: running a script the task changed is judged as inline code. */
  base?: string;
  /** When the session started (epoch ms). */
  since: number;
  config: Pick<RalphConfig, 'commands' | 'loop'>;
  /** Where a command that needs a person's approval is recorded (one JSON line each): the task's question after the session. */
  questionsFile: string;
  /** There once the session must end: the next tool call is not run and the CLI is told to stop (no further model call). */
  stopFile?: string;
  /** Where the hook records the session's events (one JSON line each): `pre-compact` ends the session. */
  eventsFile?: string;
  /** The task's own progress notes (`.ralph/progress/<id>.md`, relative to `root`): the one file under `.ralph/` the agent writes. */
  progressFile: string;
  /** The session runs inside Ralph's sandbox (cliSandbox.ts): an ask whose every reason the sandbox confines is allowed, as for the built-in agent. */
  confined?: boolean;
}

/** A command the rules want a person's word on, asked after the session. */
export interface HookQuestion {
  command: string;
  reason: string;
}

export type ToolUseVerdict = { action: 'allow' } | { action: 'deny'; reason: string };

const FILE_TOOLS = new Set(['Write', 'Edit', 'MultiEdit', 'NotebookEdit']);

/**
 * Judges one tool call of an agent CLI as the built-in agent's would be: a shell command by
 * Ralph's command rules (refused, or — needing a person — kept as the task's question, since
 * nobody can answer inside the session); a file tool's write under `.ralph/` (other than the
 * task's progress notes) refused: every file there is the orchestrator's.
 */
export async function judgeToolUse(call: unknown, context: HookContext): Promise<ToolUseVerdict> {
  const { tool_name: tool, tool_input: input, cwd } = (call ?? {}) as { tool_name?: unknown; tool_input?: unknown; cwd?: unknown };
  const args = (input ?? {}) as Record<string, unknown>;
  const where = typeof cwd === 'string' && cwd ? cwd : context.root;
  if (tool === 'Bash' && typeof args.command === 'string') return judgeCommand(args.command, where, context);
  if (typeof tool === 'string' && FILE_TOOLS.has(tool)) {
    const file = typeof args.file_path === 'string' ? args.file_path : typeof args.notebook_path === 'string' ? args.notebook_path : '';
    if (file && controlFile(path.resolve(where, file), context))
      return {
        action: 'deny',
        reason: `${file} is under .ralph/, which belongs to the orchestrator (the task store, checkpoints, records, other tasks' notes); only ${context.progressFile} is yours to write`,
      };
  }
  return { action: 'allow' };
}

async function judgeCommand(command: string, cwd: string, context: HookContext): Promise<ToolUseVerdict> {
  const changes = new TaskChanges();
  changes.begin(context.base, context.since);
  const decision = await evaluateCommand(command, context.config, { root: context.root, cwd, changes: changes.in(context.root) });
  if (decision.action === 'allow' || (decision.action === 'ask' && decision.confinable && context.confined)) return { action: 'allow' };
  if (decision.action === 'deny')
    return {
      action: 'deny',
      reason: `Ralph refused this command (${decision.reason}); find another way that stays inside the task's folder`,
    };
  await fs.appendFile(context.questionsFile, `${JSON.stringify({ command, reason: decision.reason } satisfies HookQuestion)}\n`);
  return {
    action: 'deny',
    reason: `this command needs a person's approval (${decision.reason}) and nobody can answer during the session; it did not run. It is recorded as your task's question: finish what you can without it, update your progress notes, and end the session`,
  };
}

function controlFile(file: string, context: HookContext): boolean {
  const dir = path.join(context.root, '.ralph') + path.sep;
  return file.startsWith(dir) && file !== path.join(context.root, context.progressFile);
}

/** The questions the session's hook recorded, in order. */
export async function readHookQuestions(file: string): Promise<HookQuestion[]> {
  const text = await fs.readFile(file, 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((line) => line.trim())
    .flatMap((line) => {
      try {
        const q = JSON.parse(line) as HookQuestion;
        return typeof q.command === 'string' && typeof q.reason === 'string' ? [q] : [];
      } catch {
        return [];
      }
    });
}

/** `ralph hook pre-tool-use`: reads the CLI's hook input on stdin; exit 2 with the reason on stderr blocks the tool. */
export async function preToolUseHook(stdin: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string; stdout?: string }> {
  const file = env[HOOK_CONTEXT_ENV];
  if (!file) return { code: 0, stderr: '' };
  let context: HookContext;
  let call: unknown;
  try {
    context = JSON.parse(await fs.readFile(file, 'utf8')) as HookContext;
    call = JSON.parse(stdin);
  } catch (error) {
    // what cannot be judged does not run
    return { code: 2, stderr: `Ralph could not judge this tool call (${(error as Error).message}); it did not run` };
  }
  const stop = context.stopFile ? await fs.readFile(context.stopFile, 'utf8').catch(() => undefined) : undefined;
  if (stop !== undefined) {
    // Claude Code's hook output: `continue: false` ends the session after the hook (a refusal alone would go back to the model)
    return { code: 0, stderr: '', stdout: JSON.stringify({ continue: false, stopReason: `Ralph ended the session: ${stopReason(stop)}` }) };
  }
  const verdict = await judgeToolUse(call, context);
  return verdict.action === 'allow' ? { code: 0, stderr: '' } : { code: 2, stderr: verdict.reason };
}

/**
 * `ralph hook pre-compact` (Claude Code's `PreCompact`): the session's context is full. Recorded for
 * the session runner, which ends the session there — the next iteration starts fresh from the
 * repository and the notes instead of a summary of this one (the loop's own answer to a full context).
 */
export async function preCompactHook(stdin: string, env: NodeJS.ProcessEnv): Promise<{ code: number; stderr: string; stdout?: string }> {
  const file = env[HOOK_CONTEXT_ENV];
  if (!file) return { code: 0, stderr: '' };
  try {
    const context = JSON.parse(await fs.readFile(file, 'utf8')) as HookContext;
    const input = JSON.parse(stdin || '{}') as { trigger?: unknown };
    if (context.eventsFile)
      await fs.appendFile(context.eventsFile, `${JSON.stringify({ event: 'pre-compact', trigger: String(input.trigger ?? 'auto') })}\n`);
  } catch {
    // nothing to record: the session goes on and compacts, as it would without Ralph
  }
  return { code: 0, stderr: '' };
}
