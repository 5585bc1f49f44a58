import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RecordedRequest, Step, StepFunction } from '../../fixtures/scriptedServer';
import { runCliInProcess } from './cliHarness';
import { TEST_KEY_ENV } from './loopHarness';
import { makeTempWorkspace, type TempWorkspace } from './tempWorkspace';

/**
 * A small project with the traits of real ones that broke tasks (issue 36): its test runner is
 * wrapped by a local tool that keeps a cache under `node_modules/.cache` as nyc and ava do (and
 * dies when it cannot, as nyc does), saves run stats inside its own package when it can (a
 * warning when it cannot, as tolerant tools do), its tests write into an ignored output folder
 * (a nested `.gitignore`) and a log ignored through `core.excludesFile`. `add` subtracts.
 */

/** The wrapper: `cachy [--strict-stats] <test files…>` runs node:test (TAP) after its cache is set up. */
export const CACHY_CLI = `#!/usr/bin/env node
const fs = require('fs'), path = require('path'), { spawnSync } = require('child_process');
const args = process.argv.slice(2);
const strict = args[0] === '--strict-stats';
const files = strict ? args.slice(1) : args;
// find-cache-dir's place, as nyc and ava have it: dies when it cannot be made
const cache = path.join(process.cwd(), 'node_modules', '.cache', 'cachy');
fs.mkdirSync(cache, { recursive: true });
fs.writeFileSync(path.join(cache, 'transform-' + Date.now() + '.json'), '{}');
try {
  fs.writeFileSync(path.join(__dirname, 'last-run.json'), JSON.stringify({ at: Date.now() }));
} catch (error) {
  if (strict) throw error;
  console.log('cachy: warning: run stats not saved: ' + error.message);
}
const run = spawnSync(process.execPath, ['--test', '--test-reporter=tap', ...files], { stdio: 'inherit' });
process.exit(run.status === null ? 1 : run.status);
`;

export const CALC_BUGGY = 'exports.add = (a, b) => a - b;\n';
export const CALC_FIXED = 'exports.add = (a, b) => a + b;\n';
const CALC_TEST = `const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { add } = require('../src/calc');

test('adds two numbers', () => {
  fs.mkdirSync('test/output', { recursive: true });
  fs.writeFileSync('test/output/result.txt', String(add(2, 3)));
  fs.appendFileSync('run.log', 'ran\\n');
  assert.equal(add(2, 3), 5);
});
`;

/** npm's own style: everything ignored, what ships re-included (`.ralph/` and `node_modules` ignored with it). */
export const ALLOWLIST_GITIGNORE = '/*\n!/src/\n!/test/\n!/package.json\n!/.gitignore\n';
/** The usual style, with Ralph's folder ignored too. */
export const PLAIN_GITIGNORE = 'node_modules/\n.ralph/\n';

export interface CachyProject {
  ws: TempWorkspace;
  /** `ralph init`, then the config: the scripted model, the test gate, `extra` merged at the top. */
  configure(serverUrl: string, extra?: Record<string, unknown>): Promise<void>;
  addTask(): Promise<string>;
}

export async function makeCachyProject(options: {
  gitignore: string;
  script?: string;
  files?: Record<string, string>;
}): Promise<CachyProject> {
  const ws = await makeTempWorkspace({
    commit: true,
    prefix: 'ralph-cachy-',
    files: {
      '.gitignore': options.gitignore,
      'package.json': `${JSON.stringify({ name: 'calc', private: true, scripts: { test: options.script ?? 'cachy test/calc.test.js' } }, null, 2)}\n`,
      'src/calc.js': CALC_BUGGY,
      'test/calc.test.js': CALC_TEST,
      'test/.gitignore': 'output/\n',
      ...options.files,
    },
  });
  // installed, never committed
  await ws.write('node_modules/cachy/cli.js', CACHY_CLI);
  await fs.chmod(ws.path('node_modules/cachy/cli.js'), 0o755);
  await fs.mkdir(ws.path('node_modules/.bin'));
  await fs.symlink('../cachy/cli.js', ws.path('node_modules/.bin/cachy'));
  const excludes = path.join(await ws.outsideDir(), 'global-excludes');
  await fs.writeFile(excludes, '*.log\n');
  ws.git('config', 'core.excludesFile', excludes);
  return {
    ws,
    async configure(serverUrl, extra = {}) {
      if (!ws.exists('.ralph/config.json')) {
        const init = await runCliInProcess(['init'], ws.dir);
        if (init.code !== 0) throw new Error(init.stderr);
      }
      const config = {
        llm: { baseUrl: serverUrl, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
        loop: { maxIterations: 3 },
        commands: { sandbox: 'required' },
        gates: [{ name: 'tests', command: 'npm test', kind: 'tests', required: true }],
        ...extra,
      };
      await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config, null, 2));
    },
    async addTask() {
      const added = await runCliInProcess(
        ['task', 'add', 'Fix add', '--prompt', 'add subtracts: make it add', '--promise', 'npm test passes'],
        ws.dir,
      );
      if (added.code !== 0) throw new Error(added.stderr);
      return added.stdout.trim();
    },
  };
}

const messagesOf = (request: RecordedRequest) => request.body?.messages ?? [];

/** The text of every tool result the agent was given in `request`. */
export function toolResults(request: RecordedRequest): string[] {
  return messagesOf(request)
    .filter((m) => m.role === 'tool')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)));
}

/**
 * The agent: first tries to change its test runner (a command and its file tool) unless told not
 * to, then fixes `add` and completes. Which turn it is, is read from the conversation (fresh each
 * iteration).
 */
export const fixingAgent =
  (tamper = true): StepFunction =>
  (request) => {
    const last = messagesOf(request).at(-1);
    if (typeof last?.content === 'string' && last.content.includes('[WIND-DOWN]')) return { content: 'nothing to note' };
    const results = toolResults(request).length + (tamper ? 0 : 2);
    if (results === 0)
      return {
        toolCalls: [
          { name: 'run_command', arguments: { command: 'echo "process.exit(0)" > node_modules/cachy/cli.js' } },
          { name: 'write_file', arguments: { path: 'node_modules/cachy/cli.js', content: 'process.exit(0)\n' } },
        ],
      };
    if (results === 2) return { toolCalls: [{ name: 'write_file', arguments: { path: 'src/calc.js', content: CALC_FIXED } }] };
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'add adds', promiseEvidence: 'npm test passes' } }] };
  };

export const agentSteps = (n: number, tamper = true): Step[] => Array.from({ length: n }, () => fixingAgent(tamper));
