import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { CliCommand } from './args';
import { mainHelp, optionsOf, verbHelp } from './help';
import type { CliIo } from './io';
import { type Shell, SHELLS, VERBS, verbWords } from './verbs';

export { SHELLS, type Shell };

/**
 * The completion scripts: each asks `ralph __complete <words…>` for the candidates of the word
 * being typed (as gh and cobra do), so the verbs, their options and the workspace's task ids come
 * from the CLI itself and a script never goes stale.
 */
export function completionScript(shell: Shell): string {
  switch (shell) {
    case 'bash':
      return `# ralph completion for bash: source <(ralph completion bash)
_ralph() {
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$("\${COMP_WORDS[0]}" __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "\${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _ralph ralph`;
    case 'zsh':
      return `#compdef ralph
# ralph completion for zsh: source <(ralph completion zsh)
_ralph() {
  local -a candidates
  candidates=("\${(@f)$("\${words[1]}" __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -- $candidates
}
compdef _ralph ralph`;
    case 'fish':
      return `# ralph completion for fish: ralph completion fish | source
complete -c ralph -f -a '(ralph __complete (commandline -opc)[2..-1] (commandline -ct))'`;
  }
}

/**
 * The candidates for the last of `words` (the words after `ralph`, the one being typed last,
 * possibly empty): verbs, sub-verbs, options, or the workspace's task ids where a verb takes one.
 */
export async function completions(words: readonly string[], workspace: string): Promise<string[]> {
  const before = words.slice(0, -1);
  const verbs = verbWords();
  if (before.length === 0) return [...verbs.keys(), '--help', '--version'];
  const [first, second] = before;
  const subs = verbs.get(first) ?? [];
  if (first === 'help') return before.length === 1 ? [...verbs.keys()] : subs;
  if (first === 'completion') return before.length === 1 ? ['bash', 'zsh', 'fish'] : [];
  if (subs.length > 0 && before.length === 1) return subs;
  const verb = subs.length > 0 ? `${first} ${second}` : first;
  const last = before.at(-1);
  if (last === '--task' || last === '--depends-on') return taskIds(workspace);
  if (last === '--workspace') return [];
  // an option with choices (--agent, --type, --review…): its values
  const option = VERBS.find((v) => v.name === verb)?.options?.find((o) => last !== undefined && o.flags.split(/[ ,]+/).includes(last));
  if (option?.choices) return [...option.choices];
  if (option && /[<[]/.test(option.flags)) return [];
  const takesId = VERBS.find((v) => v.name === verb)?.taskId === true;
  const argsSoFar = before.slice(verb.split(' ').length).filter((w) => !w.startsWith('-'));
  const ids = takesId && argsSoFar.length === 0 ? await taskIds(workspace) : [];
  return [...ids, ...optionsOf(verb).filter((o) => o !== '--workspace'), '--workspace', '--help'];
}

/** The task ids of the workspace's store; none when it has no readable one. */
async function taskIds(workspace: string): Promise<string[]> {
  try {
    const store = JSON.parse(await fs.readFile(path.join(workspace, '.ralph', 'tasks.json'), 'utf8')) as { tasks?: { id?: unknown }[] };
    return (store.tasks ?? []).map((t) => t.id).filter((id): id is string => typeof id === 'string');
  } catch {
    return [];
  }
}

/** `ralph help [<verb>]`, `ralph completion <shell>` and the completion scripts' `ralph __complete <words…>`. */
export async function helpCommand(command: Extract<CliCommand, { kind: 'help' | 'completion' | 'complete' }>, io: CliIo): Promise<number> {
  if (command.kind === 'help') io.out(command.verb ? verbHelp(command.verb) : mainHelp());
  else if (command.kind === 'completion') io.out(completionScript(command.shell));
  else for (const candidate of await completions(command.words, command.workspace)) io.out(candidate);
  return 0;
}
