import { execFileSync } from 'node:child_process';
import { promises as fs, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { initWorkspace } from '../../../src/core/init';
import { RalphPaths } from '../../../src/core/paths';
import type { NewTask } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import { startGitHubServer, type GitHubServer, type GitHubServerOptions } from '../../fixtures/githubServer';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { type CliResult, CLI, collect } from './cliHarness';
import { TEST_KEY, TEST_KEY_ENV } from './loopHarness';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from './tempWorkspace';
import { spawn, type ChildProcess } from 'node:child_process';

export const FORGE_TOKEN = 'ghs_forgeTokenForTests1234567890';

/**
 * A project as a team has it on GitHub: a workspace with a real test gate (node:test), its task
 * store committed, a bare repository on this machine as `origin`, a scripted model and a
 * scripted GitHub API whose URLs the committed `.ralph/config.json` names.
 */
export interface ForgeProject {
  ws: TempWorkspace;
  origin: string;
  model: ScriptedServer;
  github: GitHubServer;
  /** Runs git in the bare origin. */
  originGit(...args: string[]): string;
  /** The content of `file` on `ref` of the origin, or undefined. */
  originShow(ref: string, file: string): string | undefined;
  addTasks(tasks: Partial<NewTask>[]): Promise<string[]>;
  /** Commits what changed in the workspace and pushes main to origin. */
  publish(message: string): void;
  cleanup(): Promise<void>;
}

export const GREET_TEST = `const test = require('node:test');
const assert = require('node:assert');
const { greet } = require('../greet.js');
test('greets by name', () => assert.strictEqual(greet('Ann'), 'Hello, Ann'));
test('greets the world', () => assert.strictEqual(greet(), 'Hello, world'));
`;

export async function makeForgeProject(
  githubOptions: GitHubServerOptions = {},
  config: Record<string, unknown> = {},
): Promise<ForgeProject> {
  const ws = await makeTempWorkspace({
    commit: false,
    git: true,
    files: {
      'README.md': '# widgets\n',
      'greet.js': "exports.greet = (name = 'world') => `Hello, ${name}`;\n",
      'test/greet.test.js': GREET_TEST,
    },
  });
  const model = await startScriptedServer();
  const github = await startGitHubServer({ token: FORGE_TOKEN, workflows: ['ralph.yml'], ...githubOptions });
  await initWorkspace(ws.dir);
  const settings = {
    llm: { baseUrl: model.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1, requestTimeoutMs: 20000 },
    loop: { maxIterations: 4 },
    gates: [{ name: 'tests', command: 'node --test', kind: 'tests' }],
    forge: { repository: 'acme/widgets', apiUrl: github.url, pollSeconds: 0.1 },
    ...config,
  };
  await fs.writeFile(path.join(ws.dir, '.ralph', 'config.json'), JSON.stringify(settings, null, 2));
  await ws.write('.github/workflows/ralph.yml', 'name: Ralph tasks\non: workflow_dispatch\njobs: {}\n');
  ws.git('add', '-A');
  ws.git('commit', '-q', '-m', 'initial');
  const outside = await ws.outsideDir();
  const origin = path.join(outside, 'origin.git');
  execFileSync('git', ['clone', '-q', '--bare', ws.dir, origin], { env: TEST_GIT_ENV });
  ws.git('remote', 'add', 'origin', origin);
  ws.git('fetch', '-q', 'origin');
  ws.git('branch', '-q', '--set-upstream-to=origin/main', 'main');
  const originGit = (...args: string[]) =>
    execFileSync('git', args, { cwd: origin, env: TEST_GIT_ENV, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  return {
    ws,
    origin,
    model,
    github,
    originGit,
    originShow(ref, file) {
      try {
        return originGit('show', `${ref}:${file}`);
      } catch {
        return undefined;
      }
    },
    async addTasks(tasks) {
      const store = new TaskStore(new RalphPaths(ws.dir));
      const ids: string[] = [];
      for (const t of tasks)
        ids.push(
          (
            await store.add({
              title: 'Greet politely',
              prompt: 'Make greet() say "Good day, <name>".',
              promise: 'greet says Good day and the tests pass',
              ...t,
            })
          ).id,
        );
      return ids;
    },
    publish(message) {
      ws.git('add', '-A');
      ws.git('commit', '-q', '-m', message);
      ws.git('push', '-q', 'origin', 'main');
    },
    async cleanup() {
      await model.close();
      await github.close();
      await ws.cleanup();
    },
  };
}

/** What a simulated job left: its exit, the outputs it wrote, its summary, the clone it ran in. */
export interface JobResult extends CliResult {
  outputs: Record<string, string>;
  summary: string;
  clone: string;
}

export interface SimulatedJob {
  child: ChildProcess;
  done: Promise<JobResult>;
}

/**
 * A job as the runner runs it: a fresh clone of the origin's target, the Actions environment
 * (GITHUB_ACTIONS, GITHUB_OUTPUT, GITHUB_STEP_SUMMARY, the workflow_dispatch event payload), and
 * the real CLI's `ralph run --task` (CI mode from GITHUB_ACTIONS alone unless `ci` is set).
 */
export async function startJob(
  project: ForgeProject,
  taskId: string,
  options: { runId?: number; feedback?: Record<string, string>; ci?: boolean; target?: string; tokenless?: boolean } = {},
): Promise<SimulatedJob> {
  const home = await project.ws.outsideDir();
  const clone = path.join(home, 'work');
  const target = options.target ?? 'main';
  execFileSync('git', ['clone', '-q', '--branch', target, project.origin, clone], { env: TEST_GIT_ENV });
  const event = path.join(home, 'event.json');
  const feedback = JSON.stringify(options.feedback ?? {});
  await fs.writeFile(
    event,
    JSON.stringify({
      inputs: { tasks: JSON.stringify([taskId]), target, dispatch: 'test', feedback },
      ref: `refs/heads/${target}`,
      workflow: '.github/workflows/ralph.yml',
    }),
  );
  const outputs = path.join(home, 'output');
  const summary = path.join(home, 'summary.md');
  const env: NodeJS.ProcessEnv = {
    ...withoutActions(TEST_GIT_ENV),
    [TEST_KEY_ENV]: TEST_KEY,
    GITHUB_ACTIONS: 'true',
    CI: 'true',
    GITHUB_REPOSITORY: 'acme/widgets',
    GITHUB_SERVER_URL: 'https://github.example',
    GITHUB_API_URL: project.github.url,
    GITHUB_RUN_ID: String(options.runId ?? 4242),
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_REF_NAME: target,
    GITHUB_EVENT_NAME: 'workflow_dispatch',
    GITHUB_EVENT_PATH: event,
    GITHUB_OUTPUT: outputs,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_TOKEN: FORGE_TOKEN,
    RALPH_TARGET: target,
    RALPH_FEEDBACK: feedback,
  };
  if (options.tokenless) {
    delete env.GITHUB_TOKEN;
    env.GH_CONFIG_DIR = home; // a GitHub CLI here is logged in nowhere
  }
  const child = spawn(process.execPath, [CLI, 'run', '--task', taskId, ...(options.ci ? ['--ci'] : [])], {
    cwd: clone,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const done = collect(child).then((result) => ({ ...result, outputs: parseOutputs(readOr(outputs)), summary: readOr(summary), clone }));
  return { child, done };
}

export async function runJob(project: ForgeProject, taskId: string, options: Parameters<typeof startJob>[2] = {}): Promise<JobResult> {
  return (await startJob(project, taskId, options)).done;
}

/** The environment without a surrounding CI's GitHub variables (the tests set their own). */
export function withoutActions(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('GITHUB_') && !k.startsWith('RALPH_') && k !== 'GH_TOKEN'));
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** `$GITHUB_OUTPUT` lines (`name=value` and the heredoc form). */
export function parseOutputs(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const heredoc = /^([\w-]+)<<(.+)$/.exec(lines[i]);
    if (heredoc) {
      const end = lines.indexOf(heredoc[2], i + 1);
      out[heredoc[1]] = lines.slice(i + 1, end).join('\n');
      i = end;
      continue;
    }
    const eq = lines[i].indexOf('=');
    if (eq > 0) out[lines[i].slice(0, eq)] = lines[i].slice(eq + 1);
  }
  return out;
}
