import { Argument, Command, CommanderError, Option } from 'commander';
import { type CliCommand, UsageError } from './command';
import { verbNamed, verbOf, VERBS, verbWords } from './verbs';
import type { ArgSpec, OptionSpec, Verb } from './verbSpec';

export { type CliCommand, UsageError };

/**
 * The parser of `ralph`: commander, configured from the one definition of the verbs (verbs.ts).
 * Commander reads the options and arguments of each verb (their types, choices, repeats); the
 * verb's `build` turns them into the `CliCommand` main.ts runs. Commander writes nothing and
 * exits nothing: a mistake becomes a UsageError with Ralph's words, which main.ts prints with
 * the verb's usage (exit 2).
 */

/** Commander's settings for every command: silent, never exiting, help and version are Ralph's own. */
function quiet(command: Command, onError: (error: CommanderError) => never): Command {
  return command
    .exitOverride(onError)
    .configureOutput({ writeOut: () => undefined, writeErr: () => undefined, outputError: () => undefined })
    .configureHelp({ helpWidth: 100 })
    .helpOption(false)
    .helpCommand(false)
    .allowExcessArguments(true);
}

/** The long flag of an option spec: `--yes` of `-y, --yes`. */
export const longFlag = (spec: OptionSpec): string => /--[\w-]+/.exec(spec.flags)![0];

function optionOf(spec: OptionSpec): Option {
  const option = new Option(spec.flags, spec.default === undefined ? spec.description : `${spec.description} (default: ${spec.default})`);
  if (spec.choices) option.choices(spec.choices);
  const { parse } = spec;
  if (parse) option.argParser((value: string) => parse(value, longFlag(spec)));
  if (spec.repeat) option.argParser((value: string, previous: string[] | undefined) => [...(previous ?? []), value]);
  return option;
}

/** A commander error in Ralph's words: what was wrong, for a person. */
function ralphError(error: CommanderError, verb?: Verb): UsageError | CommanderError {
  const quoted = /'([^']+)'/.exec(error.message)?.[1] ?? '';
  const plain = error.message.replace(/^error: /, '');
  switch (error.code) {
    case 'commander.unknownOption': {
      const elsewhere = VERBS.some((v) => v.options?.some((o) => longFlag(o) === quoted || o.flags.startsWith(`${quoted},`)));
      // node's parser said `Unknown option '--x'` (scripts and tests read it); an option of another verb says so too
      return new UsageError(`Unknown option '${quoted}'${verb && elsewhere ? `: ${quoted} does not apply to ${verb.name}` : ''}`);
    }
    case 'commander.missingArgument': {
      const arg = verb?.args?.find((a) => a.name.replace(/[<>[\].]/g, '') === quoted);
      return new UsageError(verb ? `${verb.name} needs ${arg?.needs ?? quoted}: ralph ${verb.name} ${argsSynopsis(verb)}` : plain);
    }
    case 'commander.invalidArgument': {
      const choices = /option '(--[\w-]+)[^']*' argument '([^']*)' is invalid\. Allowed choices are (.*)\.$/.exec(plain);
      return new UsageError(choices ? `${choices[1]} must be one of ${choices[3]}, got "${choices[2]}"` : plain);
    }
    case 'commander.help':
    case 'commander.helpDisplayed':
    case 'commander.executeSubCommandAsync':
      return error;
    default:
      return new UsageError(plain);
  }
}

/** `<id> [text]`: a verb's arguments as its synopsis shows them. */
export const argsSynopsis = (verb: Verb): string => (verb.args ?? []).map((a) => a.name).join(' ');

/** An option as a synopsis shows it: `[--task ID]`, `--prompt TEXT`, `[--review manual|auto]`, `[--label LABEL]...`. */
function optionSynopsis(spec: OptionSpec): string {
  const value = /[<[]([^>\]]+)[>\]]/.exec(spec.flags)?.[1];
  const shown = value === undefined ? '' : ` ${spec.choices ? spec.choices.join('|') : value.toUpperCase()}`;
  const text = `${longFlag(spec)}${shown}`;
  return spec.required ? text : `[${text}]${spec.repeat ? '...' : ''}`;
}

/** `ralph run [--task ID] [--json] …`: the verb, its arguments and options, wrapped at 100 columns. */
export function synopsis(verb: Verb): string {
  const words = [`ralph ${verb.name}`, ...(verb.args ?? []).map((a) => a.name), ...(verb.options ?? []).map(optionSynopsis)];
  const lines = [''];
  for (const word of words) {
    if (lines.at(-1)!.length > 0 && lines.at(-1)!.length + word.length + 1 > 92) lines.push(`   ${word}`);
    else lines[lines.length - 1] += `${lines.at(-1)!.length > 0 ? ' ' : ''}${word}`;
  }
  return lines.join('\n       ');
}

/** The value commander gives an argument: a variadic one's words joined. */
const argValue = (value: unknown): string | undefined =>
  Array.isArray(value) ? value.join(' ') || undefined : (value as string | undefined);

