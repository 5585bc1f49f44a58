import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { git, GitCommandError, gitMessage, runGit } from '../../../src/core/git/gitExec';
import { clearStaleGitLock } from '../../../src/core/git/indexLock';
import { GitLockHeldError, lockFileOf, runGitUnderLockRule, underGitLockRule } from '../../../src/core/git/lockRule';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

const INDEX_LOCK_ADVICE = `fatal: Unable to create '/w/.git/index.lock': File exists.

Another git process seems to be running in this repository, e.g.
an editor opened by 'git commit'. Please make sure all processes
are terminated then try again. If it still fails, a git process
may have crashed in this repository earlier:
remove the file manually to continue.
`;

async function aged(file: string, seconds = 60): Promise<void> {
  await fs.writeFile(file, '');
  const then = new Date(Date.now() - seconds * 1000);
  await fs.utimes(file, then, then);
}

/** A git process that works in `dir` until killed (reads its stdin). */
function gitAtWork(dir: string): ChildProcess {
  return spawn('git', ['hash-object', '--stdin'], { cwd: dir, env: TEST_GIT_ENV, stdio: ['pipe', 'ignore', 'ignore'] });
}

describe('git lock rule', function () {
  this.timeout(30000);
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n' } });
  });
  afterEach(async () => ws.cleanup());

  it('says what git said in whole sentences, never "File exists. are terminated then try again."', () => {
    const text = gitMessage({ stdout: '', stderr: INDEX_LOCK_ADVICE });
    assert.equal(
      text,
      "fatal: Unable to create '/w/.git/index.lock': File exists. Another git process is working in this repository, or one that crashed left the lock behind.",
    );
    assert.doesNotMatch(
      new GitCommandError(['add', '-A'], { code: 128, stdout: '', stderr: INDEX_LOCK_ADVICE }).message,
      /are terminated|a git process$/,
    );
    const overwrite =
      'error: Your local changes to the following files would be overwritten by merge:\n\ta.txt\nPlease commit your changes or stash them before you merge.\nAborting\n';
    assert.equal(
      gitMessage({ stdout: '', stderr: overwrite }),
      'error: Your local changes to the following files would be overwritten by merge: a.txt Please commit your changes or stash them before you merge. Aborting',
    );
    assert.equal(gitMessage({ stdout: '', stderr: 'hint: x\n\nfatal: bad revision\n\nAborting\n' }), 'fatal: bad revision Aborting');
    assert.equal(lockFileOf(INDEX_LOCK_ADVICE), '/w/.git/index.lock');
  });

  it('clears a stale index.lock and does the step again, saying so', async () => {
    await ws.write('b.txt', 'b\n');
    await aged(ws.path('.git/index.lock'));
    const cleared: string[] = [];
    await underGitLockRule(ws.dir, () => git(ws.dir, ['add', 'b.txt']), {
      where: 'your working tree',
      onCleared: ({ file }) => cleared.push(file),
    });
    assert.deepEqual(cleared, [ws.path('.git/index.lock')]);
    assert.match(ws.git('status', '--porcelain'), /^A {2}b\.txt$/m);
  });

  it('stops with the way out when a git process holds the lock past the wait, and never removes it', async () => {
    await aged(ws.path('.git/index.lock'));
    const holder = gitAtWork(ws.dir);
    try {
      await new Promise((r) => setTimeout(r, 200)); // the git process is up
      let tries = 0;
      await assert.rejects(
        underGitLockRule(ws.dir, () => (tries++, git(ws.dir, ['add', '-A'])), {
          where: 'your working tree',
          waitMs: 600,
          shown: (f) => path.relative(ws.dir, f),
        }),
        (e: unknown) =>
          e instanceof GitLockHeldError &&
          new RegExp(
            `git cannot change your working tree: \\.git/index\\.lock was kept because git process ${holder.pid} is working in this repository \\(waited 1 s\\); once no git process works in this repository, delete it \\(rm \\.git/index\\.lock\\)`,
          ).test(e.message),
      );
      assert.equal(tries, 1, 'tried once, then waited a bounded time');
      assert.equal(ws.exists('.git/index.lock'), true);
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('a young lock that disappears while waited for is no failure; runGit failures other than locks are returned as they are', async () => {
    await ws.write('c.txt', 'c\n');
    await fs.writeFile(ws.path('.git/index.lock'), '');
    setTimeout(() => void fs.rm(ws.path('.git/index.lock'), { force: true }), 300);
    const added = await runGitUnderLockRule(ws.dir, ws.dir, ['add', 'c.txt'], { where: 'your working tree', waitMs: 5000 });
    assert.equal(added.code, 0, added.stderr);
    const bad = await runGitUnderLockRule(ws.dir, ws.dir, ['rev-parse', '--verify', 'no-such-ref'], { where: 'x' });
    assert.notEqual(bad.code, 0);
  });

  it("removes only lock files inside the repository's git dirs, whatever a message names", async () => {
    const outside = path.join(await ws.outsideDir(), 'victim.lock');
    await aged(outside);
    const check = await clearStaleGitLock(ws.dir, outside);
    assert.equal(check.state, 'kept');
    assert.equal((await fs.stat(outside)).isFile(), true);
    await aged(ws.path('.git/config'));
    assert.equal((await clearStaleGitLock(ws.dir, ws.path('.git/config'))).state, 'kept', 'not a .lock file');
    // a linked worktree's lock and a ref lock in the common dir are the repository's own
    ws.git('worktree', 'add', '-q', '--detach', ws.path('wt'));
    const wtGitDir = path.resolve(ws.path('wt'), (await runGit(ws.path('wt'), ['rev-parse', '--git-dir'])).stdout.trim());
    await aged(path.join(wtGitDir, 'index.lock'));
    assert.equal((await clearStaleGitLock(ws.path('wt'), undefined)).state, 'removed');
    await aged(ws.path('.git/refs/heads/main.lock'));
    assert.equal((await clearStaleGitLock(ws.path('wt'), ws.path('.git/refs/heads/main.lock'))).state, 'removed');
  });
});
