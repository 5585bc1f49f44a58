import { parseRepo } from '../core/git/issueRefs';
import type { EditFields } from '../core/tasks/actionRules';
import { PROOF_KINDS, type ProofKind, TASK_TYPES, type TaskType } from '../core/tasks/schema';
import { type TaskActionCommand, type TaskActionVerb } from './command';
import {
  AGENT_OPTION,
  aNumber,
  EXITS,
  ID_ARG,
  JSON_OPTION,
  jsonIf,
  list,
  type OptionSpec,
  type Parsed,
  usage,
  type Verb,
  wholeNumber,
  YES_OPTION,
} from './verbSpec';

/** The task's fields `task add` sets and `task edit` changes, once for both. */
const FIELD_OPTIONS: OptionSpec[] = [
  { flags: '--priority <n>', description: 'lower runs first', parse: aNumber },
  {
    flags: '--max-iterations <n>',
    description: 'the most iterations it may run (default: loop.maxIterations of the config)',
    parse: wholeNumber(1),
  },
  { flags: '--type <type>', description: 'what kind of change it is', choices: TASK_TYPES },
  { flags: '--complexity <n>', description: 'how hard, 1 to 14 (routes it to a model tier)', parse: wholeNumber(1, 14) },
  { flags: '--depends-on <id>', description: 'a task that must be done first (repeat it, or ID,ID)', repeat: true },
  { flags: '--review <mode>', description: 'manual: its finished work waits for your review before it lands', choices: ['manual', 'auto'] },
  { flags: '--check <command>', description: 'an executable promise: a command run as a required gate of this task only' },
  { flags: '--proof <kind>', description: 'the fail-to-pass proof (default: for a bugfix only)', choices: PROOF_KINDS },
  { flags: '--proof-test <glob>', description: "the task's own test files (repeatable)", repeat: true },
  {
    flags: '--known-failure <test>',
    description: 'a failing test a person declares unrelated to this task, named as printed (repeatable)',
    repeat: true,
  },
  {
    flags: '--allow-gate-changes <gate>',
    description: 'let the task change what a gate checks ("all" for every gate; reported)',
    repeat: true,
  },
];

/** The fields `opts` gives (only those given). */
function fieldsOf(opts: Record<string, unknown>): Omit<EditFields, 'title' | 'prompt' | 'promise'> {
  const fields: Omit<EditFields, 'title' | 'prompt' | 'promise'> = {};
  if (opts.priority !== undefined) fields.priority = opts.priority as number;
  if (opts.maxIterations !== undefined) fields.maxIterations = opts.maxIterations as number;
  if (opts.type !== undefined) fields.type = opts.type as TaskType;
  if (opts.complexity !== undefined) fields.complexity = opts.complexity as number;
  if (opts.dependsOn !== undefined) fields.dependsOn = list(opts.dependsOn);
  if (opts.review !== undefined) fields.review = opts.review as 'auto' | 'manual';
  if (opts.check !== undefined) fields.check = (opts.check as string).trim();
  if (opts.proof !== undefined) fields.proof = opts.proof as ProofKind;
  // given as "" it clears them
  if (opts.proofTest !== undefined) fields.proofTests = list(opts.proofTest);
  if (opts.knownFailure !== undefined) fields.knownFailures = (opts.knownFailure as string[]).map((n) => n.trim()).filter(Boolean);
  if (opts.allowGateChanges !== undefined) {
    const names = (opts.allowGateChanges as string[]).map((v) => v.trim());
    if (names.some((n) => n === '')) throw usage('--allow-gate-changes needs "all" or a gate name');
    fields.allowGateChanges = names.includes('all') ? true : names;
  }
  return fields;
}

function taskAdd({ args, opts, workspace }: Parsed): ReturnType<Verb['build']> {
  const title = (args[0] ?? '').trim();
  if (!title) throw usage('task add needs a title: ralph task add <title> --prompt <text> --promise <text>');
  if (!opts.prompt) throw usage('task add needs --prompt <text> (the exact request)');
  if (!opts.promise) throw usage('task add needs --promise <text> (the completion criteria)');
  const fields = fieldsOf(opts);
  if (fields.check === '') throw usage("--check needs a command: the task's executable promise, run as a required gate of this task only");
  const { dependsOn, allowGateChanges, proofTests, knownFailures, check, ...rest } = fields;
  return {
    kind: 'task.add',
    workspace,
    title,
    prompt: opts.prompt as string,
    promise: opts.promise as string,
    ...rest,
    ...(typeof check === 'string' ? { check } : {}),
    dependsOn: dependsOn ?? [],
    ...(allowGateChanges !== undefined && allowGateChanges !== false ? { allowGateChanges } : {}),
    ...(proofTests?.length ? { proofTests } : {}),
    ...(knownFailures?.length ? { knownFailures } : {}),
    ...(opts.agent ? { agent: opts.agent as never } : {}),
    ...jsonIf(opts),
  };
}

