import assert from 'node:assert/strict';
import * as os from 'node:os';
import { parseCli } from '../../../src/cli/args';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import type { TaskStatus } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import { runCli as runCliWith, runCliInProcess, runOnTerminal as runOnTerminalWith } from '../helpers/cliHarness';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

const runCli = (args: string[], cwd: string) => runCliWith(args, cwd, TEST_GIT_ENV);
const runOnTerminal = (args: string[], cwd: string, answer: string) => runOnTerminalWith(args, cwd, answer, TEST_GIT_ENV);

describe('ralph task <action>: recovery from the CLI', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let store: TaskStore;
  let paths: RalphPaths;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'ralph init');
    paths = new RalphPaths(ws.dir);
    store = new TaskStore(paths);
  });
  afterEach(async () => ws.cleanup());

  async function task(status: TaskStatus, extra: { iterations?: number; maxIterations?: number } = {}): Promise<string> {
    const added = await store.add({ title: `a ${status} task`, prompt: 'p', promise: 'q', maxIterations: extra.maxIterations });
    await store.update(added.id, { status, iterations: extra.iterations ?? 0, ...(status === 'blocked' ? { blockedReason: 'why' } : {}) });
    return added.id;
  }

  async function checkpoint(taskId: string): Promise<void> {
    const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    await new CheckpointStore(paths).save({
      version: 1,
      taskId,
      runId: 'r',
      iteration: 2,
      phase: 'between',
      elapsedMs: 5,
      usage,
      history: [],
      updatedAt: new Date().toISOString(),
    });
  }

  /** A commit like the loop's own for `taskId`. */
  async function taskCommit(taskId: string, file: string, content: string, n = 1): Promise<string> {
    await ws.write(file, content);
    ws.git('add', file);
    ws.git('commit', '-q', '-m', `ralph(${taskId}): iteration ${n}`);
    return ws.git('rev-parse', 'HEAD');
  }

  it('parses every action, with its own options, and rejects options that do not apply', () => {
    assert.deepEqual(parseCli(['task', 'retry', 'T-001'], '/w'), {
      kind: 'task.action',
      workspace: '/w',
      action: 'retry',
      taskId: 'T-001',
      yes: false,
    });
    assert.deepEqual((parseCli(['task', 'edit', 'T-1', '--title', 'New', '--max-iterations', '7'], '/w') as { fields: unknown }).fields, {
      title: 'New',
      maxIterations: 7,
    });
    assert.equal(
      (parseCli(['task', 'increase-max', 'T-1'], '/w') as { by?: number }).by,
      undefined,
      'the core raises whichever limit ended the task by its default',
    );
    assert.deepEqual(parseCli(['task', 'increase-max', 'T-1', '--minutes', '--by', '7.5'], '/w'), {
      kind: 'task.action',
      workspace: '/w',
      action: 'increase-max',
      taskId: 'T-1',
      yes: false,
      by: 7.5,
      minutes: true,
    });
    assert.deepEqual(
      (
        parseCli(
          ['task', 'edit', 'T-1', '--type', 'bugfix', '--complexity', '9', '--depends-on', 'T-2,T-3', '--review', 'manual'],
          '/w',
        ) as { fields: unknown }
      ).fields,
      { type: 'bugfix', complexity: 9, dependsOn: ['T-2', 'T-3'], review: 'manual' },
    );
    assert.throws(() => parseCli(['task', 'edit', 'T-1', '--complexity', '15'], '/w'), /from 1 to 14/);
    assert.equal(
      (parseCli(['--workspace', '/x', 'task', 'rollback', 'T-1', '-y'], '/w') as { yes: boolean; workspace: string }).workspace,
      '/x',
    );
    assert.throws(() => parseCli(['task', 'retry'], '/w'), /needs a task id/);
    assert.throws(() => parseCli(['task', 'retry', 'T-1', '--by', '3'], '/w'), /--by does not apply to task retry/);
    assert.throws(() => parseCli(['task', 'edit', 'T-1'], '/w'), /at least one of --title/);
    assert.throws(() => parseCli(['task', 'increase-max', 'T-1', '--by', '0'], '/w'), /whole number of at least 1/);
    assert.throws(() => parseCli(['task', 'frobnicate', 'T-1'], '/w'), /unknown task command "frobnicate"/);
  });

  it('retry, unblock, cancel, edit and increase-max follow the extension rules and exit 0 or 2', async () => {
    const failed = await task('failed', { iterations: 4 });
    let ran = await runCli(['task', 'retry', failed], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /back to todo .*ralph run --task/);
    assert.deepEqual([(await store.get(failed)).status, (await store.get(failed)).iterations], ['todo', 0]);
    ran = await runCli(['task', 'retry', failed], ws.dir);
    assert.equal(ran.code, 2, 'a todo task cannot be retried');
    assert.match(ran.stderr, /is todo; it cannot be retried/);

    const blocked = await task('blocked', { iterations: 3 });
    await checkpoint(blocked);
    ran = await runCli(['task', 'unblock', blocked], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /resumes from its checkpoint/);
    assert.equal((await store.get(blocked)).status, 'halted');
    assert.equal((await store.get(blocked)).iterations, 3);

    ran = await runCli(['task', 'cancel', blocked], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal((await store.get(blocked)).status, 'cancelled');

    ran = await runCli(['task', 'edit', blocked, '--title', 'Renamed', '--promise', 'tests pass', '--priority', '5'], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    const edited = await store.get(blocked);
    assert.deepEqual([edited.title, edited.promise, edited.priority, edited.prompt], ['Renamed', 'tests pass', 5, 'p']);

    const timedOut = await task('timeout', { iterations: 5, maxIterations: 5 });
    await checkpoint(timedOut);
    ran = await runCli(['task', 'increase-max', timedOut, '--by', '3'], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(
      ran.stdout,
      /may now run 8 iterations \(was 5; 5 used\) — its iteration limit ended it; resume it with: ralph run \(or ralph run --task T-003\)/,
    );
    assert.deepEqual([(await store.get(timedOut)).status, (await store.get(timedOut)).maxIterations], ['halted', 8]);

    const running = await task('in_progress');
    ran = await runCli(['task', 'edit', running, '--title', 'x'], ws.dir);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /is in_progress; it cannot be edited/);
    ran = await runCli(['task', 'retry', 'T-404'], ws.dir);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /no task with id "T-404"/);
    ran = await runCli(['task', 'retry', failed, '--bogus'], ws.dir);
    assert.equal(ran.code, 2);
  });

  it('delete: refused without a terminal and without --yes; --yes and a terminal "y" delete; "n" keeps it', async () => {
    const a = await task('done');
    const b = await task('failed');
    const c = await task('cancelled');
    let ran = await runCli(['task', 'delete', a], ws.dir);
    assert.equal(ran.code, 4);
    assert.match(ran.stderr, /needs confirmation and stdin is not a terminal; nothing was changed/);
    assert.match(ran.stderr, new RegExp(`ralph task delete ${a} --yes`));
    assert.equal((await store.list()).length, 3);

    ran = await runCli(['task', 'delete', a, '--yes'], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, new RegExp(`deleted ${a}`));

    ran = await runOnTerminal(['task', 'delete', b], ws.dir, 'n');
    assert.equal(ran.code, 4, ran.stdout);
    assert.match(ran.stdout, new RegExp(`Delete task ${b} "a failed task"\\?`));
    assert.match(ran.stdout, /not confirmed; nothing was changed/);
    ran = await runOnTerminal(['task', 'delete', c], ws.dir, 'y');
    assert.equal(ran.code, 0, ran.stdout);
    assert.deepEqual(
      (await store.list()).map((t) => t.id),
      [b],
    );
  });

  it('rollback: names the commits, reverts only that task on --yes or a terminal "y", keeps later work', async () => {
    const first = await task('done');
    const second = await task('done');
    const mine = await taskCommit(first, 'one.txt', 'first task\n');
    await taskCommit(second, 'two.txt', 'second task\n');
    await ws.write('user.txt', 'user work\n');
    ws.git('add', 'user.txt');
    ws.git('commit', '-q', '-m', 'user work');

    let ran = await runCli(['task', 'rollback', first], ws.dir);
    assert.equal(ran.code, 4);
    assert.ok(ran.stderr.includes(mine.slice(0, 7)), 'the refusal names the commit it would revert');
    assert.ok(ws.exists('one.txt'));

    ran = await runOnTerminal(['task', 'rollback', first], ws.dir, 'y');
    assert.equal(ran.code, 0, ran.stdout);
    assert.match(
      ran.stdout,
      new RegExp(
        `Roll back ${first} "a done task"\\?[\\s\\S]*${mine.slice(0, 7)} ralph\\(${first}\\): iteration 1[\\s\\S]*Continue\\? \\[y/N\\]`,
      ),
    );
    assert.match(ran.stdout, /later commits are kept/);
    assert.equal(ws.exists('one.txt'), false);
    assert.ok(ws.exists('two.txt') && ws.exists('user.txt'));
    assert.equal((await store.get(first)).status, 'todo');
    assert.equal((await store.get(second)).status, 'done');
    assert.equal(ws.exists('.ralph/run.lock'), false, 'the run lock is released');

    ran = await runCli(['task', 'rollback', second, '--yes'], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ws.exists('two.txt'), false);
    assert.ok(ws.exists('user.txt'));
    assert.deepEqual(ws.git('log', '--format=%s').split('\n').slice(0, 2), [`ralph(${second}): rollback`, `ralph(${first}): rollback`]);
  });

  it('rollback: a conflict exits 1 and changes nothing; a todo task exits 2; an active run refuses', async () => {
    const first = await task('done');
    const second = await task('done');
    await taskCommit(first, 'shared.txt', 'first\n');
    await taskCommit(second, 'shared.txt', 'second\n');
    const head = ws.git('rev-parse', 'HEAD');
    const status = ws.git('status', '--porcelain');
    let ran = await runCli(['task', 'rollback', first, '--yes'], ws.dir);
    assert.equal(ran.code, 1);
    assert.match(ran.stderr, new RegExp(`shared\\.txt: changed since by task ${second}`));
    assert.equal(ws.git('rev-parse', 'HEAD'), head);
    assert.equal(ws.git('status', '--porcelain'), status);
    assert.equal(await ws.read('shared.txt'), 'second\n');
    assert.equal((await store.get(first)).status, 'done');

    const todo = await task('todo');
    ran = await runCli(['task', 'rollback', todo, '--yes'], ws.dir);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /is todo; it cannot be rolled back/);

    await ws.write(
      '.ralph/run.lock',
      JSON.stringify({ pid: process.pid, host: os.hostname(), runId: 'r', startedAt: new Date().toISOString() }),
    );
    ran = await runCli(['task', 'rollback', second, '--yes'], ws.dir);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /stop the run before rolling back/);
    assert.ok(ws.exists('shared.txt'));
  });
});