/** More arguments than the verb takes: the first one it does not, or "quote it" for a text. */
function excess(verb: Verb, given: readonly string[]): UsageError | undefined {
  const declared: ArgSpec[] = verb.args ?? [];
  if (declared.some((a) => a.name.endsWith('...>') || a.name.endsWith('...]')) || given.length <= declared.length) return undefined;
  const last = declared.at(-1);
  if (last?.quote) {
    const what = last.name.replace(/[<>[\]]/g, '');
    return new UsageError(`${verb.name} takes one ${what}; quote it: ralph ${verb.name} ${given[0]} "<${what}>"`);
  }
  return new UsageError(`unexpected argument "${given[declared.length]}"`);
}

/** The leaf command of `verb` under `parent`, whose action builds the verb's CliCommand into `found`. */
function addVerb(parent: Command, verb: Verb, cwd: string, found: { command?: CliCommand }): Command {
  const fail = (error: CommanderError): never => {
    throw ralphError(error, verb);
  };
  const command = quiet(parent.command(verb.name.split(' ').at(-1)!), fail)
    .summary(verb.summary)
    .description(verb.description ?? '')
    .usage(synopsis(verb).slice(`ralph ${verb.name} `.length));
  for (const arg of verb.args ?? []) command.addArgument(new Argument(arg.name, arg.description));
  for (const option of verb.options ?? []) command.addOption(optionOf(option));
  command.action((...received: unknown[]) => {
    const self = received.at(-1) as Command;
    const tooMany = excess(verb, self.args);
    if (tooMany) throw tooMany;
    const args = self.processedArgs.map(argValue);
    const workspace = (self.optsWithGlobals().workspace as string | undefined) ?? cwd;
    found.command = verb.build({ args, opts: self.opts(), workspace });
  });
  return command;
}

/** The commander program of every verb; what the parsed verb builds lands in `found`. */
export function ralphProgram(cwd = '.', found: { command?: CliCommand } = {}): Command {
  const fail = (error: CommanderError): never => {
    throw ralphError(error);
  };
  const program = quiet(new Command('ralph'), fail).option('--workspace <dir>', 'the workspace (default: the current directory)');
  const groups = new Map<string, Command>();
  for (const verb of VERBS) {
    const [first, second] = verb.name.split(' ');
    if (!second) {
      addVerb(program, verb, cwd, found);
      continue;
    }
    if (!groups.has(first)) groups.set(first, quiet(program.command(first), fail));
    addVerb(groups.get(first)!, verb, cwd, found);
  }
  return program;
}

/** The commander command of a verb (its help page is made from it). */
export function verbCommand(name: string): Command {
  let command = ralphProgram();
  for (const word of name.split(' ')) command = command.commands.find((c) => c.name() === word)!;
  return command;
}

/**
 * What is asked before commander reads a verb: help (`ralph help <verb>`, `--help` or `-h`
 * anywhere before `--`), the version, completion's candidates, and a verb that does not exist
 * (with the closest one).
 */
function parseAround(argv: readonly string[], cwd: string): CliCommand | readonly string[] {
  const [first, ...rest] = argv;
  if (first === '__complete') {
    const at = rest.indexOf('--workspace');
    return { kind: 'complete', workspace: at >= 0 && rest[at + 1] ? rest[at + 1] : cwd, words: rest.length ? rest : [''] };
  }
  if (first === 'help') {
    const words = rest.filter((w) => !w.startsWith('-'));
    if (words.length === 0) return words.length < rest.length ? { kind: 'help', verb: 'help' } : { kind: 'help' };
    const named = verbOf(words);
    if (named && 'verb' in named) return ['help', named.verb];
    throw new UsageError(unknownVerb(named ?? { unknown: rest.join(' ') }));
  }
  const options = argv.slice(0, argv.includes('--') ? argv.indexOf('--') : argv.length);
  const named = verbOf(argv);
  if (named && !('verb' in named)) throw new UsageError(unknownVerb(named));
  if (options.includes('--help') || options.includes('-h')) return named ? { kind: 'help', verb: named.verb } : { kind: 'help' };
  if (options.includes('--version') || first === '-V') return { kind: 'version' };
  if (!argv.some((word) => !word.startsWith('-'))) return { kind: 'help' };
  if (named && !verbNamed(named.verb)) {
    const subs = verbWords().get(named.verb) ?? [];
    throw new UsageError(`ralph ${named.verb} needs one of its verbs: ${subs.join(', ')}`);
  }
  return argv;
}

/** `unknown command "stauts": did you mean \`ralph status\`?` */
function unknownVerb(named: { unknown: string; within?: string; suggestion?: string }): string {
  const what = named.within ? `unknown ${named.within} command "${named.unknown}"` : `unknown command "${named.unknown}"`;
  const full = named.suggestion && (named.within ? `${named.within} ${named.suggestion}` : named.suggestion);
  return full ? `${what}: did you mean \`ralph ${full}\`?` : `${what}: see ralph --help`;
}

/** The command `argv` (the words after `ralph`) asks for; a mistake in it is a UsageError. */
export function parseCli(argv: readonly string[], cwd: string): CliCommand {
  const around = parseAround(argv, cwd);
  if (!Array.isArray(around)) return around as CliCommand;
  const found: { command?: CliCommand } = {};
  try {
    ralphProgram(cwd, found).parse(around as string[], { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) return { kind: 'help' };
    throw error;
  }
  if (!found.command) return { kind: 'help' };
  return found.command;
}
