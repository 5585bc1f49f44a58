import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CLI_ENV, runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * The in-process CLI the tests prepare workspaces with (`runCliInProcess`) answers as the child
 * process does: same exit code, stdout and stderr, the child's environment and working directory
 * for the call, this process's own put back after it.
 */
describe('the CLI in this process (test set-up) against the CLI as a child process', function () {
  this.timeout(60_000);
  const made: TempWorkspace[] = [];
  const workspace = async (files: Record<string, string> = { 'README.md': '# sample\n' }) => {
    const ws = await makeTempWorkspace({ commit: true, files });
    made.push(ws);
    return ws;
  };
  afterEach(async () => {
    for (const ws of made.splice(0)) await ws.cleanup();
  });

  it('init, task add and a usage error: the same exit code, stdout and stderr as the child', async () => {
    const [inside, child] = [await workspace(), await workspace()];
    const calls: string[][] = [
      ['init', '--json'],
      ['init'],
      ['task', 'add', 'Write', 'hello', '--prompt', 'p', '--promise', 'q'],
      ['task', 'add', 'Second', '--prompt', 'p', '--promise', 'q', '--depends-on', 'T-001'],
      ['task', 'add', 'x', '--prompt', 'p'],
      ['task', 'add', 'x', '--prompt', 'p', '--promise', 'q', '--depends-on', 'T-404'],
    ];
    for (const args of calls) {
      const [a, b] = [await runCliInProcess(args, inside.dir), await runCli(args, child.dir)];
      assert.deepEqual(a, b, args.join(' '));
    }
    const tasks = (ws: TempWorkspace) => ws.read('.ralph/tasks.json').then((text) => text.replace(/"\d{4}-[^"]*"/g, '"<time>"'));
    assert.equal(await tasks(inside), await tasks(child));
  });

  it('a workspace given relative to cwd is found as the child finds it', async () => {
    const ws = await workspace();
    const parent = path.dirname(ws.dir);
    const args = ['init', '--json', '--workspace', path.basename(ws.dir)];
    const inside = await runCliInProcess(args, parent);
    assert.equal(inside.code, 0, inside.stderr);
    assert.deepEqual(JSON.parse(inside.stdout), {
      gitInitialized: false,
      created: ['.ralph/.gitignore', '.ralph/config.json', '.ralph/tasks.json'],
    });
  });

  it("git sees the call's environment (a PATH without git fails as in the child); process.env and the cwd are put back", async () => {
    const [inside, child] = [await workspace(), await workspace()];
    // not yet a repository: init must start git
    for (const ws of [inside, child]) await fs.rm(ws.path('.git'), { recursive: true });
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-nogit-'));
    try {
      const env = { ...CLI_ENV, PATH: empty };
      const envBefore = { ...process.env };
      const cwdBefore = process.cwd();
      const a = await runCliInProcess(['init'], inside.dir, env);
      assert.deepEqual({ ...process.env }, envBefore);
      assert.equal(process.cwd(), cwdBefore);
      const b = await runCli(['init'], child.dir, env);
      assert.notEqual(b.code, 0, 'the child finds no git');
      assert.deepEqual(a, b);
      // and with git on PATH it works, in both
      assert.equal((await runCliInProcess(['init'], inside.dir)).code, 0);
      assert.ok(inside.exists('.git'));
    } finally {
      await fs.rm(empty, { recursive: true, force: true });
    }
  });

  it('two calls at once take turns, each with its own environment', async () => {
    const [a, b] = [await workspace(), await workspace()];
    for (const ws of [a, b]) await fs.rm(ws.path('.git'), { recursive: true });
    const empty = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-nogit-'));
    try {
      const [ra, rb] = await Promise.all([runCliInProcess(['init'], a.dir, { ...CLI_ENV, PATH: empty }), runCliInProcess(['init'], b.dir)]);
      assert.notEqual(ra.code, 0, 'no git on its PATH');
      assert.equal(rb.code, 0, rb.stderr);
      assert.match(rb.stdout, /initialized a git repository/);
    } finally {
      await fs.rm(empty, { recursive: true, force: true });
    }
    const adds = await Promise.all(
      ['One', 'Two', 'Three'].map((title) => runCliInProcess(['task', 'add', title, '--prompt', 'p', '--promise', 'q'], b.dir)),
    );
    assert.deepEqual(
      adds.map((r) => r.stdout),
      ['T-001\n', 'T-002\n', 'T-003\n'],
    );
  });

  it('starts no git helper process, as the child starts none: git runs from this process in the working directory of each call', async function () {
    if (process.platform !== 'linux') this.skip(); // child processes read from /proc
    const helpers = async () => {
      const found: string[] = [];
      for (const pid of (await fs.readdir('/proc')).filter((name) => /^\d+$/.test(name))) {
        const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== process.pid) continue;
        const command = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
        if (command.includes('gitHostMain')) found.push(`${pid}: ${command.replace(/\0/g, ' ')}`);
      }
      return found;
    };
    // a helper an earlier test file of this worker process started through the compiled core is not the CLI's
    const earlier = new Set(await helpers());
    const started = async () => (await helpers()).filter((helper) => !earlier.has(helper));
    const [first, second] = [await workspace(), await workspace()];
    for (const ws of [first, second]) await fs.rm(ws.path('.git'), { recursive: true });
    assert.equal((await runCliInProcess(['init'], first.dir)).code, 0);
    assert.deepEqual(await started(), []);
    // a helper started in the first call would have kept its directory, removed now
    await first.cleanup();
    const init = await runCliInProcess(['init'], second.dir);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, /initialized a git repository/);
    assert.deepEqual(await started(), []);
  });

  it('refuses the verbs whose process is part of what they do', () => {
    for (const args of [['run'], ['--workspace', '/tmp', 'run', '--task', 'T-001'], ['mcp'], ['hook', 'pre-tool-use']])
      assert.throws(() => runCliInProcess(args, '/'), /needs its own process: use runCli/, args.join(' '));
  });
});
