import { parseArgs } from 'node:util';
import { AGENT_KINDS, type AgentKind } from '../core/agentKinds';
import { type ProofKind, TASK_TYPES, type TaskType } from '../core/tasks/schema';
import { FORGE_USAGE, type ForgeCommand, ForgeUsageError, parseForgeCommand } from './forgeArgs';
import { parsePersonCommand, type PersonCommand, PERSON_USAGE, PersonUsageError } from './personArgs';
import { gateAllowance, verdictOptions } from './verdictArgs';
import { parseTaskAction, TASK_ACTIONS_USAGE, type TaskActionCommand, TaskActionUsageError } from './taskActionArgs';
import { type PlanCommand, parsePlanCommand, PLAN_USAGE, PlanUsageError } from './planCommand';
import { type ImportCommand, IMPORT_USAGE, ImportUsageError, parseImportCommand } from './importCommand';
import { type Shell, SHELLS, verbOf } from './verbs';

/** A mistake in how the command was called: exit code 2 with usage. */
export class UsageError extends Error {}

export const USAGE = `Usage: ralph <command> [options]

Commands:
  init                               create .ralph/ (config, task store) and a git repo if missing
  task add <title> --prompt <text> --promise <text>
        [--max-iterations N] [--priority N] [--depends-on ID]... [--type T] [--complexity N]
        [--allow-gate-changes all|GATE]...  let the task change what its gates check (reported)
        [--review manual|auto]       manual: its finished work waits for your review before it lands
        [--check "CMD"]              an executable promise: a command run as a required gate of this task only
        [--proof fail-to-pass|none] [--proof-test GLOB]...
                                     the fail-to-pass proof (default: bugfix only) and the task's own test files
        [--known-failure "TEST"]...  a failing test a person declares unrelated to this task (name as printed)
        [--agent ${AGENT_KINDS.join('|')}]  the agent of this task (default: agent.kind of the config)
        [--json]                     print the new task as JSON (default: its id)
                                     add a task; prints its id
  task list [--json]                 list tasks
${IMPORT_USAGE}
${TASK_ACTIONS_USAGE}
${PERSON_USAGE}
  run [--task ID] [--json] [--yes] [--approve-commands] [--unattended]
                                     run one task, or every ready task (autopilot)
        --yes                        approve every caio action (push, pull request, issue, notification)
        --approve-commands           approve every command of the agent that the command rules gate
                                     (push, git reset --hard, publish…, or every command in semi-auto)
                                     Without them, a terminal asks y/N; without a terminal they are refused.
        --unattended                 nobody is there to ask (as without a terminal, or with CI or GITHUB_ACTIONS
                                     set): the run never waits for a person; a task whose landing your own
                                     uncommitted files are in the way of stays checked, waiting to land, and
                                     the run ends naming the files and the command that lands it
        --force                      take over a run.lock that no live Ralph run holds
        --agent ${AGENT_KINDS.join('|')}  the agent of every task of this run (over the task's and the config's)
        --ci                         run the task as a CI job (also when GITHUB_ACTIONS=true): on branch
                                     ralph/<id> of the checkout, its state on ralph-state/<id>, both pushed;
                                     opens or updates its pull request and enables auto-merge when done
${PLAN_USAGE}
  status [--json]                    tasks by status and the state of a running loop
  doctor [--json]                    what a run here needs (git, the sandbox, each model endpoint, what the
                                     gates call) and what is missing, with the fix for each; exit 1 when
                                     something needed is missing
  hook pre-tool-use                  an agent CLI's hook before each tool call (its call as JSON on stdin):
                                     Ralph's command rules judge it; exit 2 blocks it, the reason on stderr
  hook pre-compact                   an agent CLI's hook when its context is full: the session ends there
  mcp                                Ralph's signal tools (ralph_complete, report_progress, report_blocked,
                                     ask_for_help) as an MCP server over stdio, for an agent CLI's session
  schema --out DIR                   write the JSON schemas of .ralph/config.json and tasks.json
  completion bash|zsh|fish           print a completion script for the shell (verbs, options, task ids):
                                     source <(ralph completion bash) in ~/.bashrc; zsh likewise;
                                     ralph completion fish | source
  help [<verb>]                      the verbs, or one verb's usage, options and exit codes (also
                                     ralph <verb> --help)
${FORGE_USAGE}

Every command takes --workspace DIR (default: the current directory).
Exit codes: 0 every task run ended done · 1 one ended failed, timeout or halted (or the run halted)
            3 one ended blocked, needs_help or review, or waits to land (it waits for you)
            2 usage or configuration error`;

