import { existsSync, statSync } from 'node:fs';
import * as path from 'node:path';
import type { AgentKind, CliAgentKind } from '../agentKinds';
import type { AgentConfig } from '../config/agentSchema';
import { RalphError } from '../errors';
import { type AgentChoice, agentsOnLadder, type LadderStep } from '../escalation/steps';
import type { RalphEventBody } from '../events';
import type { TokenUsage } from '../llm/types';
import type { Task } from '../tasks/schema';
import type { SandboxProbe } from '../commands/sandbox';
import { AGENT_CLI_ADAPTERS } from './adapters';
import { cliSandboxDecision, cliSandboxLine, type SandboxMode } from './cliSandbox';
import { type AgentSessionResult, runAgentSession } from './session';
import type { HookContext } from './hookGate';
import type { AgentCliAdapter } from './types';

/**
 * How a surface starts its own `ralph` CLI for a session (the CLI: its own script; the editor: the
 * bundled CLI under Electron-as-Node): `args` are the words before the verb (`mcp`, `hook …`).
 */
export interface RalphCliCommand {
  command: string;
  args: string[];
  env?: Record<string, string>;
}

/** What a run knows of agent CLIs: the run's choice over every task's, and how to start Ralph's signal server. */
export interface AgentCliSettings {
  /** `ralph run --agent`: wins over the task's own agent and the config's. */
  override?: AgentKind;
  ralph: RalphCliCommand;
  /** The environment the CLI starts from (default: this process's); Ralph's own secrets are never added to it. */
  env?: NodeJS.ProcessEnv;
}

/** Ralph's sandbox around a CLI's process (`cliSandbox.ts`): `commands.sandbox`, and whether bubblewrap works here. */
export interface AgentCliSandbox {
  mode: SandboxMode;
  probe(): Promise<SandboxProbe>;
  bwrap?: string;
  platform?: NodeJS.Platform;
  /** `worktrees.link`: the installed dependencies, read-only but for their caches. */
  links?: readonly string[];
}

/** A configured agent CLI that cannot be found: a usage error (exit 2) before any change. */
export class AgentMissingError extends RalphError {
  constructor(message: string) {
    super(message, 'agent-missing');
  }
}

/** The agent that works on `task` when its ladder step names none: the run's choice, else the task's own, else `agent.kind`. */
export function agentKindFor(task: Pick<Task, 'agent'>, config: AgentConfig, override?: AgentKind): AgentKind {
  return override ?? task.agent ?? config.kind;
}

/**
 * `agent.command` and `agent.args` belong to the CLI of `agent.kind` (with `agent.kind` "builtin",
 * to any CLI a run uses): another CLI (a ladder step's, a task's own) is found on PATH by its usual
 * name, and never handed the arguments of another CLI.
 */
export function ownSettings(kind: CliAgentKind, config: AgentConfig): AgentConfig {
  return config.kind === kind || config.kind === 'builtin' ? config : { ...config, command: undefined, args: [] };
}

export function adapterOf(kind: CliAgentKind): AgentCliAdapter {
  return AGENT_CLI_ADAPTERS[kind];
}

/**
 * The CLI's executable: `agent.command` (a path, or a name looked up on PATH), else the CLI's
 * usual name on PATH. Throws AgentMissingError naming the agent and how to install it.
 */
export function resolveAgentCommand(kind: CliAgentKind, config: AgentConfig, env: NodeJS.ProcessEnv = process.env): string {
  const adapter = adapterOf(kind);
  const wanted = config.command ?? adapter.defaultCommand;
  const found =
    wanted.includes('/') || wanted.includes('\\') ? (isExecutable(wanted) ? path.resolve(wanted) : undefined) : onPath(wanted, env);
  if (found) return found;
  const where = config.command ? `agent.command "${config.command}" was not found` : `"${wanted}" is not on PATH`;
  throw new AgentMissingError(
    `the agent ${adapter.label} (agent.kind "${kind}") cannot run: ${where}. Install it with \`${adapter.install}\`, or set agent.command in .ralph/config.json to its path`,
  );
}

function onPath(name: string, env: NodeJS.ProcessEnv): string | undefined {
  const dirs = (env.PATH ?? env.Path ?? '').split(path.delimiter).filter(Boolean);
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of dirs) for (const ext of exts) if (isExecutable(path.join(dir, name + ext))) return path.join(dir, name + ext);
  return undefined;
}

