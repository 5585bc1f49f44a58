import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { fileOf, runCliInProcess, startCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { waitFor } from '../../helpers/waitFor';

/** One step serving every task: write the task's file, then complete. */
const agent: Step = (request) => {
  const file = fileOf(request);
  if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: 'written' } }] };
  return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `made for ${file}\n` } }] };
};

describe('a parallel run killed with SIGKILL, then run again', function () {
  this.timeout(90000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  it('resumes every task in its worktree, ends all done and merged once, and leaves no orphan worktree, branch or index.lock', async () => {
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
      loop: { maxIterations: 4, maxParallel: 3 },
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    const ids: string[] = [];
    for (const file of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) {
      const added = await runCliInProcess(
        ['task', 'add', `Write ${file}`, '--prompt', `WRITE ${file}`, '--promise', `${file} exists`],
        ws.dir,
      );
      assert.equal(added.code, 0, added.stderr);
      ids.push(added.stdout.trim());
    }
    // first run: three agents each write their file, then every model call hangs; killed meanwhile
    let hung = 0;
    let allHung!: () => void;
    const threeHung = new Promise<void>((resolve) => (allHung = resolve));
    const writeThenHang: Step = async (request) => {
      if ((request.body?.messages ?? []).at(-1)?.role !== 'tool') return agent(request);
      if (++hung === 3) allHung();
      return new Promise<never>(() => {});
    };
    server.push(...Array.from({ length: 6 }, () => writeThenHang));
    const first = startCli(['run'], ws.dir);
    await threeHung;
    // a crash mid-`git add` in one of them leaves its index.lock behind too
    // the fourth task's worktree is made ahead while the three wait for their models
    const registered = () =>
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ') && l.includes('/worktrees/T-'));
    // the condition decides (on a busy machine the fourth `git worktree add` takes its time); the
    // bound only ends a wait that would never end, short of the test's own timeout
    await waitFor('the fourth worktree registered (made ahead)', () => registered().length >= 4, { timeoutMs: 60_000, intervalMs: 100 });
    const tasksNow = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
    const made = (await fs.readdir(ws.path('.ralph', 'worktrees'))).filter((n) => !n.startsWith('_'));
    const worktrees = made.filter((n) => tasksNow.find((t) => t.id === n)?.status === 'in_progress');
    assert.equal(worktrees.length, 3, 'three agents at once, each in its worktree');
    const ahead = made.filter((n) => !worktrees.includes(n));
    assert.equal(ahead.length, 1, 'the task next in line has its worktree made ahead');
    assert.equal(tasksNow.find((t) => t.id === ahead[0])?.status, 'todo');
    const gitDir = path.resolve(
      ws.path('.ralph', 'worktrees', worktrees[0]),
      ws.git('-C', ws.path('.ralph', 'worktrees', worktrees[0]), 'rev-parse', '--git-dir'),
    );
    first.child.kill('SIGKILL');
    assert.equal((await first.done).code, null);
    await fs.writeFile(path.join(gitDir, 'index.lock'), '');
    assert.equal(ws.exists('a.txt') || ws.exists('b.txt'), false, 'no agent wrote the user tree');
    const status = await startCli(['status'], ws.dir).done;
    assert.equal(status.code, 0, status.stderr);
    for (const name of worktrees)
      assert.match(status.stdout, new RegExp(`worktree \\.ralph/worktrees/${name} \\(ralph/${name}\\) of ${name} — in_progress`));
    const statusJson = JSON.parse((await startCli(['status', '--json'], ws.dir).done).stdout) as { worktrees: { taskId: string }[] };
    assert.deepEqual(statusJson.worktrees.map((w) => w.taskId).sort(), [...made].sort());

    server.push(...Array.from({ length: 12 }, () => agent));
    const second = await startCli(['run'], ws.dir).done;
    assert.equal(second.code, 0, second.stderr + second.stdout);
    assert.match(second.stdout, /resuming at iteration 1/);
    // the interleaved lines of several agents each name their task
    assert.match(second.stdout, /^\[T-00\d\] ↻ iteration 1\/4 \(model-a\)$/m);
    assert.match(second.stdout, /^⇶ T-00\d merge merged: merged into main as [0-9a-f]{10}$/m);
    assert.match(second.stdout, /cleaned up after an interrupted run: .*index\.lock/, 'the stale lock was pruned before any agent started');
    // a worktree made ahead for a task that never started is not used at a stale tip: removed, and made again when it starts
    for (const name of ahead)
      assert.match(second.stdout, new RegExp(`cleaned up after an interrupted run: .*worktrees/${name} \\(made ahead, never used\\)`));
    const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
    assert.deepEqual(
      tasks.map((t) => t.status),
      ['done', 'done', 'done', 'done'],
    );
    const landed = ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean);
    assert.deepEqual([...landed].sort(), [...ids].sort(), 'each task merged exactly once');
    for (const file of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) assert.equal(await ws.read(file), `made for ${file}\n`);
    assert.deepEqual(
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
      [`worktree ${ws.dir}`],
    );
    assert.equal(ws.git('branch', '--list', 'ralph/*'), '');
    assert.equal(ws.exists('.ralph/run.lock'), false);
    assert.equal(ws.git('status', '--porcelain', '--untracked-files=no'), '');
  });
});
