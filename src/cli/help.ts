import { longFlag, synopsis, verbCommand } from './args';
import { GROUPS, type Verb, verbNamed, VERBS } from './verbs';

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

/** `text` wrapped at `width` columns, its later lines indented by `indent`. */
function wrap(text: string, width = 100, indent = '  '): string {
  const lines = [''];
  for (const word of text.split(/\s+/)) {
    if (lines.at(-1)!.trim().length > 0 && lines.at(-1)!.length + word.length + 1 > width) lines.push(`${indent}${word}`);
    else lines[lines.length - 1] += `${lines.at(-1)!.trim().length > 0 ? ' ' : ''}${word}`;
  }
  return lines.join('\n');
}

/** The options a verb takes (`--task`, `--json`…), for completion. */
export function optionsOf(verb: string): string[] {
  return (verbNamed(verb)?.options ?? []).map(longFlag);
}

/** The verbs under a first word (`task`: `task add`, `task list`…). */
const under = (word: string): Verb[] => VERBS.filter((v) => v.name.startsWith(`${word} `));

/** `ralph <verb>`'s synopsis, as an error shows it. */
export function usageLine(verb: string): string {
  if (under(verb).length > 0)
    return `Usage: ralph ${verb} ${under(verb)
      .map((v) => v.name.split(' ')[1])
      .join('|')} …\nRun 'ralph help ${verb} <verb>' for one of them.`;
  const known = verbNamed(verb);
  return `Usage: ${known ? synopsis(known) : `ralph ${verb}`}\nRun 'ralph help ${verb}' for its options.`;
}

/**
 * `ralph help <verb>`: its summary, then commander's page of it (its usage, description,
 * arguments, options with their choices and defaults), its exit codes and an example or two.
 */
export function verbHelp(verb: string): string {
  if (under(verb).length > 0)
    return [
      `ralph ${verb} <verb>`,
      '',
      ...under(verb).map((v) => `  ${v.name.padEnd(19)}${v.summary}`),
      '',
      usageLine(verb).split('\n')[1],
    ].join('\n');
  const known = verbNamed(verb);
  if (!known) return usageLine(verb);
  const lines = [`ralph ${verb} — ${known.summary}`, '', verbCommand(verb).helpInformation().replace(/ +$/gm, '').trimEnd(), ''];
  lines.push('Every verb takes --workspace DIR (default: the current directory).', wrap(known.exits));
  if (known.examples?.length) lines.push('', 'Examples:', ...known.examples.map((e) => `  ${e}`));
  return lines.join('\n');
}