function isExecutable(file: string): boolean {
  try {
    return existsSync(file) && statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The escalation ladder, for the agents its steps name: `ladderSteps(escalation.ladder, llm.models)`. */
export interface LadderOfRun {
  steps: readonly LadderStep[];
  llmModels: readonly string[];
}

/**
 * Before a run changes anything: every agent CLI the run's tasks would use (the run's choice, else
 * each unfinished task's own, else the agents of the ladder's steps and `agent.kind`) must be
 * found. Throws AgentMissingError (exit 2).
 */
export function checkAgentsFound(
  tasks: readonly Pick<Task, 'agent' | 'status'>[],
  config: AgentConfig,
  override: AgentKind | undefined,
  env: NodeJS.ProcessEnv = process.env,
  ladder: LadderOfRun = { steps: [], llmModels: [] },
): CliAgentKind[] {
  const open = tasks.filter((t) => t.status !== 'done' && t.status !== 'cancelled');
  const kinds = new Set(open.flatMap((t) => agentsOnLadder(ladder.steps, { override, task: t.agent, config }, ladder.llmModels)));
  const cli = [...kinds].filter((k): k is CliAgentKind => k !== 'builtin');
  for (const kind of cli) resolveAgentCommand(kind, ownSettings(kind, config), env);
  return cli;
}

/** One iteration of a task through its agent CLI: what the task loop hands over, and what it gets back. */
export interface AgentCliIteration {
  kind: CliAgentKind;
  /** The model the CLI is told to use (the ladder step's, or `agent.model`); absent: the CLI's own. */
  model?: string;
  cwd: string;
  prompt: string;
  taskId: string;
  iteration: number;
  signal: AbortSignal;
  emit(body: RalphEventBody): void;
  onUsage?(model: string, usage: TokenUsage): void;
  onTotalCost?(model: string, usd: number): void;
  /** What the CLI's tool-use hook judges by (where the CLI has one). */
  hookContext: Omit<HookContext, 'questionsFile'>;
}

/** The run's side of agent CLIs, given to every task loop: who works on a task, and one session of it. */
export class AgentCliRunner {
  /** The CLIs whose running without Ralph's sandbox this run has said. */
  private readonly unconfinedSaid = new Set<AgentKind>();

  constructor(
    private readonly config: AgentConfig,
    private readonly settings: AgentCliSettings,
    private readonly sandbox?: AgentCliSandbox,
  ) {}

  /** Who chose the agent of `task`, for the ladder's step to decide within: the run's `--agent`, the task's own, the config. */
  choiceFor(task: Pick<Task, 'agent'>): AgentChoice {
    return { override: this.settings.override, task: task.agent, config: this.config };
  }

  async run(input: AgentCliIteration): Promise<AgentSessionResult> {
    const env = this.settings.env ?? process.env;
    const adapter = adapterOf(input.kind);
    const own = ownSettings(input.kind, this.config);
    const { ralph } = this.settings;
    const sandbox = this.sandbox;
    // "required" and no sandbox here: SandboxUnavailableError, before the CLI starts
    const decision = sandbox && cliSandboxDecision(adapter, sandbox.mode, await sandbox.probe(), sandbox.platform);
    const wrapped = decision?.wrapped;
    if (decision && !decision.wrapped && !this.unconfinedSaid.has(input.kind)) {
      // said once a run for each CLI, in the run's log and wherever warnings are shown (the editor's notifications)
      this.unconfinedSaid.add(input.kind);
      input.emit({ type: 'warning', taskId: input.taskId, code: 'agent-cli-unsandboxed', message: cliSandboxLine(adapter, decision) });
    }
    return runAgentSession({
      adapter,
      command: resolveAgentCommand(input.kind, own, env),
      cwd: input.cwd,
      prompt: input.prompt,
      model: input.model,
      extraArgs: own.args,
      env: { ...definedOnly(env), ...this.config.env },
      mcp: { command: ralph.command, args: [...ralph.args, 'mcp'], env: ralph.env ?? {} },
      ...(adapter.hooks
        ? {
            hook: {
              command: ralph.command,
              args: [...ralph.args, 'hook'],
              context: { ...input.hookContext, ...(wrapped ? { confined: true } : {}) },
            },
          }
        : {}),
      writableRoots: [input.cwd],
      ...(wrapped && sandbox
        ? {
            sandbox: {
              bwrap: sandbox.bwrap ?? 'bwrap',
              progressFile: path.join(input.cwd, input.hookContext.progressFile),
              links: sandbox.links,
            },
          }
        : {}),
      taskId: input.taskId,
      iteration: input.iteration,
      signal: input.signal,
      emit: input.emit,
      onUsage: input.onUsage,
      onTotalCost: input.onTotalCost,
    });
  }
}

function definedOnly(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined) out[name] = value;
  return out;
}
