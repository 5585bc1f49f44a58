import { AGENT_OPTION, EXITS, ID_ARG, JSON_OPTION, jsonIf, type OptionSpec, usage, type Verb, YES_OPTION } from './verbSpec';

/** `--json` of the person's verbs that act on one task. */
const OUTCOME_JSON: OptionSpec = {
  ...JSON_OPTION,
  description: 'print the outcome as JSON ({ taskId, action, ok, exitCode, message, task })',
};

/** `ralph plan`, `ralph run`, `ralph status` and the person's verbs: their part of the one definition. */
export const RUN_VERBS: Verb[] = [
  {
    name: 'plan',
    group: 'tasks',
    summary: 'propose tasks from a document',
    description:
      'The model reads the document and the repository layout and proposes tasks (request, promise, check, type, complexity, dependencies); nothing is saved until accepted: a terminal asks y/N, --yes accepts, otherwise the proposal is kept in .ralph/reports/plans/<run>.json. --accept <plan.json> adds a saved (and perhaps edited) proposal to .ralph/tasks.json.',
    args: [{ name: '[document]', description: 'the document to plan from (file.md)' }],
    options: [
      { flags: '--section <heading>', description: 'plan only this section of the document' },
      { flags: '--accept <plan.json>', description: 'add a saved proposal instead of planning' },
      { ...YES_OPTION, description: 'accept the proposal without asking' },
      JSON_OPTION,
    ],
    exits:
      'Exit codes: 0 planned (and accepted, when asked) · 1 no usable plan, or refused (a dependency cycle, named) · 2 usage or configuration error',
    examples: ['ralph plan docs/prd.md --section "Login"', 'ralph plan --accept .ralph/reports/plans/<run>.json'],
    build: ({ args: [document], opts, workspace }) => {
      const accept = opts.accept as string | undefined;
      const section = opts.section as string | undefined;
      if (accept !== undefined && (document !== undefined || section !== undefined))
        throw usage('plan --accept <plan.json> takes no document and no --section');
      if (accept === undefined && document === undefined)
        throw usage('plan needs a document: ralph plan <file.md> (or --accept <plan.json>)');
      return { kind: 'plan', workspace, document, section, accept, yes: opts.yes === true, json: opts.json === true };
    },
  },
  {
    name: 'run',
    group: 'runs',
    summary: 'run one task, or every ready task',
    description:
      'Without --yes and --approve-commands a terminal asks y/N; without a terminal they are refused. Unattended (--unattended, no terminal, CI or GITHUB_ACTIONS set) the run never waits for a person: a task whose landing your own uncommitted files are in the way of stays checked, waiting to land, and the run ends naming the files and the command that lands it.',
    options: [
      { flags: '--task <id>', description: 'run only this task (default: every ready task, autopilot)' },
      { ...JSON_OPTION, description: "print one event per line, as JSON (the run log's events)" },
      { ...YES_OPTION, description: 'approve every caio action (push, pull request, issue, notification)' },
      {
        flags: '--approve-commands',
        description:
          'approve every command of the agent that the command rules gate (push, git reset --hard, publish…, or every command in semi-auto)',
      },
      { flags: '--unattended', description: 'nobody is there to ask: the run never waits for a person' },
      { flags: '--force', description: 'take over a run.lock that no live Ralph run holds' },
      AGENT_OPTION("the agent of every task of this run (over the task's and the config's)"),
      {
        flags: '--ci',
        description:
          'run the task as a CI job (also when GITHUB_ACTIONS=true): on branch ralph/<id>, its state on ralph-state/<id>, both pushed; opens or updates its pull request and enables auto-merge when done',
      },
    ],
    exits:
      'Exit codes: 0 every task run ended done · 1 one ended failed, timeout or halted (or the run halted) · 3 one ended blocked, needs_help or review, or waits to land (it waits for you) · 2 usage or configuration error',
    examples: ['ralph run', 'ralph run --task T-001 --unattended', 'ralph run --agent claude-code'],
    build: ({ opts, workspace }) => {
      if (opts.ci && !opts.task) throw usage('run --ci needs --task ID: a CI job runs one task');
      return {
        kind: 'run',
        workspace,
        taskId: opts.task as string | undefined,
        json: opts.json === true,
        yes: opts.yes === true,
        approveCommands: opts.approveCommands === true,
        force: opts.force === true,
        ...(opts.ci ? { ci: true } : {}),
        ...(opts.unattended ? { unattended: true } : {}),
        ...(opts.agent ? { agent: opts.agent as never } : {}),
      };
    },
  },
  {
    name: 'status',
    group: 'runs',
    summary: 'tasks by status, the run, what waits for you',
    options: [{ ...JSON_OPTION, description: 'print it as JSON (docs/cli.md, Machine-readable output)' }],
    exits: EXITS.plain,
    examples: ['ralph status --json'],
    build: ({ opts, workspace }) => ({ kind: 'status', workspace, json: opts.json === true }),
  },
  {
    name: 'task answer',
    group: 'person',
    summary: "answer a task's question",
    description:
      "Answers the task's question (NEEDS_HELP, a block, a command nobody could approve); it resumes from its checkpoint with the answer pinned. Without text a terminal asks for it.",
    args: [ID_ARG, { name: '[text]', description: 'the answer', quote: true }],
    options: [
      { flags: '--approve', description: 'approve the command it waits on' },
      { flags: '--refuse', description: 'refuse the command it waits on' },
      { flags: '--part-of-task', description: 'the failing tests it asks about are its to fix' },
      { flags: '--unrelated', description: 'the failing tests it asks about are known failures it may land without' },
      OUTCOME_JSON,
    ],
    exits: EXITS.person,
    taskId: true,
    examples: ['ralph task answer T-001 "use port 8080"'],
    build: ({ args: [taskId, text], opts, workspace }) => {
      const given = (['approve', 'refuse', 'partOfTask', 'unrelated'] as const).filter((k) => opts[k]);
      const flag = (k: string) => `--${k.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
      if (given.length > 1) throw usage(`give ${given.map(flag).join(' or ')}, not ${given.length === 2 ? 'both' : 'several'}`);
      const approved = opts.approve ? true : opts.refuse ? false : undefined;
      const verdict = opts.partOfTask ? 'part' : opts.unrelated ? 'unrelated' : undefined;
      return {
        kind: 'task.answer',
        workspace,
        taskId: taskId as string,
        ...(text !== undefined ? { text } : {}),
        ...(approved !== undefined ? { approved } : {}),
        ...(verdict !== undefined ? { verdict } : {}),
        ...jsonIf(opts),
      };
    },
  },
  {
    name: 'task council',
    group: 'person',
    summary: "convene the bug council on a task's history",
    description: "Its plan is the task's next iteration's first feedback (needs the model, like run).",
    args: [ID_ARG],
    options: [{ flags: '--note <text>', description: 'what the council should know' }, OUTCOME_JSON],
    exits: EXITS.person,
    taskId: true,
    build: ({ args: [taskId], opts, workspace }) => ({
      kind: 'task.council',
      workspace,
      taskId: taskId as string,
      ...(opts.note ? { note: opts.note as string } : {}),
      ...jsonIf(opts),
    }),
  },
  {
    name: 'review list',
    group: 'person',
    summary: 'tasks waiting for your review',
    description: 'Tasks waiting for review (merge.review: manual), with what was checked.',
    options: [JSON_OPTION],
    exits: EXITS.person,
    build: ({ opts, workspace }) => ({ kind: 'review.list', workspace, json: opts.json === true }),
  },
  {
    name: 'review diff',
    group: 'person',
    summary: 'exactly what a task would land',
    description:
      "Exactly what would land on the target's tip (or, for any other task, what it landed or what its worktree holds now), as a unified diff.",
    args: [ID_ARG],
    options: [{ flags: '--stat', description: 'the files and their changed lines only' }],
    exits: EXITS.person,
    taskId: true,
    build: ({ args: [taskId], opts, workspace }) => ({
      kind: 'review.diff',
      workspace,
      taskId: taskId as string,
      stat: opts.stat === true,
    }),
  },
  {
    name: 'review approve',
    group: 'person',
    summary: 'land a reviewed task',
    description:
      'Lands it: as checked while the target has not moved, else re-checked on the new tip; while a run holds the workspace, that run lands it.',
    args: [ID_ARG],
    options: [OUTCOME_JSON],
    exits: EXITS.person,
    taskId: true,
    build: ({ args: [taskId], opts, workspace }) => ({ kind: 'review.approve', workspace, taskId: taskId as string, ...jsonIf(opts) }),
  },
  {
    name: 'review changes',
    group: 'person',
    summary: 'send a task back with your feedback',
    description: 'Sends it back to its agent with the feedback pinned in its next context.',
    args: [ID_ARG, { name: '[feedback]', description: 'what to change', quote: true }],
    options: [OUTCOME_JSON],
    exits: EXITS.person,
    taskId: true,
    build: ({ args: [taskId, text], opts, workspace }) => {
      if (!text?.trim()) throw usage(`review changes needs the feedback: ralph review changes ${taskId} "<what to change>"`);
      return { kind: 'review.changes', workspace, taskId: taskId as string, text, ...jsonIf(opts) };
    },
  },
  {
    name: 'review reject',
    group: 'person',
    summary: "drop a task's work",
    description: 'Drops its branch and worktree; the task is cancelled.',
    args: [ID_ARG],
    options: [YES_OPTION, OUTCOME_JSON],
    exits: EXITS.person,
    taskId: true,
    build: ({ args: [taskId], opts, workspace }) => ({
      kind: 'review.reject',
      workspace,
      taskId: taskId as string,
      yes: opts.yes === true,
      ...jsonIf(opts),
    }),
  },
];
