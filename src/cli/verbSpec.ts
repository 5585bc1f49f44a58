import { AGENT_KINDS } from '../core/agentKinds';
import { type CliCommand, UsageError } from './command';

/**
 * The shape of the one definition of `ralph`'s verbs (src/cli/verbs*.ts): each verb's words,
 * group, summary, arguments, options (with their types, defaults and descriptions), exit codes
 * and examples, and how its parsed values become a `CliCommand`. The parser (commander, in
 * args.ts), each help page and completion (help.ts, completion.ts) and docs/cli.md
 * (scripts/docs/reference.mjs) are all made from it.
 */

/** The groups of `ralph --help`, in order. */
export const GROUPS = {
  tasks: 'Tasks',
  runs: 'Runs',
  person: 'The person (answers and review)',
  forge: 'The forge (GitHub Actions)',
  setup: 'Set-up and the shell',
} as const;

export interface OptionSpec {
  /** As commander takes them: `--priority <n>`, `-y, --yes`, `--json`. */
  flags: string;
  description: string;
  /** The values it may take (commander checks them; help lists them). */
  choices?: readonly string[];
  /** Each use adds a value (`--depends-on A --depends-on B`). */
  repeat?: boolean;
  /** Checks and converts its value; throws a UsageError naming the option. */
  parse?: (value: string, flag: string) => unknown;
  /** The verb needs it (its build says so when it is missing); the synopsis shows it without brackets. */
  required?: true;
  /** The default when it is not given, as help shows it (the verb applies it). */
  default?: string;
}

export interface ArgSpec {
  /** As commander takes them: `<id>`, `[text]`, `<title...>`. */
  name: string;
  description: string;
  /** What is missing when it is not given: "a task id". */
  needs?: string;
  /** One text: more words are a mistake ("quote it"). */
  quote?: true;
}

/** The parsed command line as a verb's `build` receives it. */
export interface Parsed {
  /** The arguments, in order (a variadic last one joined by spaces). */
  args: (string | undefined)[];
  /** The options by commander's name (`maxIterations` for `--max-iterations`). */
  opts: Record<string, unknown>;
  workspace: string;
}

export interface Verb {
  /** The words of the verb: `run`, `task retry`. */
  name: string;
  group: keyof typeof GROUPS;
  /** One line, for `ralph --help` and the first line of its page. */
  summary: string;
  /** More about it, for its page. */
  description?: string;
  args?: ArgSpec[];
  options?: OptionSpec[];
  /** Its exit codes, one line. */
  exits: string;
  examples?: string[];
  /** It takes a task id as its first argument (completion offers the ids). */
  taskId?: boolean;
  /** The values become the command `main.ts` runs; a mistake the parser cannot see is a UsageError. */
  build(parsed: Parsed): CliCommand;
}

export const usage = (message: string): UsageError => new UsageError(message);

/** `--x <n>`: a whole number from `min` (to `max`). */
export function wholeNumber(min: number, max?: number): OptionSpec['parse'] {
  return (value, flag) => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isInteger(n) || n < min || (max !== undefined && n > max))
      throw usage(`${flag} must be a whole number ${max === undefined ? `of at least ${min}` : `from ${min} to ${max}`}, got "${value}"`);
    return n;
  };
}

/** `--x <n>`: any finite number. */
export function aNumber(value: string, flag: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw usage(`${flag} must be a number, got "${value}"`);
  return n;
}

/** Values given as `A,B` or by repeating the option, trimmed, without empties. */
export function list(values: unknown): string[] {
  return ((values as string[] | undefined) ?? [])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

export const JSON_OPTION: OptionSpec = { flags: '--json', description: 'print the result as JSON' };
export const YES_OPTION: OptionSpec = { flags: '-y, --yes', description: 'confirmed: do not ask (needed without a terminal)' };
export const AGENT_OPTION = (description: string): OptionSpec => ({
  flags: '--agent <kind>',
  description,
  choices: AGENT_KINDS,
});
export const ID_ARG: ArgSpec = { name: '<id>', description: 'the task', needs: 'a task id' };

/** The exit codes most verbs share. */
export const EXITS = {
  plain: 'Exit codes: 0 done · 1 it could not be done · 2 usage or configuration error',
  taskAction:
    "Exit codes: 0 done · 1 could not be done (conflict, uncommitted changes) · 2 usage, unknown task, or the task's status does not allow it · 4 not confirmed (declined, or no terminal and no --yes)",
  person: 'Exit codes: 0 done · 1 not done (did not land, conflict) · 2 usage, unknown task or status · 4 not confirmed',
} as const;

/** `{ json: true }` when `--json` was given, else nothing (the command's JSON field is optional). */
export const jsonIf = (opts: Record<string, unknown>): { json?: true } => (opts.json ? { json: true } : {});
