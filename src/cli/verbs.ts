/**
 * The verbs of `ralph`, once: their group and one-line summary for `ralph --help`, their examples
 * for `ralph help <verb>`, what shell completion offers, and the closest verb to a mistyped one.
 * Each verb's usage and options are its entry in the usage texts (`USAGE` and the families'),
 * written beside each verb's parser, from which `docs/cli.md` is generated.
 */

/** The shells `ralph completion` writes a script for. */
export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The groups of `ralph --help`, in order. */
export const GROUPS = {
  tasks: 'Tasks',
  runs: 'Runs',
  person: 'The person (answers and review)',
  forge: 'The forge (GitHub Actions)',
  setup: 'Set-up and the shell',
} as const;

export interface Verb {
  /** The words of the verb: `run`, `task retry`. */
  name: string;
  group: keyof typeof GROUPS;
  summary: string;
  examples?: string[];
  /** It takes a task id as its first argument (completion offers the ids). */
  taskId?: boolean;
}

export const VERBS: readonly Verb[] = [
  {
    name: 'task add',
    group: 'tasks',
    summary: 'add a task; prints its id',
    examples: ['ralph task add "Fix login" --prompt "…" --promise "npm test passes"'],
  },
  { name: 'task list', group: 'tasks', summary: 'list the tasks', examples: ['ralph task list --json'] },
  {
    name: 'task import',
    group: 'tasks',
    summary: 'one task per open GitHub issue',
    examples: ['ralph task import --github acme/widgets --label ralph'],
  },
  { name: 'task edit', group: 'tasks', summary: "change a task's fields", taskId: true, examples: ['ralph task edit T-001 --priority 1'] },
  { name: 'task retry', group: 'tasks', summary: 'run a stopped task again', taskId: true, examples: ['ralph task retry T-001 --fresh'] },
  { name: 'task unblock', group: 'tasks', summary: 'make a blocked task resumable', taskId: true },
  { name: 'task cancel', group: 'tasks', summary: 'stop a task from being picked again', taskId: true },
  {
    name: 'task increase-max',
    group: 'tasks',
    summary: 'raise the limit that ended a task',
    taskId: true,
    examples: ['ralph task increase-max T-001 --by 5'],
  },
  { name: 'task delete', group: 'tasks', summary: 'remove a task and its checkpoint', taskId: true },
  { name: 'task rollback', group: 'tasks', summary: "revert a task's own commits", taskId: true },
  { name: 'task cleanup', group: 'tasks', summary: "remove a stopped task's kept worktree", taskId: true },
  { name: 'plan', group: 'tasks', summary: 'propose tasks from a document', examples: ['ralph plan docs/prd.md --section "Login"'] },
  {
    name: 'run',
    group: 'runs',
    summary: 'run one task, or every ready task',
    examples: ['ralph run', 'ralph run --task T-001 --unattended', 'ralph run --agent claude-code'],
  },
  { name: 'status', group: 'runs', summary: 'tasks by status, the run, what waits for you', examples: ['ralph status --json'] },
  {
    name: 'task answer',
    group: 'person',
    summary: "answer a task's question",
    taskId: true,
    examples: ['ralph task answer T-001 "use port 8080"'],
  },
  { name: 'task council', group: 'person', summary: "convene the bug council on a task's history", taskId: true },
  { name: 'review list', group: 'person', summary: 'tasks waiting for your review' },
  { name: 'review diff', group: 'person', summary: 'exactly what a task would land', taskId: true },
  { name: 'review approve', group: 'person', summary: 'land a reviewed task', taskId: true },
  { name: 'review changes', group: 'person', summary: 'send a task back with your feedback', taskId: true },
  { name: 'review reject', group: 'person', summary: "drop a task's work", taskId: true },
  {
    name: 'gate',
    group: 'forge',
    summary: 'run the required gates against the base commit',
    examples: ['ralph gate --base origin/main --json'],
  },
  { name: 'ci init', group: 'forge', summary: 'write the GitHub Actions workflows' },
  { name: 'remote run', group: 'forge', summary: 'run the ready tasks as GitHub Actions jobs' },
  { name: 'remote status', group: 'forge', summary: 'where each remote task stands' },
  { name: 'init', group: 'setup', summary: 'create .ralph/ (and a git repository if missing)', examples: ['ralph init'] },
  { name: 'schema', group: 'setup', summary: 'write the JSON schemas of config.json and tasks.json' },
  {
    name: 'hook pre-tool-use',
    group: 'setup',
    summary: "an agent CLI's hook: Ralph's command rules judge its tool call",
  },
  {
    name: 'hook pre-compact',
    group: 'setup',
    summary: "an agent CLI's hook: its context is full, the session ends",
  },
  {
    name: 'mcp',
    group: 'setup',
    summary: "Ralph's signal tools as an MCP server (stdio), for an agent CLI's session",
    examples: ['claude mcp add ralph -- ralph mcp'],
  },
  {
    name: 'doctor',
    group: 'setup',
    summary: 'what a run here needs (git, the sandbox, models, gates) and how to get it',
    examples: ['ralph doctor', 'ralph doctor --json'],
  },
  {
    name: 'completion',
    group: 'setup',
    summary: 'a completion script for bash, zsh or fish',
    examples: ['source <(ralph completion bash)'],
  },
  { name: 'help', group: 'setup', summary: "a verb's usage, options and exit codes", examples: ['ralph help run'] },
];

/** The verbs' first words (`task`, `run`…), and for those with sub-verbs, the second words. */
export function verbWords(): Map<string, string[]> {
  const words = new Map<string, string[]>();
  for (const { name } of VERBS) {
    const [first, second] = name.split(' ');
    const subs = words.get(first) ?? [];
    if (second) subs.push(second);
    words.set(first, subs);
  }
  return words;
}

/**
 * The verb `argv` names, from its leading words (options first are not looked through):
 * `{ verb }` when known, `{ unknown, suggestion }` when a word is not a verb, undefined when
 * argv does not start with a word.
 */
export function verbOf(argv: readonly string[]): { verb: string } | { unknown: string; within?: string; suggestion?: string } | undefined {
  const [first, second] = argv;
  if (first === undefined || first.startsWith('-')) return undefined;
  const words = verbWords();
  const subs = words.get(first);
  if (!subs) return { unknown: first, suggestion: closest(first, [...words.keys()]) };
  if (subs.length === 0) return { verb: first };
  // `task` with no sub-verb, or an option next: the family's own parser says what is missing
  if (second === undefined || second.startsWith('-')) return { verb: first };
  if (subs.includes(second)) return { verb: `${first} ${second}` };
  return { unknown: second, within: first, suggestion: closest(second, subs) };
}

/** The verb closest to `word` (a typo, a prefix), if any is close enough to be what was meant. */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = name.startsWith(word) && word.length >= 2 ? 1 : editDistance(word, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(best.name.length / 3)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++)
      row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length];
}
