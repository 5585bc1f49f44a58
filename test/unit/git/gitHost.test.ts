import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { GitCommandError, gitLog, gitStatus, runGit, streamGit } from '../../../src/core/git/gitExec';
import { gitHostPid } from '../../../src/core/git/gitHost';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('git started from the helper process (gitHost)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
  });
  afterEach(async () => ws.cleanup());

  it("gives git's exit code, output and errors as a direct start would, input included", async function () {
    if (process.platform === 'win32') this.skip(); // no helper there: git is started directly
    const ok = await runGit(ws.dir, ['rev-parse', '--abbrev-ref', 'HEAD']);
    assert.deepEqual(ok, { code: 0, stdout: 'main\n', stderr: '' });
    assert.ok(gitHostPid(), 'a helper process started git');
    assert.notEqual(gitHostPid(), process.pid);
    const bad = await runGit(ws.dir, ['rev-parse', '--verify', '--quiet', 'refs/heads/nope']);
    assert.equal(bad.code, 1);
    const failed = await runGit(ws.dir, ['no-such-command']);
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /no-such-command/);
    const hashed = await runGit(ws.dir, ['hash-object', '--stdin'], { input: 'hello\n' });
    assert.equal(hashed.stdout.trim(), 'ce013625030ba8dba906f756967f9e9ca394464a');
    // several at once: each answer goes to its own call
    const many = await Promise.all(Array.from({ length: 8 }, (_, i) => runGit(ws.dir, ['hash-object', '--stdin'], { input: `${i}\n` })));
    const direct = Array.from({ length: 8 }, (_, i) =>
      execFileSync('git', ['hash-object', '--stdin'], { cwd: ws.dir, input: `${i}\n`, encoding: 'utf8' }),
    );
    assert.deepEqual(
      many.map((m) => m.stdout),
      direct,
    );
  });

  it("a stream call hands git's output over in pieces, as it comes, that make up what a whole call gives", async function () {
    if (process.platform === 'win32') this.skip();
    for (let i = 0; i < 3000; i++) await ws.write(`d${i % 10}/file ${i} ünï.txt`, `${i}\n`);
    const whole = await runGit(ws.dir, ['status', '--porcelain', '-z', '--untracked-files=all']);
    const pieces: string[] = [];
    const streamed = await streamGit(ws.dir, ['status', '--porcelain', '-z', '--untracked-files=all'], (text) => void pieces.push(text));
    assert.deepEqual(streamed, { code: 0, stdout: '', stderr: '' });
    assert.ok(pieces.length > 1, `${pieces.length} pieces`);
    assert.equal(pieces.join(''), whole.stdout);
    const failed = await streamGit(ws.dir, ['no-such-command'], () => assert.fail('no output'));
    assert.notEqual(failed.code, 0);
    assert.match(failed.stderr, /no-such-command/);
  });

  it('a helper that was killed is started again; a call in flight when it died fails rather than running twice', async function () {
    if (process.platform === 'win32') this.skip();
    await runGit(ws.dir, ['status']);
    const first = gitHostPid()!;
    // a git that waits for its input, so the helper dies while it runs
    const inFlight = runGit(ws.dir, ['hash-object', '--stdin'], { input: undefined });
    process.kill(first, 'SIGKILL');
    const answer = await inFlight;
    assert.equal(answer.code, 128);
    assert.match(answer.stderr, /helper process ended before git did/);
    const again = await runGit(ws.dir, ['rev-parse', 'HEAD']);
    assert.equal(again.code, 0);
    assert.notEqual(gitHostPid(), first, 'a new helper');
  });

  it('started ahead of the first call, the helper is the one that answers it; starting it again starts no other', async function () {
    if (process.platform === 'win32') this.skip();
    // in a process of its own: no helper has started there yet
    const script = `
      const { gitHostPid, startGitHost } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitHost'))});
      const { runGit } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitExec'))});
      const before = gitHostPid() ?? null;
      startGitHost();
      const started = gitHostPid();
      startGitHost();
      const again = gitHostPid();
      runGit(process.argv[1], ['rev-parse', '--abbrev-ref', 'HEAD']).then((r) =>
        console.log(JSON.stringify({ before, started, again, after: gitHostPid(), self: process.pid, branch: r.stdout })));
    `;
    const seen = JSON.parse(execFileSync(process.execPath, ['-e', script, ws.dir], { encoding: 'utf8' }));
    assert.equal(seen.before, null);
    assert.equal(typeof seen.started, 'number', 'a helper was started before any call');
    assert.notEqual(seen.started, seen.self);
    assert.equal(seen.again, seen.started, 'starting it again starts no other');
    assert.equal(seen.after, seen.started, 'the call went to the helper started ahead');
    assert.equal(seen.branch, 'main\n');
  });

  it("the CLI's way (gitHostWhenAsked): git runs directly, without a helper, until a run starts one; then the helper answers", async function () {
    if (process.platform === 'win32') this.skip();
    // in a process of its own, as the CLI: no helper has started there yet
    const script = `
      const { gitHostPid, gitHostWhenAsked, startGitHost } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitHost'))});
      const { runGit } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitExec'))});
      gitHostWhenAsked();
      (async () => {
        const direct = await runGit(process.argv[1], ['rev-parse', '--abbrev-ref', 'HEAD']);
        const hashed = await runGit(process.argv[1], ['hash-object', '--stdin'], { input: 'x\\n' });
        const before = gitHostPid() ?? null;
        startGitHost();
        const started = gitHostPid();
        const viaHelper = await runGit(process.argv[1], ['rev-parse', '--abbrev-ref', 'HEAD']);
        process.kill(started, 'SIGKILL');
        // until this process has seen the helper's end (not a fixed time: a loaded machine can take longer)
        for (let i = 0; i < 3000 && gitHostPid() === started; i++) await new Promise((resolve) => setTimeout(resolve, 10));
        const afterDeath = await runGit(process.argv[1], ['rev-parse', '--abbrev-ref', 'HEAD']);
        console.log(JSON.stringify({ direct: direct.stdout, hashed: hashed.stdout, before, started, viaHelper: viaHelper.stdout, afterDeath: afterDeath.stdout, restarted: gitHostPid() ?? null, self: process.pid }));
      })();
    `;
    const seen = JSON.parse(execFileSync(process.execPath, ['-e', script, ws.dir], { encoding: 'utf8' }));
    assert.equal(seen.direct, 'main\n');
    assert.equal(seen.hashed, execFileSync('git', ['hash-object', '--stdin'], { cwd: ws.dir, input: 'x\n', encoding: 'utf8' }));
    assert.equal(seen.before, null, 'no helper for the calls before the run');
    assert.equal(typeof seen.started, 'number', 'the run starts the helper');
    assert.notEqual(seen.started, seen.self);
    assert.equal(seen.viaHelper, 'main\n');
    // once a run asked for it, a helper that died is started again, as in the editor
    assert.equal(seen.afterDeath, 'main\n');
    assert.equal(typeof seen.restarted, 'number');
    assert.notEqual(seen.restarted, seen.started, 'a new helper');
  });

  it('where the helper cannot start, git runs directly: the calls handed to it included', async function () {
    if (process.platform === 'win32') this.skip();
    // in a process of its own: the helper's state is per process
    const script = `
      process.execPath = '/nonexistent/node-for-the-helper';
      const { runGit } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitExec'))});
      Promise.all([runGit(process.argv[1], ['rev-parse', '--abbrev-ref', 'HEAD']), runGit(process.argv[1], ['hash-object', '--stdin'], { input: 'x\\n' })])
        .then((r) => console.log(JSON.stringify(r)));
    `;
    const out = execFileSync(process.execPath, ['-e', script, ws.dir], { encoding: 'utf8' });
    const [branch, hashed] = JSON.parse(out) as { code: number; stdout: string }[];
    assert.deepEqual([branch.code, branch.stdout], [0, 'main\n']);
    assert.equal(
      hashed.stdout.trim(),
      execFileSync('git', ['hash-object', '--stdin'], { cwd: ws.dir, input: 'x\n', encoding: 'utf8' }).trim(),
    );
  });
});

