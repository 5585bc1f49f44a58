import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer, type Step, type StepFunction } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { fileOf, runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

/** Writes the task's file, then completes; tasks whose file is in `hang` wait for their model forever. */
function agent(hang: ReadonlySet<string> = new Set()): StepFunction {
  return (request) => {
    const file = fileOf(request);
    const last = (request.body?.messages ?? []).at(-1);
    if (typeof last?.content === 'string' && last.content.includes('[WIND-DOWN]')) return { content: 'nothing to note' };
    if (hang.has(file)) return { fault: 'hang' };
    if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
      return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: 'written' } }] };
    return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }] };
  };
}

describe('a parallel run that must stop: git locks (your working tree, the merge queue, a task worktree), a corrupt checkpoint', function () {
  this.timeout(180000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    await fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({
        llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
        loop: { maxIterations: 3, maxParallel: 3 },
      }),
    );
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  const add = async (file: string) => {
    const added = await runCliInProcess(
      ['task', 'add', `Write ${file}`, '--prompt', `WRITE ${file}`, '--promise', `${file} exists`],
      ws.dir,
    );
    assert.equal(added.code, 0, added.stderr);
    return added.stdout.trim();
  };
  const tasks = async () => TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
  const landed = () => ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean).sort();
  const staleLock = async () => {
    await fs.writeFile(ws.path('.git/index.lock'), '');
    const then = new Date(Date.now() - 120_000);
    await fs.utimes(ws.path('.git/index.lock'), then, then);
  };

  it('a stale .git/index.lock in your working tree is cleared and the merges go on', async () => {
    const ids = [await add('a.txt'), await add('b.txt')];
    await staleLock();
    server.push(...Array.from({ length: 4 }, () => agent()));
    const run = await runCli(['run'], ws.dir);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    assert.match(
      run.stdout,
      /removed a stale \.git\/index\.lock \(\d+ s old, no git process works in this repository\); the merge goes on/,
    );
    assert.deepEqual(
      (await tasks()).map((t) => t.status),
      ['done', 'done'],
    );
    assert.deepEqual(landed(), [...ids].sort());
    assert.equal(await ws.read('a.txt'), 'a.txt\n', 'your working tree followed the merge');
    assert.equal(ws.exists('.git/index.lock'), false);
  });

  it('a held one halts the run at once with the way out (exit 1): the other agent stops, state saved, nothing lost; after it is released the next runs merge', async () => {
    const [a, b] = [await add('a.txt'), await add('b.txt')];
    await staleLock();
    const holder: ChildProcess = spawn('git', ['hash-object', '--stdin'], {
      cwd: ws.dir,
      env: TEST_GIT_ENV,
      stdio: ['pipe', 'ignore', 'ignore'],
    });
    try {
      server.push(...Array.from({ length: 4 }, () => agent(new Set(['b.txt']))));
      const run = await runCli(['run'], ws.dir);
      assert.equal(run.code, 1, run.stderr + run.stdout);
      const held = `git cannot change main and the working trees that have it checked out: \\.git/index\\.lock was kept because git process ${holder.pid} is working in this repository \\(waited 15 s\\); once no git process works in this repository, delete it \\(rm \\.git/index\\.lock\\) and run again`;
      assert.match(run.stderr, new RegExp(`the run halted: ${held}`));
      assert.match(run.stdout, new RegExp(`${b} HALTED .*${held}; state saved`), 'the other agent was stopped with the reason');
      assert.match(run.stdout, /wind-down \(the run halted: git cannot change/);
      assert.doesNotMatch(run.stdout, /merge-waiting|waits:/, 'no endless wait');
      const [ta, tb] = await tasks();
      assert.equal(ta.status, 'in_progress', "its checked work waits for the next run's queue");
      assert.equal(tb.status, 'halted');
      assert.match(tb.blockedReason ?? '', /index\.lock was kept/);
      assert.deepEqual(landed(), []);
      assert.equal(ws.exists('.git/index.lock'), true, 'a held lock is never removed');
      const status = await runCli(['status'], ws.dir);
      assert.match(status.stdout, new RegExp(`${a} queued for merge`));
    } finally {
      holder.kill('SIGKILL');
    }
    server.push(...Array.from({ length: 4 }, () => agent()));
    const again = await runCli(['run'], ws.dir);
    assert.equal(again.code, 0, again.stderr + again.stdout);
    assert.match(again.stdout, /removed a stale \.git\/index\.lock/);
    // the queued task lands, and the halted one is resumed by the same run (a stopped task is picked up again)
    assert.deepEqual(
      (await tasks()).map((t) => t.status),
      ['done', 'done'],
    );
    assert.deepEqual(landed(), [a, b].sort());
  });
  it("a held lock in a task's own worktree halts that task only, the others go on; resumed, it commits that iteration under its own number", async () => {
    const [a, b] = [await add('a.txt'), await add('b.txt')];
    let holder: ChildProcess | undefined;
    // a's agent: writes its file while a git process takes its worktree's index lock and keeps it
    const locking: Step = async (request) => {
      const file = fileOf(request);
      if (file !== 'a.txt' || holder || (request.body?.messages ?? []).at(-1)?.role === 'tool') return agent()(request);
      const worktree = ws.path('.ralph', 'worktrees', a);
      await fs.writeFile(ws.path('.git', 'worktrees', a, 'index.lock'), '');
      holder = spawn('git', ['hash-object', '--stdin'], { cwd: worktree, env: TEST_GIT_ENV, stdio: ['pipe', 'ignore', 'ignore'] });
      return agent()(request);
    };
    server.push(...Array.from({ length: 4 }, () => locking));
    try {
      const run = await runCli(['run'], ws.dir);
      assert.equal(run.code, 1, run.stderr + run.stdout);
      assert.match(
        run.stdout,
        new RegExp(
          `could not commit iteration 1: git cannot change the worktree of ${a}: \\.git/worktrees/${a}/index\\.lock was kept because git process \\d+ is working in this repository \\(waited 15 s\\)`,
        ),
      );
      assert.doesNotMatch(run.stderr, /the run halted/, "a task worktree's lock halts that task only");
      const [ta, tb] = await tasks();
      assert.equal(ta.status, 'halted');
      assert.equal(ta.iterations, 0, 'iteration 1 has not ended');
      assert.equal(tb.status, 'done');
      assert.deepEqual(landed(), [b]);
    } finally {
      holder?.kill('SIGKILL');
    }
    const calls = server.requests.length;
    const resumed = await runCli(['run', '--task', a], ws.dir);
    assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
    assert.match(resumed.stdout, /removed a stale \.git\/worktrees\/T-001\/index\.lock|cleaned up after an interrupted run: .*index\.lock/);
    assert.equal(server.requests.length, calls, 'no model call for the iteration already run');
    assert.deepEqual(landed(), [a, b].sort());
    const [ta] = await tasks();
    assert.equal(ta.status, 'done');
    assert.equal(ta.iterations, 1);
  });

  it('a corrupt checkpoint with no good backup ends the run with exit 2 and the message on stderr; the task is kept as it was, as with one agent', async () => {
    const added = await runCliInProcess(['task', 'add', 'Write a', '--prompt', 'WRITE a.txt', '--promise', 'a.txt exists'], ws.dir);
    const id = added.stdout.trim();
    const file = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json')));
    await fs.writeFile(
      ws.path('.ralph/tasks.json'),
      JSON.stringify({ ...file, tasks: file.tasks.map((t) => ({ ...t, status: 'in_progress', iterations: 2 })) }),
    );
    await ws.write(`.ralph/state/${id}.json`, '{"version":1, torn');
    for (const agents of [3, 1]) {
      await fs.writeFile(
        ws.path('.ralph/config.json'),
        JSON.stringify({
          llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
          loop: { maxIterations: 3, maxParallel: agents },
        }),
      );
      const run = await runCli(['run'], ws.dir);
      assert.equal(run.code, 2, `${agents} agents: ${run.stdout}${run.stderr}`);
      assert.match(
        run.stderr,
        new RegExp(`^ralph: \\.ralph/state/${id}\\.json is unreadable .*no good backup.*rm \\.ralph/state/${id}\\.json$`, 'm'),
      );
      const [task] = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
      assert.equal(task.status, 'in_progress', 'kept, never failed');
      assert.equal(task.iterations, 2);
      assert.equal(server.requests.length, 0);
      assert.equal(await ws.read(`.ralph/state/${id}.json`), '{"version":1, torn', 'the file is left for the user to repair');
    }
  });
});