export type CliCommand =
  | { kind: 'help'; verb?: string }
  | { kind: 'completion'; shell: Shell }
  /** `ralph __complete <words…>`: what the completion scripts ask (the candidates for the last word). */
  | { kind: 'complete'; workspace: string; words: string[] }
  | { kind: 'version' }
  | { kind: 'init'; workspace: string }
  | {
      kind: 'task.add';
      workspace: string;
      title: string;
      prompt: string;
      promise: string;
      maxIterations?: number;
      priority?: number;
      dependsOn: string[];
      type?: TaskType;
      complexity?: number;
      allowGateChanges?: true | string[];
      review?: 'auto' | 'manual';
      check?: string;
      proof?: ProofKind;
      proofTests?: string[];
      knownFailures?: string[];
      agent?: AgentKind;
      json?: boolean;
    }
  | { kind: 'task.list'; workspace: string; json: boolean }
  | {
      kind: 'run';
      workspace: string;
      taskId?: string;
      json: boolean;
      yes: boolean;
      approveCommands: boolean;
      force: boolean;
      ci?: boolean;
      unattended?: boolean;
      agent?: AgentKind;
    }
  | { kind: 'status'; workspace: string; json: boolean }
  | { kind: 'doctor'; workspace: string; json: boolean }
  | { kind: 'schema'; workspace: string; out: string }
  | { kind: 'mcp' }
  | { kind: 'hook'; event: 'pre-tool-use' | 'pre-compact' }
  | TaskActionCommand
  | ForgeCommand
  | PersonCommand
  | PlanCommand
  | ImportCommand;

