import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { stringify } from 'yaml';
import type { RalphConfig } from '../config/schema';
import { readTextIfExists, writeFileAtomic } from '../util/atomicWrite';

/** The CLI's own version: the pinned package a workflow installs when the project does not depend on it. */
export const RALPH_PACKAGE = 'ralph-loop';
export const RALPH_VERSION = '0.1.0';

/** The dispatch input that carries the job's time limit. */
export const MINUTES_INPUT = 'minutes';

/** A job's time limit: the task's own (loop.taskTimeoutMinutes) plus set-up (checkout, install, push), within GitHub's 6 hours. */
export function jobTimeoutMinutes(config: RalphConfig): number {
  return Math.min(360, Math.ceil(config.loop.taskTimeoutMinutes) + 20);
}

/** The required status check's name: what branch protection / the ruleset must require. */
export const GATE_CHECK_NAME = 'ralph gate';
export const CHECKS_WORKFLOW = 'ralph-checks.yml';

export interface WorkflowOptions {
  /** The runner label (`ubuntu-latest`, `self-hosted`…). */
  runsOn: string;
  /** Jobs of one dispatch running at once. */
  maxParallel: number;
  /** Node version for setup-node. */
  node: string;
  /** Dispatch workflow file name (`forge.workflow`). */
  workflow: string;
}

/** What the project is, as far as the workflows' install steps care. */
export interface ProjectFacts {
  /** The project depends on ralph-loop itself: the job uses that CLI (npx --no-install). */
  ralphDependency: boolean;
  /** The lock file that says how to install the project's dependencies, if any. */
  install?: 'npm' | 'yarn' | 'pnpm';
  /** requirements.txt / pyproject.toml: Python gates need Python and the dependencies. */
  python?: 'requirements' | 'pyproject';
}

export async function projectFacts(workspace: string): Promise<ProjectFacts> {
  const exists = async (file: string) => (await fs.stat(path.join(workspace, file)).catch(() => undefined)) !== undefined;
  let ralphDependency = false;
  const pkg = await readTextIfExists(path.join(workspace, 'package.json'));
  if (pkg) {
    try {
      const parsed = JSON.parse(pkg) as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
      ralphDependency = RALPH_PACKAGE in { ...parsed.dependencies, ...parsed.devDependencies };
    } catch {
      // a broken package.json: the install step will say so in the job
    }
  }
  const install = (await exists('package-lock.json'))
    ? 'npm'
    : (await exists('pnpm-lock.yaml'))
      ? 'pnpm'
      : (await exists('yarn.lock'))
        ? 'yarn'
        : pkg
          ? 'npm'
          : undefined;
  const python = (await exists('requirements.txt')) ? 'requirements' : (await exists('pyproject.toml')) ? 'pyproject' : undefined;
  return { ralphDependency, ...(install ? { install } : {}), ...(python ? { python } : {}) };
}

/** The command line that runs the CLI in a job: the project's own dependency, else the pinned package. */
export function ralphCommand(facts: ProjectFacts): string {
  return facts.ralphDependency ? 'npx --no-install ralph' : `npx --yes ${RALPH_PACKAGE}@${RALPH_VERSION}`;
}

function setupSteps(facts: ProjectFacts, node: string): Record<string, unknown>[] {
  const steps: Record<string, unknown>[] = [
    { name: 'Set up Node.js (the Ralph CLI)', uses: 'actions/setup-node@v4', with: { 'node-version': node } },
  ];
  if (facts.install === 'pnpm') steps.push({ name: 'Set up pnpm', uses: 'pnpm/action-setup@v4' });
  if (facts.install) {
    const command = { npm: 'npm ci', pnpm: 'pnpm install --frozen-lockfile', yarn: 'yarn install --frozen-lockfile' }[facts.install];
    steps.push({ name: "Install the project's dependencies (the gates run them)", run: command });
  }
  if (facts.python) {
    steps.push({ name: 'Set up Python', uses: 'actions/setup-python@v5', with: { 'python-version': '3.x' } });
    steps.push({
      name: 'Install the Python dependencies',
      run: facts.python === 'requirements' ? 'pip install -r requirements.txt' : 'pip install -e .',
    });
  }
  return steps;
}

/** Secrets the job passes to Ralph: the model keys named in the configuration. */
function modelKeyEnv(config: RalphConfig): Record<string, string> {
  const names = [config.llm.apiKeyEnv, ...config.llm.fallback.flatMap((f) => (f.apiKeyEnv ? [f.apiKeyEnv] : []))];
  return Object.fromEntries([...new Set(names)].map((name) => [name, `\${{ secrets.${name} }}`]));
}

const HEADER = (what: string) =>
  `# Written by \`ralph ci init\` (Ralph Loop ${RALPH_VERSION}): ${what}.\n# Change it freely; \`ralph ci init --force\` writes it again.\n`;

/**
 * The dispatch workflow: one job per task (a matrix over the dispatched ids), at most
 * `maxParallel` at once, one job per task at a time (a concurrency group per task), each bounded
 * by the task's time limit as the dispatch says (the default: as the configuration said when the
 * workflow was written), with only the permissions it needs: push its branches
 * (`contents: write`) and open its pull request and enable auto-merge (`pull-requests: write`).
 */
