import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { VERBS, verbWords } from './verbs';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

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

/** Options offered after a verb (the common ones; each verb's own are in its help). */
const OPTIONS: Record<string, string[]> = {
  run: ['--task', '--json', '--yes', '--approve-commands', '--unattended', '--force', '--ci'],
  status: ['--json'],
  'task list': ['--json'],
  'task add': ['--prompt', '--promise', '--max-iterations', '--priority', '--depends-on', '--type', '--complexity', '--review', '--check'],
  'task retry': ['--fresh'],
  'review list': ['--json'],
  gate: ['--base', '--task', '--json'],
};

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
  const takesId = VERBS.find((v) => v.name === verb)?.taskId === true;
  const argsSoFar = before.slice(verb.split(' ').length).filter((w) => !w.startsWith('-'));
  const ids = takesId && argsSoFar.length === 0 ? await taskIds(workspace) : [];
  return [...ids, ...(OPTIONS[verb] ?? []), '--workspace', '--help'];
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
