import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { GitService } from '../../../src/core/git/gitService';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** The identity of the commits Ralph makes: the repository's own (its last value, as git resolves it), else a fallback it sets locally. */
describe('GitService commit identity (real git)', () => {
  let ws: TempWorkspace;
  const saved = {
    HOME: process.env.HOME,
    XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME,
    GIT_CONFIG_NOSYSTEM: process.env.GIT_CONFIG_NOSYSTEM,
  };
  beforeEach(async () => {
    // no identity from the machine: only what the repository says counts
    ws = await makeTempWorkspace({ prefix: 'ralph-identity-' });
    const home = await ws.outsideDir();
    process.env.HOME = home;
    process.env.XDG_CONFIG_HOME = home;
    process.env.GIT_CONFIG_NOSYSTEM = '1';
    execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: ws.dir });
  });
  afterEach(async () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await ws.cleanup();
  });
  const git = (...args: string[]) => execFileSync('git', args, { cwd: ws.dir, encoding: 'utf8' }).trim();

  it('a repository without user.name and user.email gets the fallback identity, set locally, and the commit has it', async () => {
    await ws.write('a.txt', 'a\n');
    assert.ok(await new GitService(ws.dir).commitAll('first'));
    assert.equal(git('config', '--local', 'user.name'), 'Ralph Loop');
    assert.equal(git('config', '--local', 'user.email'), 'ralph-loop@localhost');
    assert.equal(git('log', '-1', '--format=%an <%ae>'), 'Ralph Loop <ralph-loop@localhost>');
  });

  it('an identity the repository has (several values: the last counts) is kept as it is; an empty one is not an identity', async () => {
    git('config', '--add', 'user.name', 'First Name');
    git('config', '--add', 'user.name', 'Last Name');
    git('config', 'user.email', 'me@example.invalid');
    await ws.write('a.txt', 'a\n');
    assert.ok(await new GitService(ws.dir).commitAll('first'));
    assert.equal(git('log', '-1', '--format=%an <%ae>'), 'Last Name <me@example.invalid>');
    assert.deepEqual(git('config', '--local', '--get-all', 'user.name').split('\n'), ['First Name', 'Last Name']);

    const other = await makeTempWorkspace({ prefix: 'ralph-identity-' });
    try {
      execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: other.dir });
      execFileSync('git', ['config', 'user.name', ''], { cwd: other.dir });
      execFileSync('git', ['config', 'user.email', 'me@example.invalid'], { cwd: other.dir });
      await other.write('b.txt', 'b\n');
      assert.ok(await new GitService(other.dir).commitAll('first'));
      assert.equal(
        execFileSync('git', ['log', '-1', '--format=%an <%ae>'], { cwd: other.dir, encoding: 'utf8' }).trim(),
        'Ralph Loop <me@example.invalid>',
      );
    } finally {
      await other.cleanup();
    }
  });
});
