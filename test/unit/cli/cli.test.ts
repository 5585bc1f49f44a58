import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { exitCodeFor } from '../../../src/cli/main';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli, runCliInProcess, startCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const cli = (args: string[], cwd: string) => runCli(args, cwd);

const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'hello.txt has hi' } }] };
const write = (content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content } }] });

describe('the ralph CLI', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let server: ScriptedServer;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
      loop: { maxIterations: 4 },
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  async function addTask(...extra: string[]): Promise<string> {
    const result = await runCliInProcess(
      ['task', 'add', 'Write', 'hello', '--prompt', 'Create hello.txt with hi', '--promise', 'hello.txt has hi', ...extra],
      ws.dir,
    );
    assert.equal(result.code, 0, result.stderr);
    return result.stdout.trim();
  }

  it('init, task add, task list --json and status --json', async () => {
    const id = await addTask('--priority', '2', '--complexity', '5', '--type', 'bugfix');
    assert.equal(id, 'T-001');
    const list = JSON.parse((await cli(['task', 'list', '--json', '--workspace', ws.dir], '/')).stdout);
    assert.equal(list[0].title, 'Write hello');
    assert.equal(list[0].type, 'bugfix');
    assert.equal(list[0].allowGateChanges, undefined);
    await addTask('--allow-gate-changes', 'tests', '--allow-gate-changes', 'types');
    await addTask('--allow-gate-changes', 'all');
    const allowed = JSON.parse((await cli(['task', 'list', '--json'], ws.dir)).stdout);
    assert.deepEqual(
      allowed.slice(1).map((t: { allowGateChanges?: unknown }) => t.allowGateChanges),
      [['tests', 'types'], true],
    );
    const added = await cli(['task', 'add', 'By', 'script', '--prompt', 'p', '--promise', 'q', '--agent', 'codex', '--json'], ws.dir);
    assert.equal(added.code, 0, added.stderr);
    assert.deepEqual((({ id, title, agent, status }) => ({ id, title, agent, status }))(JSON.parse(added.stdout)), {
      id: 'T-004',
      title: 'By script',
      agent: 'codex',
      status: 'todo',
    });
    const status = JSON.parse((await cli(['status', '--json'], ws.dir)).stdout);
    assert.equal(status.counts.todo, 4);
    assert.equal(status.running, null);
  });

  it('exits 0 when every task ends done, printing one JSON event per line with --json', async () => {
    await addTask();
    server.push(write('hi'), complete);
    const result = await cli(['run', '--json'], ws.dir);
    assert.equal(result.code, 0, result.stderr);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.equal(events[0].type, 'run.started');
    assert.ok(events.some((e) => e.type === 'task.finished' && e.status === 'done'));
    assert.equal(events.at(-1).type, 'run.finished');
    assert.equal(await ws.read('hello.txt'), 'hi');
  });

  it('exits 1 on timeout, 3 on blocked, 2 on usage and configuration errors', async () => {
    await addTask('--max-iterations', '1');
    server.push({ content: 'still working <ralph>PROGRESS:10</ralph>' });
    assert.equal((await cli(['run'], ws.dir)).code, 1);

    await addTask();
    server.push({ content: '<ralph>BLOCKED:no network</ralph>' });
    const blocked = await cli(['run'], ws.dir);
    assert.equal(blocked.code, 3);
    assert.match(blocked.stdout, /BLOCKED after 1 iteration: no network/);

    assert.equal((await cli(['run', '--bogus'], ws.dir)).code, 2);
    assert.equal((await cli(['task', 'add', 'x', '--prompt', 'p'], ws.dir)).code, 2);
    assert.equal((await cli(['run', '--task', 'T-404'], ws.dir)).code, 2);
    await fs.writeFile(ws.path('.ralph/config.json'), '{"loop": {"maxIterations": "many"}}');
    const broken = await cli(['run'], ws.dir);
    assert.equal(broken.code, 2);
    assert.match(broken.stderr, /\.ralph\/config\.json is invalid:\n\s+loop\.maxIterations/);
  });

  it('refuses llm.provider "vscode" with a clear message (exit 2) and calls no model', async () => {
    await addTask();
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ llm: { provider: 'vscode', models: ['copilot/gpt-4.1'] } }));
    const result = await cli(['run'], ws.dir);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /llm\.provider is "vscode"[\s\S]*only reachable inside VS Code[\s\S]*set "llm\.provider": "openai"/);
    assert.equal(server.requests.length, 0);
  });

  it('maps final statuses to exit codes', () => {
    assert.equal(exitCodeFor(['done', 'done']), 0);
    assert.equal(exitCodeFor(['done', 'blocked']), 3);
    assert.equal(exitCodeFor(['needs_help', 'timeout']), 1);
    assert.equal(exitCodeFor(['halted']), 1);
    assert.equal(exitCodeFor([]), 0);
  });

  it('killed with SIGKILL mid-iteration, resumes at that iteration and ends done; tasks.json stays valid', async () => {
    const id = await addTask();
    let reached!: () => void;
    const inIteration2 = new Promise<void>((resolve) => (reached = resolve));
    server.push(write('draft'), { content: 'half way <ralph>PROGRESS:50</ralph>' }, async () => {
      reached();
      return new Promise<never>(() => {}); // the model never answers: the process is killed meanwhile
    });
    const first = startCli(['run'], ws.dir);
    await inIteration2;
    const checkpoint = await new CheckpointStore(new RalphPaths(ws.dir)).load(id);
    assert.equal(checkpoint?.iteration, 2);
    assert.equal(checkpoint?.phase, 'running');
    first.child.kill('SIGKILL');
    const killed = await first.done;
    assert.equal(killed.code, null);
    TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json')));

    server.push(write('hi'), complete);
    const second = await cli(['run'], ws.dir);
    assert.equal(second.code, 0, second.stderr + second.stdout);
    assert.match(second.stdout, /resuming at iteration 2/);
    assert.doesNotMatch(second.stdout, /iteration 1\//);
    const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json')));
    assert.equal(tasks.tasks[0].status, 'done');
    assert.equal(tasks.tasks[0].iterations, 2);
    // the default run is parallel (loop.maxParallel 3): the task worked in its worktree, resumed
    // there after the kill, and landed through the merge queue as one checked commit
    assert.equal(ws.git('log', '-1', '--format=%s%n%(trailers:key=Ralph-Task,valueonly)'), `ralph(${id}): Write hello\n${id}`);
    assert.equal(await ws.read('hello.txt'), 'hi');
    assert.deepEqual(
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
      [`worktree ${ws.dir}`],
      'no orphan worktree',
    );
    assert.equal(ws.git('branch', '--list', 'ralph/*'), '', 'no orphan branch');
  });

  it('stops cleanly on SIGINT: the task is halted, state saved, exit 1', async () => {
    const id = await addTask();
    let reached!: () => void;
    const waiting = new Promise<void>((resolve) => (reached = resolve));
    server.push(async () => {
      reached();
      return new Promise<never>(() => {});
    });
    const run = startCli(['run'], ws.dir);
    await waiting;
    run.child.kill('SIGINT');
    const result = await run.done;
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stdout, new RegExp(`resume ${id} with: ralph run --task ${id}`));
    const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json')));
    assert.equal(tasks.tasks[0].status, 'halted');
    assert.equal(ws.exists('.ralph/run.lock'), false, 'the run lock is released');
  });
});
