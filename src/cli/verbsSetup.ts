import { DEFAULT_WORKFLOW_OPTIONS as DEFAULTS } from '../core/forge/workflowDefaults';
import { SHELLS, type Shell } from './command';
import { EXITS, JSON_OPTION, jsonIf, list, usage, type Verb, wholeNumber } from './verbSpec';

const TOKEN = "The token: GITHUB_TOKEN, else GH_TOKEN, else the GitHub CLI's (gh auth token).";

/** The forge's verbs and those of set-up and the shell: their part of the one definition. */
export const SETUP_VERBS: Verb[] = [
  {
    name: 'gate',
    group: 'forge',
    summary: 'run the required gates against the base commit',
    description:
      "Runs the required gates with integrity against the base commit (in a pull_request / merge_group workflow the event's base by default).",
    options: [
      {
        flags: '--base <commit>',
        description: 'the base commit: sha, branch or tag',
        parse: (value, flag) => {
          if (!/^[^\s-][^\s]*$/.test(value)) throw usage(`${flag} must be a commit (sha, branch or tag), got "${value}"`);
          return value;
        },
      },
      { flags: '--task <id>', description: 'the task whose own gates (its check, its proof) run too' },
      { ...JSON_OPTION, description: 'print the verdict as JSON (docs/cli.md, Machine-readable output)' },
    ],
    exits: 'Exit codes: 0 pass · 1 fail · 2 usage or configuration error',
    examples: ['ralph gate --base origin/main --json'],
    build: ({ opts, workspace }) => ({
      kind: 'gate',
      workspace,
      ...(opts.base ? { base: opts.base as string } : {}),
      ...(opts.task ? { taskId: opts.task as string } : {}),
      json: opts.json === true,
    }),
  },
  {
    name: 'ci init',
    group: 'forge',
    summary: 'write the GitHub Actions workflows',
    description:
      'Writes .github/workflows/ralph.yml (each task a job) and ralph-checks.yml (ralph gate on pull_request and merge_group); existing files are kept unless --force.',
    options: [
      { flags: '--force', description: 'overwrite existing workflow files' },
      { flags: '--runs-on <label>', description: 'the runner label of the jobs', default: DEFAULTS.runsOn },
      {
        flags: '--max-parallel <n>',
        description: 'the most task jobs at once, 1 to 256',
        parse: wholeNumber(1, 256),
        default: String(DEFAULTS.maxParallel),
      },
      { flags: '--node <version>', description: 'the Node.js version of the jobs', default: DEFAULTS.node },
      { ...JSON_OPTION, description: 'print the files (each written, unchanged or kept) and the next steps as JSON' },
    ],
    exits: 'Exit codes: 0 written · 1 a file was kept (it exists and differs; --force writes it) · 2 usage or configuration error',
    build: ({ opts, workspace }) => ({
      kind: 'ci.init',
      workspace,
      force: opts.force === true,
      ...(opts.runsOn ? { runsOn: opts.runsOn as string } : {}),
      ...(opts.maxParallel !== undefined ? { maxParallel: opts.maxParallel as number } : {}),
      ...(opts.node ? { node: opts.node as string } : {}),
      ...jsonIf(opts),
    }),
  },
  {
    name: 'remote run',
    group: 'forge',
    summary: 'run the ready tasks as GitHub Actions jobs',
    description: `Dispatches the ready tasks to GitHub Actions, then follows their jobs, pull requests and merge-queue entries until each is merged or failed; a task whose dependency is not merged yet is dispatched once it is. ${TOKEN}`,
    options: [
      { flags: '--tasks <ids>', description: 'only these tasks (ID,ID or repeated)', repeat: true },
      { flags: '--detach', description: 'dispatch and return without following' },
      JSON_OPTION,
    ],
    exits: EXITS.plain,
    build: ({ opts, workspace }) => {
      const tasks = list(opts.tasks);
      return {
        kind: 'remote.run',
        workspace,
        ...(tasks.length > 0 ? { tasks } : {}),
        detach: opts.detach === true,
        json: opts.json === true,
      };
    },
  },
  {
    name: 'remote status',
    group: 'forge',
    summary: 'where each remote task stands',
    description: `Where each remote task stands (queued, running, PR open, in merge queue, merged, failed), read from GitHub now. ${TOKEN}`,
    options: [JSON_OPTION],
    exits: EXITS.plain,
    build: ({ opts, workspace }) => ({ kind: 'remote.status', workspace, json: opts.json === true }),
  },
  {
    name: 'init',
    group: 'setup',
    summary: 'create .ralph/ (and a git repository if missing)',
    description: 'Creates .ralph/ (config, task store) and a git repository if there is none; what exists is kept.',
    options: [{ ...JSON_OPTION, description: 'print what it did as JSON ({ gitInitialized, created })' }],
    exits: EXITS.plain,
    examples: ['ralph init'],
    build: ({ opts, workspace }) => ({ kind: 'init', workspace, ...(opts.json ? { json: true } : {}) }),
  },
  {
    name: 'schema',
    group: 'setup',
    summary: 'write the JSON schemas of config.json and tasks.json',
    options: [{ flags: '--out <dir>', description: 'the directory to write config.schema.json and tasks.schema.json in', required: true }],
    exits: EXITS.plain,
    examples: ['ralph schema --out .vscode'],
    build: ({ opts, workspace }) => {
      if (!opts.out) throw usage('schema needs --out DIR');
      return { kind: 'schema', workspace, out: opts.out as string };
    },
  },
  {
    name: 'hook pre-tool-use',
    group: 'setup',
    summary: "an agent CLI's hook: Ralph's command rules judge its tool call",
    description: "Run by an agent CLI before each tool call, its call as JSON on stdin: Ralph's command rules judge it.",
    exits: 'Exit codes: 0 allowed · 2 blocked, the reason on stderr',
    build: () => ({ kind: 'hook', event: 'pre-tool-use' }),
  },
  {
    name: 'hook pre-compact',
    group: 'setup',
    summary: "an agent CLI's hook: its context is full, the session ends",
    description: 'Run by an agent CLI when its context is full: the session ends there.',
    exits: 'Exit codes: 0 allowed · 2 blocked, the reason on stderr',
    build: () => ({ kind: 'hook', event: 'pre-compact' }),
  },
  {
    name: 'mcp',
    group: 'setup',
    summary: "Ralph's signal tools as an MCP server (stdio), for an agent CLI's session",
    description: "Serves Ralph's signal tools (ralph_complete, report_progress, report_blocked, ask_for_help) over stdio.",
    exits: EXITS.plain,
    examples: ['claude mcp add ralph -- ralph mcp'],
    build: () => ({ kind: 'mcp' }),
  },
  {
    name: 'doctor',
    group: 'setup',
    summary: 'what a run here needs (git, the sandbox, models, gates) and how to get it',
    description:
      'What a run here needs (git, the sandbox, each model endpoint, what the gates call) and what is missing, with the fix for each.',
    options: [{ ...JSON_OPTION, description: 'print the checks as JSON ({ checks, ok })' }],
    exits: 'Exit codes: 0 all a run needs is there · 1 something needed is missing · 2 usage or configuration error',
    examples: ['ralph doctor', 'ralph doctor --json'],
    build: ({ opts, workspace }) => ({ kind: 'doctor', workspace, json: opts.json === true }),
  },
  {
    name: 'completion',
    group: 'setup',
    summary: 'a completion script for bash, zsh or fish',
    description:
      'Prints a completion script for the shell: verbs, options and the task ids. In ~/.bashrc: source <(ralph completion bash); zsh likewise; fish: ralph completion fish | source.',
    args: [{ name: '[shell]', description: SHELLS.join(', '), needs: 'the shell' }],
    exits: 'Exit codes: 0 printed · 2 usage',
    examples: ['source <(ralph completion bash)'],
    build: ({ args: [shell] }) => {
      if (!(SHELLS as readonly (string | undefined)[]).includes(shell))
        throw usage(`completion needs the shell: ralph completion ${SHELLS.join('|')}`);
      return { kind: 'completion', shell: shell as Shell };
    },
  },
  {
    name: 'help',
    group: 'setup',
    summary: "a verb's usage, options and exit codes",
    description: 'Without a verb, the verbs grouped; also ralph <verb> --help.',
    args: [{ name: '[verb...]', description: 'the verb (its words)' }],
    exits: 'Exit codes: 0 printed · 2 no such verb',
    examples: ['ralph help run', 'ralph help task retry'],
    build: ({ args: [verb] }) => (verb ? { kind: 'help', verb } : { kind: 'help' }),
  },
];
