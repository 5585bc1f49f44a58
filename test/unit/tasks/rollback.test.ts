import assert from 'node:assert/strict';
import { RollbackBlockedError } from '../../../src/core/errors';
import { GitService } from '../../../src/core/git/gitService';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { TaskActions } from '../../../src/core/record/actions';
import { type RollbackPlanner, rollbackConfirmation } from '../../../src/core/tasks/rollback';
import { TaskStore } from '../../../src/core/tasks/store';
import type { Step } from '../../fixtures/scriptedServer';
import { type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { makeTempWorkspace } from '../helpers/tempWorkspace';

const write = (path: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });
const commit = (message: string): Step => ({ toolCalls: [{ name: 'git_commit', arguments: { message } }] });
const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] };

describe('rollback of one task (reverts its own commits, keeps later work)', function () {
  this.timeout(60000);
  let h: LoopHarness;
  let actions: TaskActions;
  afterEach(async () => h?.cleanup());

  async function setup(steps: Step[]) {
    h = await makeLoopHarness(steps);
    actions = new TaskActions(h.store, new CheckpointStore(h.paths), new GitService(h.ws.dir));
  }

  /** Everything that tells whether a repository changed: HEAD, index, files, status, worktrees. */
  function snapshot() {
    return {
      head: h.ws.git('rev-parse', 'HEAD'),
      index: h.ws.git('ls-files', '-s'),
      status: h.ws.git('status', '--porcelain=v1', '--untracked-files=all'),
      diff: h.ws.git('diff'),
      staged: h.ws.git('diff', '--cached'),
      worktrees: h.ws.git('worktree', 'list', '--porcelain'),
      log: h.ws.git('log', '--format=%H %s'),
    };
  }

  it('reverts an earlier task with later tasks and user commits on top; nothing of theirs is lost', async () => {
    await setup([
      write('a.txt', 'from T-001\n'),
      commit('agent commit of T-001'),
      write('a2.txt', 'also T-001\n'),
      complete,
      write('b.txt', 'from T-002\n'),
      complete,
    ]);
    const first = await h.addTask({ title: 'first' });
    const second = await h.addTask({ title: 'second' });
    assert.equal((await h.runner().run({ taskId: first })).results[0].status, 'done');
    assert.equal((await h.runner().run({ taskId: second })).results[0].status, 'done');
    await h.ws.write('README.md', '# sample\nedited by the user\n');
    await h.ws.write('user.txt', 'mine\n');
    h.ws.git('add', 'README.md', 'user.txt');
    h.ws.git('commit', '-q', '-m', 'user work');
    await h.ws.write('notes.txt', 'uncommitted and unrelated\n');
    await h.ws.write('staged.txt', 'staged and unrelated\n');
    h.ws.git('add', 'staged.txt');
    const logBefore = h.ws.git('log', '--format=%H');

    const plan = await actions.planRollback(first);
    assert.deepEqual(
      plan.commits.map((c) => c.subject),
      ['agent commit of T-001', `ralph(${first}): iteration 1`],
    );
    const confirmation = rollbackConfirmation(plan);
    for (const c of plan.commits) assert.ok(confirmation.includes(c.sha.slice(0, 7)), 'the confirmation names each commit');
    assert.doesNotMatch(confirmation, /reset --hard/);

    const outcome = await actions.rollback(first, plan);
    assert.equal(outcome.task.status, 'todo');
    assert.equal(outcome.task.iterations, 0);
    assert.match(outcome.message, /reverted 2 commits/);
    assert.match(outcome.message, /later commits are kept/);

    assert.equal(h.ws.exists('a.txt'), false);
    assert.equal(h.ws.exists('a2.txt'), false);
    assert.equal(await h.ws.read('b.txt'), 'from T-002\n', "T-002's file stays");
    assert.equal(await h.ws.read('user.txt'), 'mine\n', "the user's commit stays");
    assert.equal(await h.ws.read('README.md'), '# sample\nedited by the user\n');
    assert.equal(await h.ws.read('notes.txt'), 'uncommitted and unrelated\n', 'uncommitted unrelated work stays');
    assert.ok(h.ws.exists('.ralph/config.json'), 'the config committed with the first iteration is not reverted');
    const logAfter = h.ws.git('log', '--format=%H');
    assert.equal(logAfter.split('\n').slice(1).join('\n'), logBefore, 'history is only added to');
    assert.equal(h.ws.git('log', '-1', '--format=%s'), `ralph(${first}): rollback`);
    assert.equal((await h.store.get(second)).status, 'done');
    assert.equal(h.ws.git('status', '--porcelain', '--', 'a.txt', 'b.txt'), '');
    assert.equal(h.ws.git('diff', '--cached', '--name-only'), 'staged.txt', 'staged work stays staged');
    assert.doesNotMatch(h.ws.git('show', '--name-only', '--format=', 'HEAD'), /staged\.txt|notes\.txt/, 'and is not part of the revert');

    // a second rollback finds nothing left to revert
    const again = await actions.planRollback(first);
    assert.deepEqual(again.commits, []);
  });

  it('a revert that conflicts with a later task changes nothing and names the file and the task', async () => {
    await setup([write('shared.txt', 'line from T-001\n'), complete, write('shared.txt', 'line rewritten by T-002\n'), complete]);
    const first = await h.addTask({ title: 'first' });
    const second = await h.addTask({ title: 'second' });
    await h.runner().run({ taskId: first });
    await h.runner().run({ taskId: second });
    await h.ws.write('scratch.txt', 'untracked, unrelated\n');
    await h.ws.write('README.md', '# sample\nunstaged edit\n');
    await h.store.update(first, { status: 'failed' });
    const before = snapshot();
    const files = { shared: await h.ws.read('shared.txt'), readme: await h.ws.read('README.md'), scratch: await h.ws.read('scratch.txt') };

    await assert.rejects(actions.rollback(first), (error: unknown) => {
      assert.ok(error instanceof RollbackBlockedError);
      assert.equal(error.reason, 'conflict');
      assert.deepEqual(error.files, ['shared.txt']);
      assert.match(error.message, new RegExp(`shared\\.txt: changed since by task ${second}`));
      assert.match(error.message, /nothing was changed/);
      return true;
    });
    assert.deepEqual(snapshot(), before, 'HEAD, index, working tree and worktrees unchanged');
    assert.deepEqual(
      { shared: await h.ws.read('shared.txt'), readme: await h.ws.read('README.md'), scratch: await h.ws.read('scratch.txt') },
      files,
    );
    assert.equal((await h.store.get(first)).status, 'failed', 'the task keeps its status');
  });

  it('names a user commit that is in the way', async () => {
    await setup([write('shared.txt', 'line from T-001\n'), complete]);
    const first = await h.addTask();
    await h.runner().run({ taskId: first });
    await h.ws.write('shared.txt', 'the user rewrote it\n');
    h.ws.git('commit', '-q', '-am', 'my own rewrite');
    const before = snapshot();
    await assert.rejects(actions.rollback(first), /shared\.txt: changed since by your commit [0-9a-f]{7} "my own rewrite"/);
    assert.deepEqual(snapshot(), before);
  });

  it('refuses, changing nothing, when uncommitted changes sit in a file the revert touches', async () => {
    await setup([write('a.txt', 'from the task\n'), complete]);
    const id = await h.addTask();
    await h.runner().run({ taskId: id });
    await h.ws.write('a.txt', 'the user is editing this\n');
    const before = snapshot();
    await assert.rejects(
      actions.rollback(id),
      (error: unknown) => error instanceof RollbackBlockedError && error.reason === 'dirty' && /a\.txt/.test(error.message),
    );
    assert.deepEqual(snapshot(), before);
    assert.equal(await h.ws.read('a.txt'), 'the user is editing this\n');
    assert.equal((await h.store.get(id)).status, 'done');
  });

  it('refuses when the commits changed after the confirmation', async () => {
    await setup([write('a.txt', 'one\n'), complete, write('a2.txt', 'two\n'), complete]);
    const id = await h.addTask();
    await h.runner().run({ taskId: id });
    const plan = await actions.planRollback(id);
    await actions.retry(id);
    await h.runner().run({ taskId: id });
    await assert.rejects(actions.rollback(id, plan), /changed since the rollback was confirmed/);
    assert.ok(h.ws.exists('a.txt') && h.ws.exists('a2.txt'));
  });

  it('works when the workspace is a folder inside a larger repository', async () => {
    const ws = await makeTempWorkspace({ commit: true, files: { 'top.txt': 'top\n', 'app/README.md': '# app\n' } });
    try {
      const paths = new RalphPaths(ws.path('app'));
      const store = new TaskStore(paths);
      const task = await store.add({ title: 't', prompt: 'p', promise: 'q' });
      await ws.write('app/.ralph/config.json', '{}\n');
      await ws.write('app/made.txt', 'made\n');
      ws.git('add', '-A');
      ws.git('commit', '-q', '-m', `ralph(${task.id}): iteration 1`);
      await store.update(task.id, { status: 'done' });
      const subActions = new TaskActions(store, new CheckpointStore(paths), new GitService(ws.path('app')));
      const outcome = await subActions.rollback(task.id);
      assert.deepEqual(outcome.applied.files, ['app/made.txt']);
      assert.equal(ws.exists('app/made.txt'), false);
      assert.ok(ws.exists('app/.ralph/config.json'), "the workspace's .ralph/ is left alone");
      assert.ok(ws.exists('top.txt'));
    } finally {
      await ws.cleanup();
    }
  });

  it('asks other planners first (a task on its own unmerged branch), falling back to the revert', async () => {
    await setup([write('a.txt', 'one\n'), complete]);
    const id = await h.addTask();
    const other = await h.addTask({ title: 'on its own branch' });
    await h.runner().run({ taskId: id });
    await h.store.update(other, { status: 'failed' });
    const dropped: string[] = [];
    const branchPlanner: RollbackPlanner = {
      plan: async (task) =>
        task.id !== other
          ? undefined
          : {
              taskId: task.id,
              kind: 'drop-branch',
              commits: [],
              describe: [`branch ralph/${task.id}`],
              apply: async () => (dropped.push(task.id), { files: [], summary: `dropped branch ralph/${task.id}` }),
            },
    };
    const withBranches = new TaskActions(h.store, new CheckpointStore(h.paths), new GitService(h.ws.dir), [branchPlanner]);
    const onBranch = await withBranches.rollback(other);
    assert.equal(onBranch.plan.kind, 'drop-branch');
    assert.deepEqual(dropped, [other]);
    assert.match(onBranch.message, /dropped branch ralph\//);
    assert.equal(onBranch.task.status, 'todo');
    const merged = await withBranches.rollback(id);
    assert.equal(merged.plan.kind, 'revert');
    assert.equal(h.ws.exists('a.txt'), false);
  });
});
