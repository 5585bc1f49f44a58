import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import type { RalphEventBody } from '../../../src/core/events';
import { mergeTarget } from '../../../src/core/loop/merge/mergeTarget';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** The branch the merge queue lands on, read from git's files where it can be (real git). */
describe('mergeTarget (real git)', () => {
  let ws: TempWorkspace;
  let warnings: string[];
  const emit = (body: RalphEventBody) => {
    if (body.type === 'warning') warnings.push(body.message);
  };
  const noTarget = { merge: {} } as Parameters<typeof mergeTarget>[1];
  beforeEach(async () => {
    warnings = [];
    ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n' }, prefix: 'ralph-target-' });
  });
  afterEach(() => ws.cleanup());

  it('is the branch checked out, in the repository root and from a subfolder (where git is asked)', async () => {
    ws.git('checkout', '-q', '-b', 'feature/x');
    assert.equal(await mergeTarget(ws.dir, noTarget, emit), 'feature/x');
    await fs.mkdir(ws.path('sub'));
    assert.equal(await mergeTarget(ws.path('sub'), noTarget, emit), 'feature/x');
    assert.deepEqual(warnings, []);
  });

  it('is merge.targetBranch when set, on a detached HEAD too; a target without a commit says why', async () => {
    ws.git('branch', 'release');
    ws.git('checkout', '-q', '--detach');
    assert.equal(await mergeTarget(ws.dir, { merge: { targetBranch: 'release' } } as typeof noTarget, emit), 'release');
    assert.equal(await mergeTarget(ws.dir, noTarget, emit), undefined);
    assert.match(warnings.at(-1) ?? '', /detached HEAD/);
    assert.equal(await mergeTarget(ws.dir, { merge: { targetBranch: 'nowhere' } } as typeof noTarget, emit), undefined);
    assert.match(warnings.at(-1) ?? '', /the target branch nowhere has no commit/);
  });

  it('a fresh repository (its branch has no commit yet) runs one task at a time, and says so', async () => {
    const fresh = await makeTempWorkspace({ git: true, prefix: 'ralph-target-' });
    try {
      assert.equal(await mergeTarget(fresh.dir, noTarget, emit), undefined);
      assert.match(warnings.at(-1) ?? '', /the target branch main has no commit to start worktrees from/);
    } finally {
      await fresh.cleanup();
    }
  });
});
