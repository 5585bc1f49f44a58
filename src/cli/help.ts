import { USAGE } from './args';
import { FORGE_USAGE } from './forgeArgs';
import { IMPORT_USAGE } from './importCommand';
import { PERSON_USAGE } from './personArgs';
import { PLAN_USAGE } from './planCommand';
import { TASK_ACTIONS_USAGE } from './taskActionArgs';
import { GROUPS, type Verb, VERBS } from './verbs';

/** Verbs shown on one row of `ralph --help` (their first word, the others' second words joined). */
const ROWS: Record<string, string> = {
  'task retry': 'act on one task: run it again, unblock, cancel, edit, raise its limit, delete, roll back, clean up',
  'review list': 'manual review: list, see exactly what would land, approve, send back, reject',
  'remote run': 'tasks as GitHub Actions jobs: dispatch and follow, or see where they stand',
};
const JOINED: Record<string, readonly string[]> = {
  'task retry': ['task edit', 'task unblock', 'task cancel', 'task increase-max', 'task delete', 'task rollback', 'task cleanup'],
  'review list': ['review diff', 'review approve', 'review changes', 'review reject'],
  'remote run': ['remote status'],
};

/** `ralph --help`: what it is, the verbs grouped, one line each. */
export function mainHelp(): string {
  const hidden = new Set(Object.values(JOINED).flat());
  const lines = ['ralph — runs coding agents in a loop until your own tests say a task is done', '', 'Usage: ralph <verb> [options]'];
  for (const [group, title] of Object.entries(GROUPS)) {
    lines.push('', `${title}:`);
    for (const verb of VERBS.filter((v) => v.group === group && !hidden.has(v.name))) {
      const joined = JOINED[verb.name];
      const name = joined
        ? `${verb.name.split(' ')[0]} ${[verb.name, ...joined].map((n) => n.split(' ')[1]).join('|')}${verb.taskId ? ' <id>' : ''}`
        : verb.name;
      const text = ROWS[verb.name] ?? verb.summary;
      lines.push(name.length > 18 ? `  ${name}\n  ${' '.repeat(19)}${text}` : `  ${name.padEnd(19)}${text}`);
    }
  }
  lines.push(
    '',
    "Run 'ralph help <verb>' (or 'ralph <verb> --help') for its options, defaults and exit codes.",
    'Every verb takes --workspace DIR (default: the current directory); --version prints the version.',
  );
  return lines.join('\n');
}

/** The exit codes of a verb whose usage names none of its own. */
const OTHER_EXITS = 'Exit codes: 0 done · 1 it could not be done · 2 usage or configuration error';

/** The usage texts, each with the exit codes that apply to its verbs. */
function families(): { text: string; exits: string }[] {
  const exitsOf = (text: string) => /^\s*Exit codes:[\s\S]*$/m.exec(text)?.[0].replace(/^\s+/, '') ?? '';
  const core = USAGE.slice(USAGE.indexOf('Commands:\n') + 'Commands:\n'.length);
  const own = [IMPORT_USAGE, TASK_ACTIONS_USAGE, PERSON_USAGE, PLAN_USAGE, FORGE_USAGE].map((text) => ({ text, exits: exitsOf(text) }));
  return [...own, { text: core, exits: '' }];
}

/** The entries of a usage text: a line indented by two spaces starts one; a family's exit codes end it. */
function entries(text: string): string[][] {
  const found: string[][] = [];
  for (const line of text.split('\n')) {
    if (/^\s*Exit codes:/.test(line) || /^\S/.test(line)) {
      if (found.length > 0) found.push([]); // what follows belongs to no entry
      continue;
    }
    if (/^ {2}\S/.test(line)) found.push([line]);
    else if (found.length > 0 && found.at(-1)!.length > 0 && line.trim()) found.at(-1)!.push(line);
  }
  return found.filter((e) => e.length > 0);
}

/** The words of an entry's verb: up to its first argument or option. */
function verbOfEntry(head: string): string {
  const words: string[] = [];
  for (const word of head.trim().split(/ {2,}/)[0].split(/\s+/)) {
    if (/^[<["-]/.test(word) || /[|]/.test(word)) break;
    words.push(word);
  }
  return words.join(' ');
}

/** Every verb the usage texts have an entry for (a test holds them to `VERBS`). */
export function usageVerbs(): string[] {
  return [...new Set(families().flatMap((f) => entries(f.text).map((e) => verbOfEntry(e[0]))))];
}

/** The options a verb's usage names (`--task`, `--json`…), for completion. */
export function optionsOf(verb: string): string[] {
  // the synopsis column of the synopsis and option lines; the descriptions' words are not options
  const columns = (usageOf(verb)?.lines ?? []).map((l) => l.trim().split(/ {2,}/)[0]).filter((c) => c.startsWith(verb) || /^[[-]/.test(c));
  return [...new Set(columns.join(' ').match(/--[a-z][a-z-]*/g) ?? [])];
}

/** A verb's usage entries (its synopsis and options, as the usage texts say them) and its exit codes. */
function usageOf(verb: string): { lines: string[]; exits: string } | undefined {
  for (const family of families()) {
    const mine = entries(family.text).filter((e) => verbOfEntry(e[0]) === verb);
    // the families' texts are inside USAGE: its own exit codes, its last block, are run's
    const exits = family.exits || (verb === 'run' ? USAGE.slice(USAGE.lastIndexOf('\nExit codes:') + 1) : OTHER_EXITS);
    if (mine.length > 0) return { lines: mine.flat().map((l) => l.slice(2)), exits };
  }
  return undefined;
}

/** The verbs under a first word (`task`: `task add`, `task list`…). */
const under = (word: string): Verb[] => VERBS.filter((v) => v.name.startsWith(`${word} `));

/** `ralph <verb>`'s synopsis lines, as an error shows them. */
export function usageLine(verb: string): string {
  if (under(verb).length > 0)
    return `Usage: ralph ${verb} ${under(verb)
      .map((v) => v.name.split(' ')[1])
      .join('|')} …\nRun 'ralph help ${verb} <verb>' for one of them.`;
  const usage = usageOf(verb);
  const heads = usage ? usage.lines.filter((l) => /^\S/.test(l)).map((l) => `ralph ${l.split(/ {2,}/)[0].trim()}`) : [`ralph ${verb}`];
  return `Usage: ${heads.join('\n       ')}\nRun 'ralph help ${verb}' for its options.`;
}

/** `ralph help <verb>`: its usage, options with their defaults, exit codes and an example or two. */
export function verbHelp(verb: string): string {
  if (under(verb).length > 0)
    return [
      `ralph ${verb} <verb>`,
      '',
      ...under(verb).map((v) => `  ${v.name.padEnd(19)}${v.summary}`),
      '',
      usageLine(verb).split('\n')[1],
    ].join('\n');
  const known: Verb | undefined = VERBS.find((v) => v.name === verb);
  const usage = usageOf(verb);
  const lines = [`ralph ${verb}${known ? ` — ${known.summary}` : ''}`, ''];
  if (usage) lines.push('Usage:', ...usage.lines.map((l) => `  ${l}`));
  else lines.push(`Usage: ralph ${verb}`);
  lines.push('', 'Every verb takes --workspace DIR (default: the current directory).');
  if (usage?.exits) lines.push(usage.exits.replace(/\n\s+/g, '\n  '));
  if (known?.examples?.length) lines.push('', 'Examples:', ...known.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}
