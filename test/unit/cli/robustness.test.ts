import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { initWorkspace } from '../../../src/core/init';
import { openRalph } from '../../../src/core/ralph';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer, type StaticStep, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { isAlive } from '../helpers/processes';
import { CLI, CLI_ENV, collect, runCli, runCliInProcess, startCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { waitFor } from '../../helpers/waitFor';

const cli = (args: string[], cwd: string) => runCli(args, cwd);
const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'hello.txt has hi' } }] };
/**
 * One `ralph` process that runs `ralph task add "Task <p>-<i>" --prompt p --promise q` for i = 0..4, one after
 * another, through the bundle's exported `main`, set up as its entry point sets up a child without a terminal;
 * argv: the bundle, p. One JSON line per add: its exit code, stdout and stderr.
 */
const ADDER = `
const [cli, p] = process.argv.slice(1);
const { main, gitHostWhenAsked } = require(cli);
gitHostWhenAsked();
(async () => {
  for (let i = 0; i < 5; i++) {
    let out = '';
    let err = '';
    const io = { out: (l) => (out += l + '\\n'), err: (l) => (err += l + '\\n'), cwd: process.cwd(), onInterrupt: () => () => undefined };
    const code = await main(['task', 'add', 'Task ' + p + '-' + i, '--prompt', 'p', '--promise', 'q'], io);
    process.stdout.write(JSON.stringify({ code, out, err }) + '\\n');
  }
})().catch((error) => {
  process.stderr.write(String(error && error.stack || error) + '\\n');
  process.exitCode = 1;
});
`;
const write = (content: string): StaticStep => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content } }] });