const OPTIONS = {
  workspace: { type: 'string' },
  json: { type: 'boolean' },
  task: { type: 'string' },
  prompt: { type: 'string' },
  promise: { type: 'string' },
  'max-iterations': { type: 'string' },
  priority: { type: 'string' },
  'depends-on': { type: 'string', multiple: true },
  type: { type: 'string' },
  complexity: { type: 'string' },
  'allow-gate-changes': { type: 'string', multiple: true },
  review: { type: 'string' },
  check: { type: 'string' },
  proof: { type: 'string' },
  'proof-test': { type: 'string', multiple: true },
  'known-failure': { type: 'string', multiple: true },
  out: { type: 'string' },
  yes: { type: 'boolean', short: 'y' },
  'approve-commands': { type: 'boolean' },
  force: { type: 'boolean' },
  ci: { type: 'boolean' },
  unattended: { type: 'boolean' },
  agent: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

/** The verbs with parsers of their own (the person's, the task actions, plan, import, the forge's); undefined for the rest. */
function parseOwnVerb(argv: readonly string[], cwd: string): CliCommand | undefined {
  try {
    return (
      parsePersonCommand(argv, cwd) ??
      parseTaskAction(argv, cwd) ??
      parsePlanCommand(argv, cwd) ??
      parseImportCommand(argv, cwd) ??
      parseForgeCommand(argv, cwd)
    );
  } catch (error) {
    const usage = [TaskActionUsageError, PersonUsageError, PlanUsageError, ImportUsageError, ForgeUsageError];
    if (usage.some((kind) => error instanceof kind)) throw new UsageError((error as Error).message);
    throw error;
  }
}

type OptionName = keyof typeof OPTIONS;

/** The options and positionals of the verbs parsed here; a mistake in them is a UsageError. */
function parseOptions(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
type Values = ReturnType<typeof parseOptions>['values'];

/**
 * What is asked before any verb's options are read: help (`ralph help <verb>`, `--help` or `-h`
 * anywhere before `--`), completion, and a verb that does not exist (with the closest one).
 */
function parseAround(argv: readonly string[], cwd: string): CliCommand | undefined {
  const [first, ...rest] = argv;
  if (first === '__complete') {
    const at = rest.indexOf('--workspace');
    return { kind: 'complete', workspace: at >= 0 && rest[at + 1] ? rest[at + 1] : cwd, words: rest.length ? rest : [''] };
  }
  if (first === 'help') {
    const words = rest.filter((w) => !w.startsWith('-'));
    if (words.length === 0) return words.length < rest.length ? { kind: 'help', verb: 'help' } : { kind: 'help' };
    const named = verbOf(words);
    if (named && 'verb' in named) return { kind: 'help', verb: named.verb };
    throw new UsageError(unknownVerb(named ?? { unknown: rest.join(' ') }));
  }
  const options = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length);
  const named = verbOf(argv);
  if (named && !('verb' in named)) throw new UsageError(unknownVerb(named));
  if (options.includes('--help') || options.includes('-h')) return named ? { kind: 'help', verb: named.verb } : { kind: 'help' };
  if (first === 'completion') {
    if (rest.length !== 1 || !(SHELLS as readonly string[]).includes(rest[0]))
      throw new UsageError(`completion needs the shell: ralph completion ${SHELLS.join('|')}`);
    return { kind: 'completion', shell: rest[0] as Shell };
  }
  return undefined;
}

/** `unknown command "stauts" — did you mean \`ralph status\`?` */
function unknownVerb(named: { unknown: string; within?: string; suggestion?: string }): string {
  const what = named.within ? `unknown ${named.within} command "${named.unknown}"` : `unknown command "${named.unknown}"`;
  const full = named.suggestion && (named.within ? `${named.within} ${named.suggestion}` : named.suggestion);
  return full ? `${what}: did you mean \`ralph ${full}\`?` : `${what}: see ralph --help`;
}

export function parseCli(argv: readonly string[], cwd: string): CliCommand {
  const around = parseAround(argv, cwd);
  if (around) return around;
  const own = parseOwnVerb(argv, cwd);
  if (own) return own;
  const { values, positionals } = parseOptions(argv);
  if (values.version) return { kind: 'version' };
  if (values.help || positionals.length === 0) return { kind: 'help' };
  const workspace = values.workspace ?? cwd;
  const [command, sub, ...rest] = positionals;
  const only = (allowed: OptionName[]) => rejectOptions(values, [...allowed, 'workspace']);

  switch (command) {
    case 'init':
      only([]);
      noExtra(positionals, 1);
      return { kind: 'init', workspace };
    case 'task':
      if (sub === 'add') return parseTaskAdd(values, rest, workspace, only);
      if (sub === 'list') {
        only(['json']);
        noExtra(positionals, 2);
        return { kind: 'task.list', workspace, json: values.json ?? false };
      }
      throw new UsageError(
        `unknown task command "${sub ?? ''}": use task add, list, import, retry, unblock, cancel, edit, increase-max, delete or rollback`,
      );
    case 'run':
      only(['task', 'json', 'yes', 'approve-commands', 'force', 'ci', 'unattended', 'agent']);
      noExtra(positionals, 1);
      if (values.ci && !values.task) throw new UsageError('run --ci needs --task ID: a CI job runs one task');
      return {
        kind: 'run',
        workspace,
        taskId: values.task,
        json: values.json ?? false,
        yes: values.yes ?? false,
        approveCommands: values['approve-commands'] ?? false,
        force: values.force ?? false,
        ...(values.ci ? { ci: true } : {}),
        ...(values.unattended ? { unattended: true } : {}),
        ...agentOption(values.agent),
      };
    case 'status':
    case 'doctor':
      only(['json']);
      noExtra(positionals, 1);
      return { kind: command, workspace, json: values.json ?? false };
    case 'mcp':
      only([]);
      noExtra(positionals, 1);
      return { kind: 'mcp' };
    case 'hook':
      only([]);
      noExtra(positionals, 2);
      if (sub !== 'pre-tool-use')
        throw new UsageError('hook needs the event: ralph hook pre-tool-use (run by an agent CLI, its tool call on stdin)');
      return { kind: 'hook', event: 'pre-tool-use' };
    case 'schema':
      only(['out']);
      if (!values.out) throw new UsageError('schema needs --out DIR');
      return { kind: 'schema', workspace, out: values.out };
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

const usage = (message: string) => new UsageError(message);

/** `ralph task add <title> --prompt <text> --promise <text> …`: the new task's fields, checked. */
function parseTaskAdd(values: Values, rest: string[], workspace: string, only: (allowed: OptionName[]) => void): CliCommand {
  only([
    'prompt',
    'promise',
    'max-iterations',
    'priority',
    'depends-on',
    'type',
    'complexity',
    'allow-gate-changes',
    'review',
    'check',
    'proof',
    'proof-test',
    'known-failure',
    'agent',
    'json',
  ]);
  if (values.review !== undefined && values.review !== 'auto' && values.review !== 'manual')
    throw new UsageError('--review must be manual or auto');
  const title = rest.join(' ').trim();
  if (!title) throw new UsageError('task add needs a title: ralph task add <title> --prompt <text> --promise <text>');
  if (!values.prompt) throw new UsageError('task add needs --prompt <text> (the exact request)');
  if (!values.promise) throw new UsageError('task add needs --promise <text> (the completion criteria)');
  if (values.check !== undefined && !values.check.trim())
    throw new UsageError("--check needs a command: the task's executable promise, run as a required gate of this task only");
  if (values.type !== undefined && !(TASK_TYPES as readonly string[]).includes(values.type)) {
    throw new UsageError(`--type must be one of ${TASK_TYPES.join(', ')}`);
  }
  return {
    kind: 'task.add',
    workspace,
    title,
    prompt: values.prompt,
    promise: values.promise,
    maxIterations: intOption(values['max-iterations'], '--max-iterations', 1),
    priority: numberOption(values.priority, '--priority'),
    dependsOn: values['depends-on'] ?? [],
    type: values.type as TaskType | undefined,
    complexity: intOption(values.complexity, '--complexity', 1, 14),
    allowGateChanges: gateAllowance(values['allow-gate-changes'], usage),
    ...(values.review ? { review: values.review as 'auto' | 'manual' } : {}),
    ...verdictOptions(values, usage),
    ...agentOption(values.agent),
    ...(values.json ? { json: true } : {}),
  };
}

/** `--agent KIND`: one of the agents Ralph drives. */
function agentOption(value: string | undefined): { agent?: AgentKind } {
  if (value === undefined) return {};
  if (!(AGENT_KINDS as readonly string[]).includes(value))
    throw new UsageError(`--agent must be one of ${AGENT_KINDS.join(', ')}, got "${value}"`);
  return { agent: value as AgentKind };
}

function rejectOptions(values: Record<string, unknown>, allowed: string[]): void {
  const extra = Object.keys(values).filter((key) => values[key] !== undefined && !allowed.includes(key));
  if (extra.length > 0) throw new UsageError(`option ${extra.map((k) => `--${k}`).join(', ')} does not apply to this command`);
}

function noExtra(positionals: string[], expected: number): void {
  if (positionals.length > expected) throw new UsageError(`unexpected argument "${positionals[expected]}"`);
}

function numberOption(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number)) throw new UsageError(`${name} must be a number, got "${value}"`);
  return number;
}

function intOption(value: string | undefined, name: string, min: number, max = Number.MAX_SAFE_INTEGER): number | undefined {
  const number = numberOption(value, name);
  if (number === undefined) return undefined;
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new UsageError(`${name} must be a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got "${value}"`);
  }
  return number;
}