/** `ralph task <action> <id>`: the action's own fields on top of what every action has. */
function action(name: TaskActionVerb, more?: (opts: Record<string, unknown>, command: TaskActionCommand) => void): Verb['build'] {
  return ({ args, opts, workspace }) => {
    const command: TaskActionCommand = { kind: 'task.action', workspace, action: name, taskId: args[0] as string, yes: opts.yes === true };
    more?.(opts, command);
    return { ...command, ...jsonIf(opts) };
  };
}

function taskEdit(opts: Record<string, unknown>, command: TaskActionCommand): void {
  const fields: EditFields = { ...fieldsOf(opts) };
  for (const key of ['title', 'prompt', 'promise'] as const) if (opts[key] !== undefined) fields[key] = opts[key] as string;
  if (Object.keys(fields).length === 0)
    throw usage(
      'task edit needs at least one of --title, --prompt, --promise, --priority, --max-iterations, --type, --complexity, --depends-on, --review, --check, --proof, --proof-test, --known-failure, --allow-gate-changes',
    );
  command.fields = fields;
}

const ACTION_OPTIONS = [
  YES_OPTION,
  { ...JSON_OPTION, description: 'print the outcome as JSON ({ taskId, action, ok, exitCode, message, task })' },
];

export const TASK_VERBS: Verb[] = [
  {
    name: 'task add',
    group: 'tasks',
    summary: 'add a task; prints its id',
    args: [{ name: '<title...>', description: 'its title (the words are joined)', needs: 'a title' }],
    options: [
      { flags: '--prompt <text>', description: 'the exact request', required: true },
      { flags: '--promise <text>', description: 'the completion criteria, what must be true for it to be done', required: true },
      ...FIELD_OPTIONS,
      AGENT_OPTION('the agent of this task (default: agent.kind of the config)'),
      { ...JSON_OPTION, description: 'print the new task as JSON (default: its id)' },
    ],
    exits: EXITS.plain,
    examples: ['ralph task add "Fix login" --prompt "…" --promise "npm test passes"'],
    build: taskAdd,
  },
  {
    name: 'task list',
    group: 'tasks',
    summary: 'list the tasks',
    options: [{ ...JSON_OPTION, description: 'print the tasks as stored, as JSON' }],
    exits: EXITS.plain,
    examples: ['ralph task list --json'],
    build: ({ opts, workspace }) => ({ kind: 'task.list', workspace, json: opts.json === true }),
  },
  {
    name: 'task import',
    group: 'tasks',
    summary: 'one task per open GitHub issue',
    description:
      'One task per open issue: its text the request, its acceptance criteria the promise, "depends on #N" and task lists the dependsOn, its URL the source; a re-import updates changed issues and never duplicates. An issue without criteria is flagged (a terminal asks for its promise). Token: GITHUB_TOKEN; API: GITHUB_API_URL (GitHub Enterprise).',
    options: [
      { flags: '--github <owner/repo>', description: 'the repository whose issues to import', required: true },
      { flags: '--label <label>', description: 'only issues with this label (repeatable)', repeat: true },
      { flags: '--milestone <name>', description: 'only issues of this milestone' },
      { flags: '--dry-run', description: 'say what would be added or updated; change nothing' },
      JSON_OPTION,
    ],
    exits: 'Exit codes: 0 every issue imported · 3 some flagged · 1 GitHub failed · 2 usage',
    examples: ['ralph task import --github acme/widgets --label ralph'],
    build: ({ opts, workspace }) => {
      if (opts.github === undefined) throw usage('task import needs --github owner/repo');
      const repo = parseRepo(opts.github as string);
      if (!repo) throw usage(`--github must be owner/repo, got "${String(opts.github)}"`);
      const labels = ((opts.label as string[] | undefined) ?? []).map((l) => l.trim());
      if (labels.some((l) => !l)) throw usage('--label needs a label name');
      const milestone = opts.milestone as string | undefined;
      return { kind: 'task.import', workspace, repo, labels, milestone, dryRun: opts.dryRun === true, json: opts.json === true };
    },
  },
  {
    name: 'task edit',
    group: 'tasks',
    summary: "change a task's fields",
    description: '--check "" removes its check; --known-failure "" clears its known failures.',
    args: [ID_ARG],
    options: [
      { flags: '--title <text>', description: 'its title' },
      { flags: '--prompt <text>', description: 'its request' },
      { flags: '--promise <text>', description: 'its completion criteria' },
      ...FIELD_OPTIONS,
      ...ACTION_OPTIONS,
    ],
    exits: EXITS.taskAction,
    taskId: true,
    examples: ['ralph task edit T-001 --priority 1'],
    build: action('edit', taskEdit),
  },
  {
    name: 'task retry',
    group: 'tasks',
    summary: 'run a stopped task again',
    description:
      "Timed out, failed, halted, cancelled, blocked or done → todo, with a fresh counter. A kept worktree is continued in; --fresh drops it and its branch and starts over from the target branch's current tip.",
    args: [ID_ARG],
    options: [{ flags: '--fresh', description: "drop the kept worktree and its branch; start from the target's tip" }, ...ACTION_OPTIONS],
    exits: EXITS.taskAction,
    taskId: true,
    examples: ['ralph task retry T-001 --fresh'],
    build: action('retry', (opts, command) => {
      if (opts.fresh) command.fresh = true;
    }),
  },
  {
    name: 'task unblock',
    group: 'tasks',
    summary: 'make a blocked task resumable',
    description: 'blocked / needs_help → resumable (keeps its iterations and checkpoint).',
    args: [ID_ARG],
    options: ACTION_OPTIONS,
    exits: EXITS.taskAction,
    taskId: true,
    build: action('unblock'),
  },
  {
    name: 'task cancel',
    group: 'tasks',
    summary: 'stop a task from being picked again',
    args: [ID_ARG],
    options: ACTION_OPTIONS,
    exits: EXITS.taskAction,
    taskId: true,
    build: action('cancel'),
  },
  {
    name: 'task increase-max',
    group: 'tasks',
    summary: 'raise the limit that ended a task',
    description:
      'Raises the limit that ended it: its iterations or, after a time-out by the clock, its minutes. A timed-out task becomes resumable.',
    args: [ID_ARG],
    options: [
      { flags: '--by <n>', description: 'by how much (default: 10 iterations, or the configured minutes)' },
      { flags: '--minutes', description: 'raise the time limit (minutes) rather than whichever ended it' },
      ...ACTION_OPTIONS,
    ],
    exits: EXITS.taskAction,
    taskId: true,
    examples: ['ralph task increase-max T-001 --by 5'],
    build: action('increase-max', (opts, command) => {
      if (opts.by !== undefined) command.by = (opts.minutes ? aNumber : wholeNumber(1)!)(opts.by as string, '--by') as number;
      if (opts.minutes) command.minutes = true;
    }),
  },
  {
    name: 'task delete',
    group: 'tasks',
    summary: 'remove a task and its checkpoint',
    description: 'Its commits and reports stay. A terminal asks y/N; without one it needs --yes.',
    args: [ID_ARG],
    options: ACTION_OPTIONS,
    exits: EXITS.taskAction,
    taskId: true,
    build: action('delete'),
  },
  {
    name: 'task rollback',
    group: 'tasks',
    summary: "revert a task's own commits",
    description:
      "Reverts the task's own commits in a new commit (later work is kept), then the task is todo again; refused, changing nothing, on a conflict. A terminal asks y/N; without one it needs --yes.",
    args: [ID_ARG],
    options: ACTION_OPTIONS,
    exits: EXITS.taskAction,
    taskId: true,
    build: action('rollback'),
  },
  {
    name: 'task cleanup',
    group: 'tasks',
    summary: "remove a stopped task's kept worktree",
    description:
      'Removes the kept worktree of a failed, timed-out, halted, blocked or cancelled task (its branch ralph/<id> and status stay); with uncommitted changes in it, only once confirmed (y/N, or --yes).',
    args: [ID_ARG],
    options: ACTION_OPTIONS,
    exits: EXITS.taskAction,
    taskId: true,
    build: action('cleanup'),
  },
];
