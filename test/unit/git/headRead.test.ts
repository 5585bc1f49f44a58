import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { GitService, IdentityCheck } from '../../../src/core/git/gitService';
import { StagedDiffReader } from '../../../src/core/git/stagedDiff';
import { HeadReader, RefReader } from '../../../src/core/git/refRead';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * What the loop reads from git's files instead of a process each (HEAD, branch tips, the commit
 * identity once per run, the log per commit) and the one diff a commit takes: every answer must
 * be git's own, in the main tree and in a linked worktree, with packed refs and without.
 */
describe('git answers read from files (real git)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n' }, prefix: 'ralph-headread-' });
  });
  afterEach(() => ws.cleanup());

  it('reads HEAD in the main tree and in a linked worktree as git does, with loose and with packed refs', async () => {
    const wt = ws.path('.ralph', 'worktrees', 'T-1');
    ws.git('worktree', 'add', '-q', '-b', 'ralph/T-1', wt, 'main');
    await fs.writeFile(path.join(wt, 'b.txt'), 'b\n');
    ws.git('-C', wt, 'add', '-A');
    ws.git('-C', wt, 'commit', '-qm', 'in the worktree');
    const expect = (dir: string) => ws.git('-C', dir, 'rev-parse', 'HEAD');
    assert.equal(await new HeadReader(ws.dir).read(), expect(ws.dir));
    assert.equal(await new HeadReader(wt).read(), expect(wt));
    assert.notEqual(expect(wt), expect(ws.dir));

    ws.git('pack-refs', '--all');
    assert.equal(await fs.stat(ws.path('.git', 'refs', 'heads', 'main')).catch(() => undefined), undefined, 'packed');
    assert.equal(await new HeadReader(ws.dir).read(), expect(ws.dir));
    assert.equal(await new HeadReader(wt).read(), expect(wt));

    ws.git('checkout', '-q', '--detach');
    assert.equal(await new HeadReader(ws.dir).read(), expect(ws.dir), 'a detached HEAD holds the sha itself');
  });

  it('is unsure (undefined: the caller asks git) before the first commit and outside a repository root', async () => {
    const fresh = await makeTempWorkspace({ git: true, prefix: 'ralph-headread-' });
    try {
      assert.equal(await new HeadReader(fresh.dir).read(), undefined);
      assert.equal(await new GitService(fresh.dir).headSha(), undefined);
      await fs.mkdir(ws.path('sub'));
      assert.equal(await new HeadReader(ws.path('sub')).read(), undefined);
      assert.equal(await new GitService(ws.path('sub')).headSha(), ws.git('rev-parse', 'HEAD'), 'git answers from a subfolder');
    } finally {
      await fresh.cleanup();
    }
  });

  it('reads branch tips from loose and packed refs, and a branch that does not exist as absent', async () => {
    ws.git('branch', 'ralph/T-2');
    const refs = new RefReader(ws.dir);
    assert.equal(await refs.branchTip('ralph/T-2'), ws.git('rev-parse', 'ralph/T-2'));
    assert.equal(await refs.branchTip('ralph/none'), undefined);
    assert.equal(await refs.branchTip('ralph'), undefined, 'a folder of refs is no branch');
    ws.git('pack-refs', '--all');
    assert.equal(await refs.branchTip('ralph/T-2'), ws.git('rev-parse', 'ralph/T-2'));
    assert.equal(await refs.branchTip('main'), ws.git('rev-parse', 'main'));
    assert.equal(await refs.common(), ws.path('.git'));
  });

  it('names the branch HEAD is on as symbolic-ref does (null when detached), and is unsure where it cannot tell', async () => {
    const wt = ws.path('.ralph', 'worktrees', 'T-3');
    ws.git('worktree', 'add', '-q', '-b', 'ralph/T-3', wt, 'main');
    assert.equal(await new HeadReader(ws.dir).branch(), ws.git('symbolic-ref', '--short', 'HEAD'));
    assert.equal(await new HeadReader(wt).branch(), 'ralph/T-3');
    ws.git('checkout', '-q', '--detach');
    assert.equal(await new HeadReader(ws.dir).branch(), null);
    await fs.mkdir(ws.path('sub'));
    assert.equal(await new HeadReader(ws.path('sub')).branch(), undefined, 'a subfolder: git is asked');
    const fresh = await makeTempWorkspace({ git: true, prefix: 'ralph-headread-' });
    try {
      assert.equal(
        await new HeadReader(fresh.dir).branch(),
        fresh.git('symbolic-ref', '--short', 'HEAD'),
        'no commit yet: still the branch',
      );
    } finally {
      await fresh.cleanup();
    }
  });

  it('sees from the files alone a repository with no linked worktree and no ralph/ branch, and nothing else', async () => {
    const refs = () => new RefReader(ws.dir);
    assert.equal(await refs().noLinkedWorktreesNorBranches('ralph/'), true);
    ws.git('branch', 'ralph-notes');
    assert.equal(await refs().noLinkedWorktreesNorBranches('ralph/'), true, 'a branch beside the prefix is not under it');
    ws.git('branch', 'ralph/T-4');
    assert.equal(await refs().noLinkedWorktreesNorBranches('ralph/'), false, 'a loose ralph/ branch');
    ws.git('pack-refs', '--all');
    assert.equal(await fs.stat(ws.path('.git', 'refs', 'heads', 'ralph', 'T-4')).catch(() => undefined), undefined, 'packed');
    assert.equal(await refs().noLinkedWorktreesNorBranches('ralph/'), false, 'a packed ralph/ branch');
    ws.git('branch', '-D', 'ralph/T-4');
    assert.equal(await refs().noLinkedWorktreesNorBranches('ralph/'), true);
    const elsewhere = await makeTempWorkspace({ prefix: 'ralph-headread-' });
    try {
      ws.git('worktree', 'add', '-q', '--detach', elsewhere.path('mine'));
      assert.equal(await refs().noLinkedWorktreesNorBranches('ralph/'), false, "the person's own linked worktree: git is asked");
    } finally {
      await elsewhere.cleanup();
    }
  });

  it('commits with the paths as they are (spaces, a rename) and keeps a file with a secret out, in one diff', async () => {
    const secrets = { contains: (text: string) => text.includes('sk-secret-value') };
    ws.git('mv', 'a.txt', 'renamed.txt');
    await ws.write('with space.txt', 'hello\n');
    await ws.write('ünï.txt', 'x\n');
    await ws.write('key file.txt', 'token = sk-secret-value\n');
    const commit = await new GitService(ws.dir, secrets).commitAll('iteration');
    assert.ok(commit);
    assert.deepEqual([...commit.files].sort(), ['renamed.txt', 'with space.txt', 'ünï.txt']);
    assert.deepEqual(commit.withheld, ['key file.txt']);
    assert.equal(commit.sha, ws.git('rev-parse', 'HEAD'));
    assert.equal(ws.git('status', '--porcelain', '--', 'key file.txt'), '?? "key file.txt"', 'still in the working tree, uncommitted');
  });

  it('reads raw entries (a rename takes its new path) and the patch after them, whatever pieces git prints them in', () => {
    const secrets = { contains: (text: string) => text.includes('sk-secret-value') };
    const out =
      ':100644 100644 aaa bbb M\0a b.txt\0:100644 100644 ccc ccc R100\0old.txt\0new.txt\0:000000 100644 000 ddd A\0k.txt\0\0' +
      'diff --git a/a b.txt b/a b.txt\n--- a/a b.txt\t\n+++ b/a b.txt\t\n@@ -1 +1 @@\n-sk-secret-value gone\n+line\n' +
      'diff --git a/k.txt b/k.txt\nnew file mode 100644\n--- /dev/null\n+++ b/k.txt\n@@ -0,0 +1 @@\n+token = sk-secret-value\n';
    const expected = { files: ['a b.txt', 'new.txt', 'k.txt'], withheld: ['k.txt'] };
    for (const size of [1, 2, 3, 7, 16, 64, out.length]) {
      const reader = new StagedDiffReader(secrets);
      for (let at = 0; at < out.length; at += size) reader.push(out.slice(at, at + size));
      assert.deepEqual(reader.end(), expected, `in pieces of ${size}`);
    }
    const rawOnly = new StagedDiffReader();
    rawOnly.push(out.slice(0, out.indexOf('\0\0') + 1));
    assert.deepEqual(rawOnly.end(), { files: expected.files, withheld: [] }, 'no guard: --raw alone');
    assert.deepEqual(new StagedDiffReader(secrets).end(), { files: [], withheld: [] });
  });

  it('checks the identity once for the GitServices that share a check; a failed check is asked again', async () => {
    const shared = new IdentityCheck();
    let checks = 0;
    await shared.once(async () => void checks++);
    await shared.once(async () => void checks++);
    assert.equal(checks, 1);
    const failing = new IdentityCheck();
    await assert.rejects(
      failing.once(async () => {
        throw new Error('config locked');
      }),
      /config locked/,
    );
    await failing.once(async () => void checks++);
    assert.equal(checks, 2);

    const wt = ws.path('.ralph', 'worktrees', 'T-3');
    ws.git('worktree', 'add', '-q', '-b', 'ralph/T-3', wt, 'main');
    await ws.write('c.txt', 'c\n');
    await fs.writeFile(path.join(wt, 'd.txt'), 'd\n');
    const identity = new IdentityCheck();
    assert.ok(await new GitService(ws.dir, undefined, identity).commitAll('main tree'));
    assert.ok(await new GitService(wt, undefined, identity).commitAll('worktree'));
    assert.equal(ws.git('-C', wt, 'log', '-1', '--format=%an'), 'Ralph Test');
  });

  it('serves the log of a commit from any GitService, and asks git again once HEAD moves', async () => {
    const first = await new GitService(ws.dir).log(5);
    assert.equal(first[0].sha, ws.git('rev-parse', 'HEAD'));
    await ws.write('e.txt', 'e\n');
    const service = new GitService(ws.dir);
    assert.ok(await service.commitAll('second'));
    const second = await new GitService(ws.dir).log(5);
    assert.deepEqual(
      second.map((e) => e.message),
      ['second', 'initial'],
    );
  });
});
