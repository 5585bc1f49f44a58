/**
 * Recovery of parallel tasks' kept worktrees from the real CLI on real git: `ralph task cleanup`
 * (refuses uncommitted work unless confirmed; keeps the branch and the status) and
 * `ralph task retry --fresh` (drops worktree and branch) vs plain retry (continues in it).
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parseCli } from '../../../src/cli/args';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { RalphPaths } from '../../../src/core/paths';
import type { TaskStatus } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import { runCli as runCliWith, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

const runCli = (args: string[], cwd: string) => runCliWith(args, cwd, TEST_GIT_ENV);

describe('ralph task cleanup / retry --fresh: kept worktrees of parallel tasks', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let store: TaskStore;
  let manager: WorktreeManager;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'ralph init');
    store = new TaskStore(new RalphPaths(ws.dir));
    manager = new WorktreeManager(ws.dir);
  });
  afterEach(async () => ws.cleanup());

  /** A task with a worktree holding one commit of its own (like an agent's). */
  async function keptTask(status: TaskStatus): Promise<{ id: string; wt: string }> {
    const added = await store.add({ title: `a ${status} task`, prompt: 'p', promise: 'q' });
    await store.update(added.id, { status, iterations: 2 });
    const created = await manager.create(added.id, 'main');
    await fs.writeFile(path.join(created.path, 'work.txt'), 'committed work\n');
    ws.git('-C', created.path, 'add', 'work.txt');
    ws.git('-C', created.path, 'commit', '-q', '-m', `ralph(${added.id}): iteration 1`);
    return { id: added.id, wt: created.path };
  }

  const branchExists = (id: string) => ws.git('branch', '--list', `ralph/${id}`) !== '';
  const worktreeExists = async (id: string) => (await manager.list()).some((w) => w.taskId === id);

  it('parses cleanup and retry --fresh, and refuses --fresh where it does not apply', () => {
    assert.deepEqual(parseCli(['task', 'cleanup', 'T-1'], '/w'), {
      kind: 'task.action',
      workspace: '/w',
      action: 'cleanup',
      taskId: 'T-1',
      yes: false,
    });
    assert.equal((parseCli(['task', 'retry', 'T-1', '--fresh'], '/w') as { fresh?: boolean }).fresh, true);
    assert.throws(() => parseCli(['task', 'cancel', 'T-1', '--fresh'], '/w'), /--fresh does not apply to task cancel/);
  });

  it('cleanup removes a clean kept worktree, keeps the branch with its commits and the task status', async () => {
    const { id, wt } = await keptTask('failed');
    const tip = ws.git('rev-parse', `ralph/${id}`);
    const ran = await runCli(['task', 'cleanup', id], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(
      ran.stdout,
      new RegExp(`removed the worktree \\.ralph/worktrees/${id} of ${id}; the branch ralph/${id} keeps its commits and ${id} stays failed`),
    );
    assert.equal(await worktreeExists(id), false);
    await assert.rejects(fs.stat(wt));
    assert.equal(ws.git('rev-parse', `ralph/${id}`), tip, 'the branch and its commit stay');
    assert.equal((await store.get(id)).status, 'failed');
    const again = await runCli(['task', 'cleanup', id], ws.dir);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /has no worktree to clean up/);
  });

  it('cleanup refuses uncommitted work without a terminal or --yes (nothing changed), and discards it with --yes', async () => {
    const { id, wt } = await keptTask('timeout');
    await fs.writeFile(path.join(wt, 'unsaved.txt'), 'never committed\n');
    let ran = await runCli(['task', 'cleanup', id], ws.dir);
    assert.equal(ran.code, 4, ran.stderr);
    assert.match(ran.stderr, /Uncommitted changes in \.ralph\/worktrees\/\S+ would be lost: unsaved\.txt/);
    assert.match(ran.stderr, /--yes/);
    assert.equal(await fs.readFile(path.join(wt, 'unsaved.txt'), 'utf8'), 'never committed\n', 'nothing was removed');
    ran = await runCli(['task', 'cleanup', id, '--yes'], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(await worktreeExists(id), false);
    assert.ok(branchExists(id));
  });

  it('cleanup refuses tasks that are running or done (status rule), exit 2', async () => {
    const { id } = await keptTask('in_progress');
    const ran = await runCli(['task', 'cleanup', id], ws.dir);
    assert.equal(ran.code, 2);
    assert.match(ran.stderr, /is in_progress; it cannot be cleaned up/);
    assert.ok(await worktreeExists(id));
  });

  it('retry continues in the kept worktree; retry --fresh drops worktree and branch', async () => {
    const kept = await keptTask('failed');
    let ran = await runCli(['task', 'retry', kept.id], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /continues in its worktree \.ralph\/worktrees\/\S+ \(--fresh starts over/);
    assert.ok(await worktreeExists(kept.id));
    assert.equal((await store.get(kept.id)).status, 'todo');

    const fresh = await keptTask('halted');
    ran = await runCli(['task', 'retry', fresh.id, '--fresh'], ws.dir);
    assert.equal(ran.code, 0, ran.stderr);
    assert.match(ran.stdout, /starts over from the current tip/);
    assert.equal(await worktreeExists(fresh.id), false);
    assert.equal(branchExists(fresh.id), false, 'the branch is dropped too');
    assert.deepEqual([(await store.get(fresh.id)).status, (await store.get(fresh.id)).iterations], ['todo', 0]);
    // the next run makes the worktree from main's tip: no trace of the old work
    const made = await manager.create(fresh.id, 'main');
    assert.equal(made.created, true);
    await assert.rejects(fs.stat(path.join(made.path, 'work.txt')));
  });
});