describe('the ralph CLI under crashes, races and bad input', function () {
  this.timeout(120000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  const baseConfig = () => ({
    llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
    loop: { maxIterations: 3, maxParallel: 1 },
  });

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
    // what `ralph init` does, in this process: the setup, not what these tests try
    await initWorkspace(ws.dir);
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(baseConfig()));
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  /** A task, added as `ralph task add` adds it (the store, in this process): the setup, not what these tests try. */
  async function addTask(): Promise<string> {
    return (await openRalph(ws.dir).store.add({ title: 'Write hello', prompt: 'Create hello.txt with hi', promise: 'hello.txt has hi' }))
      .id;
  }
  const tasks = async () => TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
  const subjects = () => ws.git('log', '--format=%s').split('\n');

  it('a stale .git/index.lock no git process holds is cleared, said so, and the iteration committed', async () => {
    const id = await addTask();
    await fs.writeFile(ws.path('.git/index.lock'), '');
    const old = new Date(Date.now() - 60_000);
    await fs.utimes(ws.path('.git/index.lock'), old, old);
    server.push(write('hi'), complete);
    const result = await cli(['run'], ws.dir);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, /removed a stale \.git\/index\.lock/);
    assert.equal((await tasks())[0].status, 'done');
    assert.ok(subjects().includes(`ralph(${id}): iteration 1`));
    assert.equal(ws.exists('.git/index.lock'), false);
  });

  it('a commit that meets a held index.lock halts the task and the run with the way out (exit 1); the next run commits that iteration under its own number', async function () {
    this.timeout(180000);
    const id = await addTask();
    await addTask(); // a second task the halted run must not start
    // iteration 1 commits; while iteration 2's agent works, a git process takes the working tree's lock and keeps it
    let holder: ReturnType<typeof spawn> | undefined;
    const takeLock: Step = async () => {
      await fs.writeFile(ws.path('.git/index.lock'), '');
      holder = spawn('git', ['hash-object', '--stdin'], { cwd: ws.dir, stdio: ['pipe', 'ignore', 'ignore'] });
      return write('hi again');
    };
    server.push(write('hi'), { content: 'first part done' }, takeLock, complete);
    try {
      const result = await cli(['run'], ws.dir);
      assert.equal(result.code, 1, result.stderr + result.stdout);
      assert.match(
        result.stdout,
        new RegExp(
          `could not commit iteration 2: git cannot change your working tree: \\.git/index\\.lock was kept because git process ${holder?.pid} is working in this repository \\(waited 15 s\\); once no git process works in this repository, delete it \\(rm \\.git/index\\.lock\\) and run again \\(resume with: ralph run --task ${id}; iteration 2 is committed then, without a new model call\\)`,
        ),
      );
      assert.doesNotMatch(result.stdout + result.stderr, /are terminated then try again/);
      assert.match(result.stderr, /the run halted: could not commit iteration 2/);
      const [task, other] = await tasks();
      assert.equal(task.status, 'halted');
      assert.equal(task.iterations, 1, 'iteration 2 has not ended');
      assert.equal(other.status, 'todo', 'the run stopped: no other task met the same lock');
      assert.deepEqual(
        subjects().filter((s) => s.startsWith('ralph(')),
        [`ralph(${id}): iteration 1`],
      );
      assert.equal(await ws.read('hello.txt'), 'hi again', 'the work stays in the working tree');
      assert.equal(ws.exists('.git/index.lock'), true, 'a held lock is never removed');
    } finally {
      holder?.kill('SIGKILL');
    }
    // the git process is gone: the next run clears the lock and commits iteration 2's work as iteration 2
    const calls = server.requests.length;
    const resumed = await cli(['run', '--task', id], ws.dir);
    assert.equal(resumed.code, 0, resumed.stderr + resumed.stdout);
    assert.match(resumed.stdout, /removed a stale \.git\/index\.lock/);
    assert.equal(server.requests.length, calls, 'no model call for the iteration already run');
    assert.deepEqual(
      subjects().filter((s) => s.startsWith('ralph(')),
      [`ralph(${id}): iteration 2`, `ralph(${id}): iteration 1`],
    );
    const [task] = await tasks();
    assert.equal(task.status, 'done');
    assert.equal(task.iterations, 2);
  });

  it('SIGKILL after the iteration commit, before its checkpoint: resume finishes it without a new model call', async () => {
    const id = await addTask();
    const markerDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-gate-'));
    const marker = path.join(markerDir, 'pid');
    // the gate runs after the commit and before the checkpoint: it reports its pid and hangs there
    // (not in the integrity baseline taken before iteration 1, when hello.txt does not exist yet)
    // the host sees the marker and the gate's pid only outside the sandbox (its /tmp and pids are private)
    const config = {
      ...baseConfig(),
      commands: { sandbox: 'off' },
      gates: [{ name: 'hang', kind: 'custom', command: `test -e hello.txt || exit 0; echo $$ > ${marker} && exec sleep 300` }],
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    server.push(write('hi'), complete);
    const first = startCli(['run'], ws.dir);
    await waitFor('the marker file written', async () => (await fs.readFile(marker, 'utf8').catch(() => '')).trim() !== '', 60_000);
    first.child.kill('SIGKILL');
    assert.equal((await first.done).code, null);
    const gatePid = Number((await fs.readFile(marker, 'utf8')).trim());
    if (isAlive(gatePid)) process.kill(gatePid, 'SIGKILL');
    await fs.rm(markerDir, { recursive: true, force: true });
    assert.deepEqual(subjects().filter((s) => s === `ralph(${id}): iteration 1`).length, 1);
    const callsBefore = server.requests.length;

    await fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({ ...baseConfig(), gates: [{ name: 'ok', kind: 'custom', command: 'true' }] }),
    );
    const second = await cli(['run'], ws.dir);
    assert.equal(second.code, 0, second.stderr + second.stdout);
    assert.equal(server.requests.length, callsBefore, 'no model call for the iteration already run');
    assert.equal(subjects().filter((s) => s === `ralph(${id}): iteration 1`).length, 1, 'iteration 1 committed once');
    const [task] = await tasks();
    assert.equal(task.status, 'done');
    assert.equal(task.iterations, 1);
  });

  it('20 concurrent `ralph task add` processes, 5 tasks each: 100 tasks, unique ids, all exit 0', async () => {
    // 20 processes at once, each adding its 5 tasks one after another through the bundle's `main` (the whole
    // CLI but for its process's stdio): the race on tasks.json is between the processes; a Node start and a bundle
    // load per task would add nothing to it (≈ 0.2 CPU-s each)
    const adders = Array.from({ length: 20 }, async (_, p) => {
      const result = await collect(
        spawn(process.execPath, ['-e', ADDER, CLI, String(p)], { cwd: ws.dir, env: CLI_ENV, stdio: ['ignore', 'pipe', 'pipe'] }),
      );
      assert.equal(result.code, 0, result.stderr);
      const adds = result.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { code: number; out: string; err: string });
      assert.equal(adds.length, 5, result.stdout);
      for (const add of adds) assert.equal(add.code, 0, add.err);
      return adds.map((add) => add.out.trim());
    });
    const printed = (await Promise.all(adders)).flat();
    const stored = await tasks();
    assert.equal(stored.length, 100);
    assert.equal(new Set(stored.map((t) => t.id)).size, 100);
    assert.deepEqual([...printed].sort(), stored.map((t) => t.id).sort());
    assert.equal(ws.exists('.ralph/tasks.json.lock'), false);
  });

  it('a corrupt checkpoint resumes from the previous good one with a warning; with no good one it stops (exit 2)', async () => {
    const id = await addTask();
    server.push(write('draft'), { content: 'half <ralph>PROGRESS:50</ralph>' }, write('more'), {
      content: 'more <ralph>PROGRESS:60</ralph>',
    });
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ ...baseConfig(), loop: { maxIterations: 2, maxParallel: 1 } }));
    const stopped = await cli(['run'], ws.dir);
    assert.equal(stopped.code, 1, stopped.stdout);
    assert.equal((await tasks())[0].status, 'timeout');
    const state = `.ralph/state/${id}.json`;
    assert.equal(ws.exists(`${state}.bak`), true);
    await fs.writeFile(ws.path(state), '{"version":1, torn');
    const before = server.requests.length;
    const resumed = await cli(['run', '--task', id], ws.dir);
    assert.equal(resumed.code, 2, resumed.stdout + resumed.stderr);
    assert.match(resumed.stderr, /not-startable|is timeout|retry/);
    assert.equal(server.requests.length, before);

    // a halted task resumes through the checkpoint: the backup keeps its iteration count
    const file = (await tasks()).map((t) => ({ ...t, status: 'halted' as const }));
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify({ version: 1, tasks: file }));
    const again = await cli(['run', '--task', id], ws.dir);
    assert.match(again.stdout, /is unreadable .*resuming from the previous checkpoint/);
    assert.equal(again.code, 1, again.stdout);
    assert.equal(server.requests.length, before, 'max iterations already reached: no model call, no restart at iteration 1');

    await fs.writeFile(ws.path(state), 'garbage');
    await fs.writeFile(ws.path(`${state}.bak`), 'garbage');
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify({ version: 1, tasks: file }));
    const lost = await cli(['run', '--task', id], ws.dir);
    assert.equal(lost.code, 2, lost.stdout + lost.stderr);
    assert.match(lost.stderr, /unreadable .* no good backup.*rm \.ralph\/state\//);
    assert.equal(server.requests.length, before);
  });

  it('dependency cycles, self-dependencies and missing ids are named; exit 2', async () => {
    const now = new Date().toISOString();
    const t = (id: string, dependsOn: string[]) => ({
      id,
      title: id,
      prompt: 'p',
      promise: 'q',
      status: 'todo',
      dependsOn,
      createdAt: now,
      updatedAt: now,
    });
    const store = { version: 1, tasks: [t('A', ['B']), t('B', ['A']), t('S', ['S']), t('M', ['NOPE']), t('W', ['A'])] };
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify(store));
    const result = await cli(['run'], ws.dir);
    assert.equal(result.code, 2, result.stdout + result.stderr);
    assert.match(result.stdout, /dependency cycle A → B → A/);
    assert.match(result.stdout, /S depends on itself/);
    assert.match(result.stdout, /M depends on NOPE, which is not in \.ralph\/tasks\.json/);
    assert.match(result.stdout, /W waits on A, which can never start/);
    assert.equal(server.requests.length, 0);
    const one = await cli(['run', '--task', 'S'], ws.dir);
    assert.equal(one.code, 2);
    assert.match(one.stderr, /S cannot run: it can never start: S depends on itself/);
  });

  it('an unknown or misspelt config key is rejected with its path and the closest known key', async () => {
    await addTask();
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ ...baseConfig(), loop: { maxIteration: 2 }, colour: 'red' }));
    const result = await cli(['run'], ws.dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /loop\.maxIteration: unknown key; did you mean loop\.maxIterations\?/);
    assert.match(result.stderr, /colour: unknown key; known keys here: .*loop/);
    assert.equal(server.requests.length, 0);
  });

  it('tasks.json or config.json a directory, .ralph a file, duplicate ids: exit 2 with a clear message', async () => {
    await fs.rm(ws.path('.ralph/tasks.json'));
    await fs.mkdir(ws.path('.ralph/tasks.json'));
    let result = await cli(['task', 'list'], ws.dir);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /tasks\.json is a directory, but it must be a file/);
    await fs.rm(ws.path('.ralph/tasks.json'), { recursive: true });

    await fs.rm(ws.path('.ralph/config.json'));
    await fs.mkdir(ws.path('.ralph/config.json'));
    result = await cli(['run'], ws.dir);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /config\.json is a directory/);

    await fs.rm(ws.path('.ralph'), { recursive: true });
    await fs.writeFile(ws.path('.ralph'), 'not a dir');
    result = await cli(['task', 'add', 'x', '--prompt', 'p', '--promise', 'q'], ws.dir);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /is \.ralph a file\?/);
    assert.doesNotMatch(result.stderr, /ENOTDIR|EISDIR|EEXIST/);
    assert.equal(await ws.read('.ralph'), 'not a dir', 'nothing overwritten');

    await fs.rm(ws.path('.ralph'));
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const now = new Date().toISOString();
    const dup = { id: 'T-001', title: 't', prompt: 'p', promise: 'q', createdAt: now, updatedAt: now };
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify({ version: 1, tasks: [dup, dup] }));
    result = await cli(['task', 'list'], ws.dir);
    assert.equal(result.code, 2);
    assert.match(result.stderr, /tasks\.1\.id: duplicate task id "T-001"/);
  });

  it('a run.lock held by a live unrelated process names it; --force takes it over; a live node holder is never taken', async () => {
    const id = await addTask();
    const sleeper = spawn('sleep', ['300'], { stdio: 'ignore' });
    const node = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 300000)'], { stdio: 'ignore' });
    try {
      const lock = (pid: number) => JSON.stringify({ pid, host: os.hostname(), runId: 'r-old', startedAt: '2026-01-01T00:00:00.000Z' });
      await fs.writeFile(ws.path('.ralph/run.lock'), lock(sleeper.pid!));
      const refused = await cli(['run'], ws.dir);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, new RegExp(`pid ${sleeper.pid} on host .*run r-old, started 2026-01-01`));
      assert.match(refused.stderr, /not a Ralph process \(sleep 300\)/);
      assert.match(refused.stderr, /ralph run --force/);

      await fs.writeFile(ws.path('.ralph/run.lock'), lock(node.pid!));
      const live = await cli(['run', '--force'], ws.dir);
      assert.equal(live.code, 2);
      assert.match(live.stderr, /looks like a Ralph run.*--force does not take over a live run/);

      await fs.writeFile(ws.path('.ralph/run.lock'), JSON.stringify({ pid: 1, host: 'elsewhere', runId: 'r-x', startedAt: 'then' }));
      const other = await cli(['run'], ws.dir);
      assert.equal(other.code, 2);
      assert.match(other.stderr, /host elsewhere.*cannot be checked from here/);

      await fs.writeFile(ws.path('.ralph/run.lock'), lock(sleeper.pid!));
      server.push(write('hi'), complete);
      const forced = await cli(['run', '--force'], ws.dir);
      assert.equal(forced.code, 0, forced.stderr + forced.stdout);
      assert.match(forced.stdout, /took over \.ralph\/run\.lock/);
      assert.equal((await tasks()).find((t) => t.id === id)?.status, 'done');
      assert.equal(ws.exists('.ralph/run.lock'), false);
    } finally {
      sleeper.kill('SIGKILL');
      node.kill('SIGKILL');
    }
  });
});