describe('simple-git in the helper process (gitStatus, gitLog)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n', 'old name.txt': 'moved\n' } });
  });
  afterEach(async () => ws.cleanup());

  it('reads any file name from status: spaces, quotes, non-ASCII, renames with their source', async () => {
    await ws.write('é "quoted".txt', 'x\n');
    await ws.write('README.md', '# changed\n');
    ws.git('mv', 'old name.txt', 'new name.txt');
    const { files, conflicted } = await gitStatus(ws.dir, ['--untracked-files=all']);
    const byPath = new Map(files.map((f) => [f.path, f]));
    assert.equal(byPath.get('é "quoted".txt')?.index, '?');
    assert.equal(byPath.get('README.md')?.workingDir, 'M');
    assert.equal(byPath.get('new name.txt')?.from, 'old name.txt');
    assert.deepEqual(conflicted, []);
  });

  it('names the paths in conflict', async () => {
    ws.git('checkout', '-q', '-b', 'side');
    await ws.write('README.md', '# side\n');
    ws.git('commit', '-qam', 'side');
    ws.git('checkout', '-q', 'main');
    await ws.write('README.md', '# main\n');
    ws.git('commit', '-qam', 'main');
    await runGit(ws.dir, ['merge', 'side']);
    assert.deepEqual((await gitStatus(ws.dir)).conflicted, ['README.md']);
  });

  it('reads subjects, bodies and parents from log, a range and a path included', async () => {
    await ws.write('a.txt', 'a\n');
    ws.git('add', '.');
    ws.git('commit', '-q', '-m', 'second: with a colon\n\nbody line\nRalph-Task: T-001');
    const [head, first] = await gitLog(ws.dir, ['-n5']);
    assert.equal(head.subject, 'second: with a colon');
    assert.match(head.body, /^body line\nRalph-Task: T-001\n?$/);
    assert.deepEqual(head.parents, [first.hash]);
    assert.deepEqual(first.parents, []);
    const touching = await gitLog(ws.dir, [`${first.hash}..HEAD`, '--', 'a.txt']);
    assert.deepEqual(
      touching.map((e) => e.hash),
      [head.hash],
    );
  });

  it("a failing parsed call throws with git's own message", async () => {
    await assert.rejects(
      gitLog(ws.dir, ['no-such-ref']),
      (error: Error) => error instanceof GitCommandError && /no-such-ref/.test(error.message),
    );
  });

  it("runs in this process the same way where the helper is off (RALPH_GIT_HOST=off), a hook's GIT_DIR ignored", async function () {
    await ws.write('new file.txt', 'n\n');
    const script = `
      const { gitStatus, runGit } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitExec'))});
      const { gitHostPid } = require(${JSON.stringify(require.resolve('../../../src/core/git/gitHost'))});
      Promise.all([gitStatus(process.argv[1], ['--untracked-files=all']), runGit(process.argv[1], ['rev-parse', '--show-toplevel'])])
        .then(([status, top]) => console.log(JSON.stringify({ files: status.files.map((f) => f.path), top: top.stdout.trim(), pid: gitHostPid() ?? null })));
    `;
    const env = { ...process.env, RALPH_GIT_HOST: 'off', GIT_DIR: '/nonexistent/.git' };
    const out = JSON.parse(execFileSync(process.execPath, ['-e', script, ws.dir], { encoding: 'utf8', env })) as {
      files: string[];
      top: string;
      pid: number | null;
    };
    assert.deepEqual(out.files, ['new file.txt']);
    assert.equal(out.top, execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: ws.dir, encoding: 'utf8' }).trim());
    assert.equal(out.pid, null, 'no helper process');
  });
});
