import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('WorktreeManager (real git)', () => {
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    wt = new WorktreeManager(ws.dir);
  });
  afterEach(async () => ws.cleanup());

  it('creates .ralph/worktrees/<id> on ralph/<id> from the target CURRENT tip, git-ignored in the workspace', async () => {
    await ws.write('later.txt', 'after the first commit\n');
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'second');
    const tip = ws.git('rev-parse', 'main');
    const created = await wt.create('T-001', 'main');
    assert.equal(created.path, ws.path('.ralph', 'worktrees', 'T-001'));
    assert.equal(created.branch, 'ralph/T-001');
    assert.equal(created.base, tip);
    assert.equal(created.created, true);
    assert.equal(ws.git('-C', created.path, 'rev-parse', 'HEAD'), tip);
    assert.equal(ws.git('-C', created.path, 'symbolic-ref', '--short', 'HEAD'), 'ralph/T-001');
    assert.equal(existsSync(path.join(created.path, 'later.txt')), true, 'made from the current tip');
    assert.equal(ws.git('status', '--porcelain'), '', 'the worktree does not show up in the user status');
    ws.git('add', '-A');
    assert.equal(ws.git('diff', '--cached', '--name-only'), '', 'nor is it added by git add -A');
    assert.deepEqual(
      (await wt.list()).map((w) => [w.taskId, w.branch]),
      [['T-001', 'ralph/T-001']],
    );
  });

  it('picks an existing worktree up again with its work, and fresh starts over from the new tip', async () => {
    const first = await wt.create('T-002', 'main');
    await fs.writeFile(path.join(first.path, 'work.txt'), 'uncommitted work\n');
    const again = await wt.create('T-002', 'main');
    assert.equal(again.created, false);
    assert.equal(await fs.readFile(path.join(again.path, 'work.txt'), 'utf8'), 'uncommitted work\n');
    ws.git('-C', first.path, 'add', '-A');
    ws.git('-C', first.path, 'commit', '-q', '-m', 'task work');
    // the worktree directory vanished (a crash, a user rm -rf): the branch keeps the commits
    await fs.rm(first.path, { recursive: true, force: true });
    const revived = await wt.create('T-002', 'main');
    assert.equal(revived.created, false);
    assert.equal(await fs.readFile(path.join(revived.path, 'work.txt'), 'utf8'), 'uncommitted work\n', 'the committed work is back');
    const fresh = await wt.create('T-002', 'main', { fresh: true });
    assert.equal(fresh.created, true);
    assert.equal(existsSync(path.join(fresh.path, 'work.txt')), false);
    assert.equal(ws.git('rev-parse', 'ralph/T-002'), ws.git('rev-parse', 'main'));
  });

  it('a folder deleted by hand while git still has its record: the new worktree is made all the same, from the tip, as a new one', async () => {
    // the record is on a detached HEAD, so git's refusal comes after it made the branch: the plan of before still holds
    ws.git('worktree', 'add', '--detach', ws.path('.ralph', 'worktrees', 'T-007'), 'main');
    await fs.rm(ws.path('.ralph', 'worktrees', 'T-007'), { recursive: true, force: true });
    const tip = ws.git('rev-parse', 'main');
    const made = await wt.create('T-007', 'main');
    assert.deepEqual([made.created, made.base, made.branch], [true, tip, 'ralph/T-007']);
    assert.equal(ws.git('-C', made.path, 'symbolic-ref', '--short', 'HEAD'), 'ralph/T-007');
    assert.equal(existsSync(path.join(made.path, 'README.md')), true);
    assert.deepEqual(
      (await wt.list()).map((w) => w.taskId),
      ['T-007'],
    );
    // removed the same way: folder and record in one go, nothing left to prune
    await wt.remove('T-007', { deleteBranch: true });
    assert.equal(existsSync(made.path), false);
    assert.deepEqual(
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
      [`worktree ${ws.dir}`],
    );
    assert.equal(ws.git('branch', '--list', 'ralph/*'), '');
  });

  it('prune with nothing left by a crash changes nothing: no worktree, branch or folder of another kind is touched', async () => {
    ws.git('branch', 'feature/mine');
    const outside = path.join(await ws.outsideDir(), 'my-own-worktree');
    ws.git('worktree', 'add', '--detach', outside, 'main');
    const report = await wt.prune(new Set(['T-001']));
    assert.deepEqual(report, { removedWorktrees: [], removedBranches: [], removedLocks: [], removedDirs: [] });
    assert.equal(existsSync(outside), true);
    assert.match(ws.git('branch', '--list', 'feature/mine'), /feature\/mine/);
  });

  it('removes a worktree and its branch, or keeps the branch when asked', async () => {
    await wt.create('T-003', 'main');
    await wt.create('T-004', 'main');
    await wt.remove('T-003', { deleteBranch: true });
    await wt.remove('T-004', { deleteBranch: false });
    assert.deepEqual(await wt.list(), []);
    assert.equal(ws.git('branch', '--list', 'ralph/*'), 'ralph/T-004');
    assert.equal(existsSync(ws.path('.ralph', 'worktrees', 'T-003')), false);
    // git's own view: no record left, nothing to prune, and the name is free for the task again
    assert.equal(
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      1,
    );
    assert.equal(ws.git('worktree', 'prune', '--dry-run', '--verbose'), '');
    assert.deepEqual(await fs.readdir(ws.path('.ralph', 'worktrees')), []);
    const again = await wt.create('T-004', 'main');
    assert.equal(ws.git('-C', again.path, 'status', '--porcelain'), '');
  });

  it('several removed at once (tasks landed together): each record and folder gone, the next worktree command works', async () => {
    const ids = ['T-040', 'T-041', 'T-042', 'T-043'];
    for (const id of ids) await wt.create(id, 'main');
    await fs.writeFile(ws.path('.ralph', 'worktrees', 'T-041', 'untracked.txt'), 'left by an agent\n');
    await Promise.all(ids.map((id) => wt.remove(id, { deleteBranch: true })));
    assert.deepEqual(await wt.list(), []);
    assert.equal(ws.git('branch', '--list', 'ralph/*'), '');
    assert.deepEqual(await fs.readdir(ws.path('.ralph', 'worktrees')), []);
    // a run killed between moving a folder aside and deleting it: the next prune takes it
    await ws.write('.ralph/worktrees/_gone-T-044-0a1b2c3d/file.txt', 'half deleted\n');
    await wt.prune(new Set());
    assert.deepEqual(await fs.readdir(ws.path('.ralph', 'worktrees')), []);
  });

  it('prune cleans what a crash left: orphan worktree, stale index.lock, half-made worktree, branch without a task', async () => {
    const kept = await wt.create('T-010', 'main');
    await wt.create('T-011', 'main');
    ws.git('branch', 'ralph/T-099'); // a branch whose task was deleted
    // a crash mid-`git add`: index.lock left in the kept worktree's git dir
    const gitDir = path.resolve(kept.path, ws.git('-C', kept.path, 'rev-parse', '--git-dir'));
    await fs.writeFile(path.join(gitDir, 'index.lock'), '');
    await fs.writeFile(path.join(kept.path, 'notes.txt'), 'agent work\n');
    assert.throws(() => ws.git('-C', kept.path, 'add', 'notes.txt'), /index\.lock/);
    // a crash mid-`git worktree add`: the entry stays locked "initializing"
    ws.git('worktree', 'add', '--detach', ws.path('.ralph', 'worktrees', 'T-012'), 'main');
    ws.git('worktree', 'lock', '--reason', 'initializing', ws.path('.ralph', 'worktrees', 'T-012'));
    await ws.write('.ralph/worktrees/T-013/leftover.txt', 'no git metadata\n');

    const report = await wt.prune(new Set(['T-010', 'T-012']));
    assert.deepEqual(
      (await wt.list()).map((w) => w.taskId),
      ['T-010'],
    );
    assert.deepEqual(report.removedBranches.sort(), ['ralph/T-011', 'ralph/T-099']);
    assert.ok(report.removedLocks.includes(path.join(gitDir, 'index.lock')));
    assert.ok(report.removedDirs.some((d) => d.endsWith('T-013')));
    assert.equal(existsSync(ws.path('.ralph', 'worktrees', 'T-012')), false);
    assert.equal(await fs.readFile(path.join(kept.path, 'notes.txt'), 'utf8'), 'agent work\n', 'a kept worktree keeps its files');
    ws.git('-C', kept.path, 'add', 'notes.txt'); // git works there again
    assert.equal(
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')).length,
      2,
    );
    assert.equal(ws.git('branch', '--list', 'ralph/*'), '+ ralph/T-010');
  });

  it('prune keeps the branches it is told to keep even without a worktree (merge.deleteBranch false)', async () => {
    await wt.create('T-020', 'main');
    await wt.remove('T-020', { deleteBranch: false });
    ws.git('branch', 'ralph/T-021');
    const report = await wt.prune(new Set(), new Set(['T-020']));
    assert.deepEqual(report.removedBranches, ['ralph/T-021']);
    assert.equal(ws.git('branch', '--list', 'ralph/*'), 'ralph/T-020');
  });

  it('links installed dependencies into a worktree, invisible to git, and removing the worktree leaves them alone', async () => {
    await ws.write('.gitignore', 'node_modules/\n');
    ws.git('add', '.gitignore');
    ws.git('commit', '-q', '-m', 'ignore deps');
    await ws.write('node_modules/dep/index.js', 'module.exports = 42;\n');
    const linked = new WorktreeManager(ws.dir, ['node_modules', 'not-installed']);
    const { path: dir } = await linked.create('T-030', 'main');
    assert.equal((await fs.lstat(path.join(dir, 'node_modules'))).isSymbolicLink(), true);
    assert.equal(existsSync(path.join(dir, 'not-installed')), false, 'absent paths are skipped');
    assert.equal((await import(path.join(dir, 'node_modules', 'dep', 'index.js'))).default, 42);
    await fs.writeFile(path.join(dir, 'work.txt'), 'x\n');
    assert.equal(ws.git('-C', dir, 'status', '--porcelain'), '?? work.txt', 'the link is not something to commit');
    await linked.remove('T-030', { deleteBranch: true });
    assert.equal(await ws.read('node_modules/dep/index.js'), 'module.exports = 42;\n', 'the workspace deps survive the removal');
    await linked.create('T-031', 'main');
    await linked.prune(new Set());
    assert.equal(await ws.read('node_modules/dep/index.js'), 'module.exports = 42;\n', 'and a prune');
  });

  it('refuses task ids that could leave the worktrees directory', async () => {
    await assert.rejects(wt.create('../escape', 'main'), /not a valid task id/);
    await assert.rejects(wt.create('T-1', 'no-such-branch'), /does not exist/);
  });
});