export function dispatchWorkflow(config: RalphConfig, facts: ProjectFacts, options: WorkflowOptions): string {
  const workflow = {
    name: 'Ralph tasks',
    'run-name': 'Ralph ${{ inputs.tasks }} (${{ inputs.dispatch }})',
    on: {
      workflow_dispatch: {
        inputs: {
          tasks: { description: 'JSON array of the task ids to run, e.g. ["T-001","T-002"]', required: true, type: 'string' },
          target: { description: 'the branch the tasks start from and merge into', required: true, type: 'string' },
          dispatch: { description: "the dispatch's id (Ralph finds its run by it)", required: false, type: 'string', default: '' },
          feedback: {
            description: 'JSON object: task id → why the merge queue sent it back',
            required: false,
            type: 'string',
            default: '{}',
          },
          // sent by Ralph from the target's .ralph/config.json, so a changed limit needs no new workflow
          [MINUTES_INPUT]: {
            description: "the job's time limit in minutes: the task's (loop.taskTimeoutMinutes) plus set-up",
            required: false,
            type: 'string',
            default: String(jobTimeoutMinutes(config)),
          },
        },
      },
    },
    permissions: {},
    jobs: {
      task: {
        name: 'ralph ${{ matrix.task }}',
        'runs-on': options.runsOn,
        'timeout-minutes': `\${{ fromJSON(inputs.${MINUTES_INPUT}) }}`,
        permissions: { contents: 'write', 'pull-requests': 'write' },
        strategy: { 'fail-fast': false, 'max-parallel': options.maxParallel, matrix: { task: '${{ fromJSON(inputs.tasks) }}' } },
        concurrency: { group: 'ralph-task-${{ matrix.task }}', 'cancel-in-progress': false },
        steps: [
          // no token left in .git/config: the agent's commands can read that file
          {
            name: 'Check out the target',
            uses: 'actions/checkout@v4',
            with: { ref: '${{ inputs.target }}', 'fetch-depth': 0, 'persist-credentials': false },
          },
          ...setupSteps(facts, options.node),
          {
            name: 'Run the task',
            run: `${ralphCommand(facts)} run --ci --task "$RALPH_TASK"`,
            env: {
              RALPH_TASK: '${{ matrix.task }}',
              RALPH_TARGET: '${{ inputs.target }}',
              RALPH_FEEDBACK: '${{ inputs.feedback }}',
              // a token of your own (app or fine-grained) makes the pull request start the checks workflow; the job's own token does not
              GITHUB_TOKEN: '${{ secrets.RALPH_GITHUB_TOKEN || github.token }}',
              ...modelKeyEnv(config),
            },
          },
        ],
      },
    },
  };
  return HEADER('each Ralph task as a GitHub Actions job') + stringify(workflow, { lineWidth: 0 });
}

/**
 * The checks workflow: `ralph gate` on every pull request and every merge-queue entry, so the
 * queue lands nothing its required check did not see. Read-only.
 */
export function checksWorkflow(config: RalphConfig, facts: ProjectFacts, options: WorkflowOptions): string {
  const gateMinutes = Math.ceil(config.gates.reduce((sum, g) => sum + (g.timeoutMs ?? 600_000), 0) / 60_000);
  const workflow = {
    name: 'Ralph checks',
    on: { pull_request: {}, merge_group: {} },
    permissions: { contents: 'read' },
    jobs: {
      gate: {
        name: GATE_CHECK_NAME,
        'runs-on': options.runsOn,
        // the base recorded, then the head: each gate at most twice
        'timeout-minutes': Math.min(360, Math.max(15, gateMinutes * 2 + 10)),
        steps: [
          { name: 'Check out', uses: 'actions/checkout@v4', with: { 'fetch-depth': 0, 'persist-credentials': false } },
          ...setupSteps(facts, options.node),
          {
            name: 'Run the required gates against the base',
            run: `${ralphCommand(facts)} gate --base "$RALPH_BASE"`,
            env: { RALPH_BASE: '${{ github.event.pull_request.base.sha || github.event.merge_group.base_sha }}' },
          },
        ],
      },
    },
  };
  return HEADER("the required check of Ralph's pull requests and of the merge queue") + stringify(workflow, { lineWidth: 0 });
}

export interface WrittenWorkflow {
  file: string;
  /** `kept`: it existed and --force was not given (your file is never overwritten silently). */
  state: 'created' | 'replaced' | 'kept' | 'unchanged';
}

/** Writes both workflows under `.github/workflows/`. */
export async function writeWorkflows(
  workspace: string,
  config: RalphConfig,
  options: WorkflowOptions,
  force: boolean,
): Promise<WrittenWorkflow[]> {
  const facts = await projectFacts(workspace);
  const dir = path.join(workspace, '.github', 'workflows');
  const files: [string, string][] = [
    [options.workflow, dispatchWorkflow(config, facts, options)],
    [CHECKS_WORKFLOW, checksWorkflow(config, facts, options)],
  ];
  const out: WrittenWorkflow[] = [];
  for (const [name, text] of files) {
    const file = path.join(dir, name);
    const current = await readTextIfExists(file);
    const state: WrittenWorkflow['state'] =
      current === undefined ? 'created' : current === text ? 'unchanged' : force ? 'replaced' : 'kept';
    if (state === 'created' || state === 'replaced') await writeFileAtomic(file, text);
    out.push({ file, state });
  }
  return out;
}

export { DEFAULT_WORKFLOW_OPTIONS } from './workflowDefaults';
