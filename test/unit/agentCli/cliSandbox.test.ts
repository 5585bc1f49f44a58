/**
 * Ralph's sandbox around an agent CLI's process (cliSandbox.ts): the decision per platform and
 * `commands.sandbox`, each adapter's own state folders, the bwrap argument list, and one real
 * bubblewrap run (where it works) of what a CLI's command can and cannot write.
 */
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AGENT_CLI_ADAPTERS } from '../../../src/core/agentCli/adapters';
import { cliBwrapArgs, cliSandboxDecision, cliSandboxLine, sandboxedCommand } from '../../../src/core/agentCli/cliSandbox';
import { probeSandbox, SandboxUnavailableError } from '../../../src/core/commands/sandbox';

const UP = { available: true, reason: 'bubblewrap' };
const DOWN = { available: false, reason: 'bubblewrap (bwrap) not found: spawn bwrap ENOENT' };
const gemini = AGENT_CLI_ADAPTERS.gemini;

/** The pairs `[option, path]` of a bwrap argument list for `option` (`--bind`, `--ro-bind`): the source of each. */
function bound(args: readonly string[], option: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) if (args[i] === option) out.push(args[i + 1]);
  return out;
}

describe('cliSandbox: the decision', () => {
  it('"auto" wraps where bubblewrap works (Linux), runs unwrapped elsewhere and says why; "off" never wraps', () => {
    assert.deepEqual(cliSandboxDecision(gemini, 'auto', UP, 'linux'), { wrapped: true, reason: 'bubblewrap' });
    assert.deepEqual(cliSandboxDecision(gemini, 'auto', DOWN, 'linux'), { wrapped: false, reason: DOWN.reason });
    assert.deepEqual(cliSandboxDecision(gemini, 'off', UP, 'linux'), { wrapped: false, reason: 'commands.sandbox is "off"' });
    // macOS's Seatbelt confines the built-in agent's commands, not a CLI: said, not faked
    const mac = cliSandboxDecision(gemini, 'auto', { available: true, reason: 'sandbox-exec' }, 'darwin');
    assert.equal(mac.wrapped, false);
    assert.match(mac.reason, /on macOS Ralph has no sandbox around an agent CLI/);
    assert.deepEqual(cliSandboxDecision(gemini, 'auto', DOWN, 'win32'), { wrapped: false, reason: 'no sandbox on win32' });
    assert.match(cliSandboxLine(gemini, { wrapped: true, reason: 'bubblewrap' }), /^Gemini CLI runs in Ralph's sandbox \(bubblewrap\)/);
    assert.match(cliSandboxLine(gemini, mac), /^Gemini CLI runs without Ralph's sandbox \(on macOS .*\): its own permission mode/);
  });

  it('"required" with no sandbox around the CLI: refused before it starts, naming the CLI', () => {
    assert.throws(() => cliSandboxDecision(gemini, 'required', DOWN, 'linux'), SandboxUnavailableError);
    assert.throws(
      () => cliSandboxDecision(gemini, 'required', { available: true, reason: 'sandbox-exec' }, 'darwin'),
      /Gemini CLI cannot run in it: on macOS/,
    );
    assert.equal(cliSandboxDecision(gemini, 'required', UP, 'linux').wrapped, true);
  });
});

describe('cliSandbox: each CLI declares its own login and state folders', () => {
  const home = '/home/u';
  it('by default under the home folder', () => {
    const dirs = Object.fromEntries(Object.entries(AGENT_CLI_ADAPTERS).map(([kind, a]) => [kind, a.stateDirs({}, home)]));
    assert.deepEqual(dirs, {
      'claude-code': ['/home/u/.claude'],
      codex: ['/home/u/.codex'],
      gemini: ['/home/u/.gemini'],
      opencode: ['/home/u/.local/share/opencode', '/home/u/.config/opencode', '/home/u/.local/state/opencode', '/home/u/.cache/opencode'],
      copilot: ['/home/u/.copilot', '/home/u/.cache/copilot'],
    });
  });

  it("where the person's environment moves them", () => {
    const env = {
      CLAUDE_CONFIG_DIR: '/c/claude',
      CODEX_HOME: '/c/codex',
      GEMINI_CLI_HOME: '/c/gem',
      XDG_DATA_HOME: '/x/data',
      XDG_CONFIG_HOME: '/x/config',
      XDG_STATE_HOME: '/x/state',
      XDG_CACHE_HOME: '/x/cache',
    };
    assert.deepEqual(AGENT_CLI_ADAPTERS['claude-code'].stateDirs(env, home), ['/c/claude']);
    assert.deepEqual(AGENT_CLI_ADAPTERS.codex.stateDirs(env, home), ['/c/codex']);
    assert.deepEqual(AGENT_CLI_ADAPTERS.gemini.stateDirs(env, home), ['/c/gem/.gemini']);
    assert.deepEqual(AGENT_CLI_ADAPTERS.opencode.stateDirs(env, home), [
      '/x/data/opencode',
      '/x/config/opencode',
      '/x/state/opencode',
      '/x/cache/opencode',
    ]);
    assert.deepEqual(AGENT_CLI_ADAPTERS.copilot.stateDirs({ ...env, COPILOT_HOME: '/c/cop' }, home), ['/c/cop', '/x/cache/copilot']);
    // Copilot keeps ~/.copilot under HOME though XDG_CONFIG_HOME is set (the editor's extension host sets it)
    assert.deepEqual(AGENT_CLI_ADAPTERS.copilot.stateDirs(env, home), ['/home/u/.copilot', '/x/cache/copilot']);
  });
});

describe('cliSandbox: the bwrap arguments of a session in a task worktree', () => {
  let tmp: string;
  let ws: string;
  let wt: string;
  let plan: Parameters<typeof cliBwrapArgs>[0];

  before(async () => {
    tmp = realpathSync(await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-clisandbox-')));
    ws = path.join(tmp, 'ws');
    await fs.mkdir(path.join(ws, '.ralph'), { recursive: true });
    const git = (...args: string[]) => execFileSync('git', ['-C', ws, ...args], { stdio: 'pipe' });
    git('init', '-q');
    await fs.writeFile(path.join(ws, 'a.txt'), 'a\n');
    git('add', 'a.txt');
    git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-qm', 'a');
    wt = path.join(ws, '.ralph', 'worktrees', 't1');
    git('worktree', 'add', '-q', '-b', 'ralph/t1', wt);
    await fs.mkdir(path.join(wt, '.ralph', 'progress'), { recursive: true });
    await fs.writeFile(path.join(wt, '.ralph', 'tasks.json'), '{"tasks":[]}');
    await fs.mkdir(path.join(tmp, 'home', '.gemini'), { recursive: true });
    await fs.mkdir(path.join(tmp, 'session'));
    plan = {
      cwd: wt,
      sessionDir: path.join(tmp, 'session'),
      state: [path.join(tmp, 'home', '.gemini'), path.join(tmp, 'home', '.absent')],
      progressFile: path.join(wt, '.ralph', 'progress', 't1.md'),
      home: path.join(tmp, 'home'),
      // a CLI installed under /tmp: its installation is seen (read-only) in the private /tmp
      programs: [path.join(tmp, 'cli', 'node_modules', '.bin', 'gemini')],
      links: ['node_modules'],
    };
    await fs.mkdir(path.join(tmp, 'cli', 'node_modules', '.bin'), { recursive: true });
    await fs.writeFile(plan.progressFile!, '');
    // the workspace's installed dependencies, linked into the worktree (worktrees.link)
    await fs.mkdir(path.join(ws, 'node_modules'));
    await fs.writeFile(path.join(ws, 'node_modules', 'pkg.js'), 'module.exports = 1;\n');
    await fs.symlink(path.join(ws, 'node_modules'), path.join(wt, 'node_modules'));
  });
  after(() => fs.rm(tmp, { recursive: true, force: true }));

  it('the system read-only, a private /tmp, the worktree writable but its .git and .ralph/, the git data, the notes, the state and session folders writable; the network kept', () => {
    const args = cliBwrapArgs(plan);
    assert.deepEqual(args.slice(0, 9), ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp']);
    // under /tmp: the main workspace and the home folder are seen, read-only
    const ro = bound(args, '--ro-bind');
    assert.ok(ro.includes(ws) && ro.includes(plan.home!) && ro.includes(path.join(tmp, 'cli')), ro.join(' '));
    assert.ok(ro.includes(path.join(wt, '.git')) && ro.includes(path.join(wt, '.ralph')));
    assert.ok(
      ro.includes(path.join(ws, '.git', 'config')) && ro.includes(path.join(ws, '.git', 'hooks')),
      'what makes git run programs stays read-only',
    );
    const rw = bound(args, '--bind');
    assert.deepEqual(rw, [
      wt,
      path.join(ws, '.git', 'worktrees', 't1', 'ralph-cache', 'node_modules', '.cache'),
      path.join(ws, '.git'),
      path.join(ws, '.git', 'worktrees', 't1'),
      plan.progressFile,
      path.join(tmp, 'home', '.gemini'),
      plan.sessionDir,
    ]);
    // the dependencies' cache: the worktree's own folder over `node_modules/.cache`, as for the built-in agent's commands
    const cache = args.indexOf(path.join(ws, 'node_modules', '.cache'));
    assert.ok(
      cache > 0 && args[cache - 2] === '--bind' && args[cache - 1].startsWith(path.join(ws, '.git', 'worktrees', 't1')),
      args.join(' '),
    );
    // later mounts win: the notes after .ralph/, the state folder after the home folder
    assert.ok(args.indexOf(plan.progressFile!) > args.lastIndexOf(path.join(wt, '.ralph')));
    assert.ok(args.lastIndexOf(path.join(tmp, 'home', '.gemini')) > args.lastIndexOf(plan.home!));
    assert.ok(!args.includes('--unshare-net'), 'the CLI talks to its API');
    assert.ok(args.includes('--die-with-parent') && args.includes('--unshare-pid'));
    assert.deepEqual(args.slice(-2), ['--chdir', wt]);
  });

  it('inside real bubblewrap: what a CLI command writes in its worktree, notes and state lands; the main workspace, .ralph/, the home and other files are read-only', async function () {
    if (process.platform !== 'linux' || !(await probeSandbox()).available) this.skip();
    const outside = path.join(os.homedir(), `.ralph-clisandbox-${process.pid}`);
    const script = [
      'for f in "$@"; do if (echo x > "$f") 2>/dev/null; then echo "WROTE $f"; else echo "REFUSED $f"; fi; done',
      // the CLI's own git works in its worktree
      'git add a.txt >/dev/null 2>&1 && echo GIT-OK || echo GIT-FAILED',
    ].join('\n');
    const launch = await sandboxedCommand(
      { adapter: gemini, env: { HOME: plan.home! }, cwd: wt, command: '/bin/sh' },
      plan.sessionDir,
      { bwrap: 'bwrap', progressFile: plan.progressFile, links: ['node_modules'] },
      [
        '-c',
        script,
        'sh',
        ...[
          'new.txt',
          plan.progressFile!,
          path.join(tmp, 'home', '.gemini', 'creds'),
          path.join(plan.sessionDir, 'signals'),
          'node_modules/.cache/c',
        ].map(String),
        path.join(ws, 'escaped.txt'),
        path.join(ws, '.ralph', 'x.json'),
        path.join(wt, '.ralph', 'tasks.json'),
        path.join(plan.home!, 'escaped'),
        outside,
        path.join(ws, '.git', 'hooks', 'pre-commit'),
        'node_modules/pkg.js',
      ],
    );
    const done = spawnSync(launch.file, launch.args, { cwd: wt, encoding: 'utf8' });
    assert.equal(done.status, 0, done.stderr);
    const lines = done.stdout.trim().split('\n');
    assert.deepEqual(
      lines.slice(0, 5).map((l) => l.split(' ')[0]),
      Array(5).fill('WROTE'),
      done.stdout,
    );
    assert.deepEqual(
      lines.slice(5, 12).map((l) => l.split(' ')[0]),
      Array(7).fill('REFUSED'),
      done.stdout,
    );
    assert.equal(lines[12], 'GIT-OK', done.stdout);
    assert.equal(existsSync(path.join(ws, 'escaped.txt')) || existsSync(outside), false);
    assert.equal(await fs.readFile(path.join(wt, '.ralph', 'tasks.json'), 'utf8'), '{"tasks":[]}');
    assert.equal(await fs.readFile(path.join(tmp, 'home', '.gemini', 'creds'), 'utf8'), 'x\n', 'its login folder stays writable');
  });
});
