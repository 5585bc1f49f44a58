import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { bwrapArgs, probeSandbox, sandboxLaunch } from '../../../src/core/commands/sandbox';
import { SANDBOX_EXEC, seatbeltProfile } from '../../../src/core/commands/seatbelt';

/** The macOS sandbox's profile, generated and read here on Linux: its behaviour on macOS is untested by this suite. */
describe('macOS sandbox (sandbox-exec with a generated Seatbelt profile)', () => {
  let root: string;
  let home: string;
  let temp: string;
  before(() => {
    root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-seatbelt-ws-')));
    home = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-seatbelt-home-')));
    temp = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'ralph-seatbelt-tmp-')));
    mkdirSync(path.join(root, '.git', 'hooks'), { recursive: true });
    mkdirSync(path.join(root, '.ralph', 'progress'), { recursive: true });
    writeFileSync(path.join(root, '.ralph', 'progress', 'T-001.md'), '');
  });
  after(() => {
    for (const dir of [root, home, temp]) rmSync(dir, { recursive: true, force: true });
  });

  const rules = (profile: string) => profile.split('\n').filter((l) => l.startsWith('('));

  it('writes only to the workspace (not .git or .ralph), the progress notes and temp folders; denies credential reads; no network', () => {
    const profile = seatbeltProfile(
      { root, network: false, writablePaths: [path.join(root, '.ralph', 'progress', 'T-001.md')] },
      { home, temp },
    );
    const lines = rules(profile);
    assert.deepEqual(
      lines.slice(0, 3),
      ['(version 1)', '(allow default)', '(deny file-write*)'],
      'everything else allowed, then every write denied before the allowed ones (the last matching rule decides)',
    );
    assert.ok(
      lines.includes(
        `(allow file-write* (require-all (subpath "${root}") (require-not (subpath "${root}/.git")) (require-not (literal "${root}/.git")) (require-not (subpath "${root}/.ralph"))))`,
      ),
    );
    assert.ok(lines.includes(`(allow file-write* (literal "${root}/.ralph/progress/T-001.md"))`));
    const temps = lines.find((l) => l.startsWith('(allow file-write* (subpath') && l.includes(temp));
    assert.ok(temps?.includes('(subpath "/private/tmp")') && temps.includes('(subpath "/private/var/folders")'), temps);
    assert.ok(lines.some((l) => l.includes('(literal "/dev/null")')));
    const reads = lines.find((l) => l.startsWith('(deny file-read*'));
    for (const store of ['.ssh', '.aws', '.gnupg', '.config/gh', '.kube', '.docker'])
      assert.ok(reads?.includes(`(subpath "${home}/${store}")`), store);
    for (const file of ['.netrc', '.npmrc', '.git-credentials', '.pypirc']) assert.ok(reads?.includes(`(literal "${home}/${file}")`), file);
    assert.ok(lines.indexOf(reads!) > lines.findIndex((l) => l === '(allow default)'), 'the read denial comes after the general allow');
    assert.deepEqual(lines.slice(-3), [
      '(deny network-outbound (remote ip))',
      '(deny network-inbound (local ip))',
      '(deny network-bind (local ip))',
    ]);
    assert.equal(profile.split('(').length, profile.split(')').length, 'balanced parentheses');
  });

  it("with commands.network the network stays open; an approved command may write the repository's data, never its hooks and config", () => {
    const profile = seatbeltProfile({ root, network: true, writablePaths: [], gitWritable: true }, { home, temp }, [
      path.join(root, '.git'),
    ]);
    assert.doesNotMatch(profile, /network/);
    const lines = rules(profile);
    const allowGit = lines.findIndex((l) => l === `(allow file-write* (subpath "${root}/.git"))`);
    const denyHooks = lines.findIndex(
      (l) =>
        l.startsWith('(deny file-write*') &&
        l.includes(`(subpath "${root}/.git/hooks")`) &&
        l.includes(`(literal "${root}/.git/config")`) &&
        l.includes(`(subpath "${root}/.git/info")`),
    );
    assert.ok(allowGit > 0 && denyHooks > allowGit, profile);
  });

  it("lets a gate's test probe write its records folder (bubblewrap: bound over the private /tmp)", () => {
    const profile = seatbeltProfile({ root, network: false, writablePaths: [], writableDirs: [temp] }, { home, temp: root });
    assert.ok(rules(profile).includes(`(allow file-write* (subpath "${temp}"))`), profile);
    const args = bwrapArgs({ root, network: false, writablePaths: [], writableDirs: [temp] }, root, {}, '/bin/sh', 'true');
    const bind = args.findIndex((a, i) => a === '--bind' && args[i + 1] === temp && args[i + 2] === temp);
    assert.ok(bind > args.indexOf('--tmpfs'), args.join(' '));
  });

  it('quotes paths so that a workspace name cannot end a string or add a rule', () => {
    const odd = path.join(temp, 'we"ird) (allow file-write* (subpath "/")');
    const profile = seatbeltProfile({ root: odd, network: false, writablePaths: [] }, { home, temp });
    assert.ok(profile.includes(`(subpath "${odd.replace(/"/g, '\\"')}")`));
    assert.ok(!rules(profile).includes('(allow file-write* (subpath "/"))'));
  });

  it('is what runs a sandboxed command on macOS: sandbox-exec -p <profile> shell -c command, HOME and TMPDIR in a temp folder of its own', () => {
    const launch = sandboxLaunch(
      { root, network: false, writablePaths: [] },
      root,
      { PATH: '/usr/bin:/bin', HOME: '/tmp/home' },
      '/bin/bash',
      'npm test',
      { platform: 'darwin' },
    );
    assert.equal(launch.file, SANDBOX_EXEC);
    assert.equal(launch.args[0], '-p');
    assert.match(launch.args[1], /^\(version 1\)\n\(allow default\)/);
    assert.deepEqual(launch.args.slice(2), ['/bin/bash', '-c', 'npm test']);
    assert.ok(launch.env.HOME.startsWith(launch.env.TMPDIR) && launch.env.HOME.endsWith('home'));
    assert.ok(launch.args[1].includes(`(subpath "${realpathSync(launch.env.TMPDIR)}")`), 'its temp folder is writable');
    const linux = sandboxLaunch({ root, network: false, writablePaths: [] }, root, { PATH: '/usr/bin' }, '/bin/bash', 'npm test', {
      platform: 'linux',
      bwrap: 'bwrap',
    });
    assert.equal(linux.file, 'bwrap');
    assert.ok(linux.args.includes('--unshare-net'));
  });

  it('is chosen on darwin; Windows has none', async () => {
    const windows = await probeSandbox('bwrap', 'win32');
    assert.equal(windows.available, false);
    assert.match(windows.reason, /no sandbox on win32/);
    if (process.platform !== 'darwin') {
      // here sandbox-exec is absent: the probe says so rather than pretending
      const darwin = await probeSandbox('bwrap', 'darwin');
      assert.equal(darwin.available, false);
      assert.match(darwin.reason, /sandbox-exec not found/);
    }
  });
});
