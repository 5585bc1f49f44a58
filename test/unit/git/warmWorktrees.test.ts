import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { WarmWorktrees } from '../../../src/core/git/warmWorktrees';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('worktrees made ahead for the next tasks (real git)', () => {
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let warm: WarmWorktrees;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    wt = new WorktreeManager(ws.dir);
    warm = new WarmWorktrees(wt, 'main');
  });
  afterEach(async () => ws.cleanup());

  const commitOnMain = async (file: string) => {
    await ws.write(file, `${file}\n`);
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', `add ${file}`);
    return ws.git('rev-parse', 'main');
  };

  it('hands out the worktree made ahead when the target has not moved', async () => {
    const tip = ws.git('rev-parse', 'main');
    warm.prepare(['T-001']);
    const made = await warm.madeFor('T-001');
    assert.equal(made?.created, true);
    const taken = await warm.take('T-001');
    assert.deepEqual(taken, made, 'the very worktree made ahead');
    assert.equal(taken.created, true);
    assert.equal(taken.base, tip);
    assert.equal(ws.git('-C', taken.path, 'rev-parse', 'HEAD'), tip);
    await warm.dispose();
    assert.deepEqual(
      (await wt.list()).map((w) => w.taskId),
      ['T-001'],
      "a worktree a task took is the task's: never removed by dispose",
    );
  });

  it('brings a worktree made ahead to the current tip when the target moved before the task started', async () => {
    warm.prepare(['T-002']);
    const made = (await warm.madeFor('T-002'))!;
    const newTip = await commitOnMain('merged-meanwhile.txt');
    assert.notEqual(made.base, newTip);
    const taken = await warm.take('T-002');
    assert.equal(taken.base, newTip);
    assert.equal(ws.git('rev-parse', 'ralph/T-002'), newTip);
    assert.equal(ws.git('-C', taken.path, 'rev-parse', 'HEAD'), newTip);
    assert.equal(existsSync(path.join(taken.path, 'merged-meanwhile.txt')), true, 'its files are the new tip');
    assert.equal(ws.git('-C', taken.path, 'status', '--porcelain'), '', 'index and files moved with the branch');
  });

  it('follows the target as soon as it moves, before its task starts; one that cannot follow is made again at take', async () => {
    warm.prepare(['T-020', 'T-021']);
    const [made, stuck] = [(await warm.madeFor('T-020'))!, (await warm.madeFor('T-021'))!];
    // T-021's branch moved by someone else: it cannot follow (compare-and-swap on its ref)
    await fs.writeFile(path.join(stuck.path, 'stray.txt'), 'stray\n');
    ws.git('-C', stuck.path, 'add', '-A');
    ws.git('-C', stuck.path, 'commit', '-q', '-m', 'someone committed here');
    const newTip = await commitOnMain('landed.txt');
    warm.follow();
    const followed = (await warm.madeFor('T-020'))!;
    assert.equal(followed.base, newTip, 'brought to the tip before any task took it');
    assert.equal(ws.git('rev-parse', 'ralph/T-020'), newTip);
    assert.equal(ws.git('-C', made.path, 'status', '--porcelain'), '');
    assert.equal(existsSync(path.join(made.path, 'landed.txt')), true);
    assert.equal((await warm.madeFor('T-021'))!.base, stuck.base, 'left as it was');
    const taken = await warm.take('T-021');
    assert.equal(taken.base, newTip);
    assert.equal(ws.git('-C', taken.path, 'rev-parse', 'HEAD'), newTip);
    assert.deepEqual(await warm.take('T-020'), followed, 'taken as it followed: nothing more to do');
  });

  it('makes it again from the tip when the made-ahead worktree cannot follow (its branch moved)', async () => {
    warm.prepare(['T-003']);
    const made = (await warm.madeFor('T-003'))!;
    await fs.writeFile(path.join(made.path, 'stray.txt'), 'stray\n');
    ws.git('-C', made.path, 'add', '-A');
    ws.git('-C', made.path, 'commit', '-q', '-m', 'someone committed here');
    const newTip = await commitOnMain('tip.txt');
    const taken = await warm.take('T-003');
    assert.equal(taken.base, newTip);
    assert.equal(ws.git('-C', taken.path, 'rev-parse', 'HEAD'), newTip);
  });

  it('never makes over a worktree a task has already (retried, interrupted): it is handed back with its work', async () => {
    const own = await wt.create('T-004', 'main');
    await fs.writeFile(path.join(own.path, 'work.txt'), 'uncommitted work\n');
    await commitOnMain('later.txt');
    warm.prepare(['T-004']);
    const taken = await warm.take('T-004');
    assert.equal(taken.created, false);
    assert.equal(await fs.readFile(path.join(taken.path, 'work.txt'), 'utf8'), 'uncommitted work\n');
  });

  it('removes the worktrees and branches no task took when the run ends', async () => {
    warm.prepare(['T-005', 'T-006']);
    await warm.take('T-005');
    await warm.dispose();
    assert.deepEqual(
      (await wt.list()).map((w) => w.taskId),
      ['T-005'],
    );
    assert.equal(ws.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph/'), 'ralph/T-005');
    warm.prepare(['T-007']);
    assert.deepEqual(
      (await wt.list()).map((w) => w.taskId),
      ['T-005'],
      'nothing is made ahead after the end',
    );
  });

  it('after a killed run, removes the made-ahead worktrees of tasks that never started, unless something of a task is in them', async () => {
    for (const id of ['T-010', 'T-011', 'T-012']) await wt.create(id, 'main');
    await commitOnMain('later.txt');
    // T-011 got a commit of its own, T-012 a change in its tree: both kept
    await fs.writeFile(path.join(wt.pathFor('T-011'), 'own.txt'), 'own\n');
    ws.git('-C', wt.pathFor('T-011'), 'add', '-A');
    ws.git('-C', wt.pathFor('T-011'), 'commit', '-q', '-m', 'own work');
    await fs.writeFile(path.join(wt.pathFor('T-012'), 'draft.txt'), 'draft\n');
    const removed = await new WarmWorktrees(wt, 'main').discardLeftovers(['T-010', 'T-011', 'T-012', 'T-013']);
    assert.deepEqual(removed, [wt.pathFor('T-010')]);
    assert.deepEqual((await wt.list()).map((w) => w.taskId).sort(), ['T-011', 'T-012']);
    assert.equal(ws.git('for-each-ref', '--format=%(refname:short)', 'refs/heads/ralph/T-010'), '');
  });
});
