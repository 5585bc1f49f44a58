import assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as path from 'node:path';
import { GateRunCache, localizedOutput, portableOutput } from '../../../src/core/loop/run/gateRunCache';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import { NodeCommandRunner, PER_RUN_VARIABLES } from '../../../src/core/commands/processRunner';
import { IsolatedCommandRunner } from '../../../src/core/commands/sandbox';
import { SecretRedactor } from '../../../src/core/commands/secrets';
import { workingTreeKey } from '../../../src/core/git/treeKey';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../../src/core/gates/types';
import { makeTempWorkspace } from '../helpers/tempWorkspace';

/**
 * A gate runner that counts its runs; each run waits `ms`, prints the cwd, ends with `exitCode`
 * (or is stopped, or throws when `crash`); its environment is `env` (what a real runner says of
 * its process's environment).
 */
class CountingRunner implements GateRunner {
  runs = 0;
  env: string | undefined = 'env-1';
  crash = false;
  constructor(
    private readonly exitCode: number | null = 0,
    /** How long each run takes, or by the run's number (1 for the first). */
    private readonly ms: number | ((run: number) => number) = 30,
  ) {}
  environment(): Promise<string | undefined> {
    return Promise.resolve(this.env);
  }
  run(request: GateRunRequest): Promise<GateRunResult & { testLocations?: unknown }> {
    this.runs++;
    const ms = typeof this.ms === 'function' ? this.ms(this.runs) : this.ms;
    const crash = this.crash;
    return new Promise((resolve, reject) => {
      const done = (aborted: boolean) =>
        crash
          ? reject(new Error('the runner died'))
          : resolve({
              exitCode: aborted ? null : this.exitCode,
              timedOut: false,
              aborted,
              output: `ran in ${request.cwd}/suite.test.js\n`,
              durationMs: ms,
              // a field of the result besides its output, with paths in it (what a test probe adds)
              testLocations: [{ name: 'adds', file: `${request.cwd}/suite.test.js` }],
            });
      const timer = setTimeout(() => done(false), ms);
      request.signal?.addEventListener('abort', () => (clearTimeout(timer), done(true)), { once: true });
    });
  }
}

describe('GateRunCache: one result per tree, command and environment (real git)', () => {
  const gate = { name: 'suite', command: 'node --test', kind: 'tests', required: true } as GateRunRequest['gate'];
  let ws: Awaited<ReturnType<typeof makeTempWorkspace>>;
  let other: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n', '.gitignore': 'ignored/\n', 'lib/b.js': 'b\n' } });
    other = path.join(ws.dir, '..', `${path.basename(ws.dir)}-wt`);
    ws.git('worktree', 'add', '-q', '--detach', other);
  });
  afterEach(async () => {
    await fs.rm(other, { recursive: true, force: true });
    await ws.cleanup();
  });
  const request = (cwd: string, extra: Partial<GateRunRequest> = {}): GateRunRequest => ({ gate, cwd, timeoutMs: 60000, ...extra });
  const write = (root: string, rel: string, content: string) =>
    fs.mkdir(path.dirname(path.join(root, rel)), { recursive: true }).then(() => fs.writeFile(path.join(root, rel), content));

  it('the tree: the same content is one key, committed or not, wherever it is checked out; every change of content, mode or files is another', async () => {
    const start = await workingTreeKey(ws.dir);
    assert.ok(start);
    assert.equal(await workingTreeKey(other), start, 'two checkouts of one commit');
    await write(ws.dir, 'a.txt', 'changed\n');
    const changed = await workingTreeKey(ws.dir);
    assert.ok(changed && changed !== start, "a tracked file's uncommitted content");
    await write(other, 'a.txt', 'changed\n');
    assert.equal(await workingTreeKey(other), changed, 'the same uncommitted change in another checkout');
    await write(ws.dir, 'new.test.js', 'one\n');
    const added = await workingTreeKey(ws.dir);
    assert.ok(added && added !== changed, 'an untracked file added');
    await write(other, 'new.test.js', 'two\n');
    assert.notEqual(await workingTreeKey(other), added, "an untracked file's content, not only its name");
    await write(other, 'new.test.js', 'one\n');
    assert.equal(await workingTreeKey(other), added);
    await fs.chmod(path.join(other, 'new.test.js'), 0o755);
    assert.notEqual(await workingTreeKey(other), added, "an untracked file's mode");
    await fs.chmod(path.join(other, 'new.test.js'), 0o644);
    await fs.chmod(path.join(other, 'a.txt'), 0o755);
    assert.notEqual(await workingTreeKey(other), added, "a tracked file's mode");
    await fs.chmod(path.join(other, 'a.txt'), 0o644);
    assert.equal(await workingTreeKey(other), added);
    await fs.rm(path.join(other, 'lib', 'b.js'));
    assert.notEqual(await workingTreeKey(other), added, 'a file removed');
    await write(other, 'lib/b.js', 'b\n');
    // committed, the same content is the same key: the agent's run before its commit and the gate after it
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'next');
    assert.equal(await workingTreeKey(ws.dir), added, 'committed, the same tree');
    assert.equal(await workingTreeKey(other), added);
    assert.notEqual(await workingTreeKey(path.join(ws.dir, 'lib')), added, 'the folder the command starts in');
  });

  it("outside the tree: ignored files and the orchestrator's .ralph/ (documented: a suite that reads an ignored file is not re-run for it)", async () => {
    const start = await workingTreeKey(ws.dir);
    await write(ws.dir, 'ignored/fixture.json', '{"read": "by the suite"}\n');
    await write(ws.dir, '.ralph/progress/T-1.md', 'notes\n');
    assert.equal(await workingTreeKey(ws.dir), start);
    ws.git('add', '-f', '.ralph/progress/T-1.md');
    ws.git('commit', '-q', '-m', 'notes');
    await write(ws.dir, '.ralph/progress/T-1.md', 'more notes\n');
    assert.equal(await workingTreeKey(ws.dir), start, '.ralph/ tracked or not, changed or not');
  });

  it('the command, its kind and the environment are in the key; Ralph’s per-run variables are not', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner();
    const key = await cache.keyFor(inner, request(ws.dir));
    assert.ok(key);
    assert.equal(await cache.keyFor(inner, request(other)), key, 'another checkout of the tree, the same environment');
    assert.notEqual(await cache.keyFor(inner, request(ws.dir, { gate: { ...gate, command: 'node --test x' } })), key);
    assert.notEqual(await cache.keyFor(inner, request(ws.dir, { gate: { ...gate, kind: 'custom' } })), key);
    assert.equal(
      await cache.keyFor(inner, request(ws.dir, { gate: { ...gate, name: 'renamed', timeoutMs: 5 } })),
      key,
      'what does not decide the run',
    );
    inner.env = 'env-2';
    assert.notEqual(await cache.keyFor(inner, request(ws.dir)), key, 'another environment');
    inner.env = undefined;
    assert.equal(await cache.keyFor(inner, request(ws.dir)), undefined, 'a runner that cannot say its environment never shares');
    // a real runner: what the process would see, less the per-run variables
    const node = new NodeCommandRunner();
    const real = new ProcessGateRunner(node);
    const before = await cache.keyFor(real, request(ws.dir));
    process.env.RALPH_TEST_GATE_ENV = '1';
    try {
      assert.notEqual(await cache.keyFor(real, request(ws.dir)), before, "a variable of the orchestrator's environment");
    } finally {
      delete process.env.RALPH_TEST_GATE_ENV;
    }
    assert.equal(await cache.keyFor(real, request(ws.dir)), before);
    const run = (value: string) =>
      node.environmentOf({ command: 'x', cwd: ws.dir, timeoutMs: 1, maxOutputChars: 1, env: { [PER_RUN_VARIABLES[0]]: value } });
    assert.equal(await run('a'), await run('b'), 'a per-run variable is not the environment');
    const isolated = (env: string[]) =>
      new ProcessGateRunner(
        new IsolatedCommandRunner(
          node,
          { root: ws.dir, commands: { sandbox: 'off', network: true, env }, keyVariables: [] },
          new SecretRedactor(),
        ),
      );
    process.env.RALPH_TEST_GATE_TOKEN = 'a-value-passed-on-purpose';
    try {
      assert.notEqual(
        await cache.keyFor(isolated([]), request(ws.dir)),
        await cache.keyFor(isolated(['RALPH_TEST_GATE_TOKEN']), request(ws.dir)),
      );
    } finally {
      delete process.env.RALPH_TEST_GATE_TOKEN;
    }
  });

  it('never serves a result across a change of the tree, the command or the environment', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner();
    const runner = cache.around(inner);
    const ran = async (cwd: string, extra: Partial<GateRunRequest> = {}) => (await runner.run(request(cwd, extra))).reused !== true;
    assert.equal(await ran(ws.dir), true);
    assert.equal(await ran(other), false, 'the same tree elsewhere takes it');
    await write(other, 'new.test.js', 'x\n');
    assert.equal(await ran(other), true, 'an untracked file added');
    await write(other, 'new.test.js', 'y\n');
    assert.equal(await ran(other), true, "that file's content");
    await fs.chmod(path.join(other, 'new.test.js'), 0o755);
    assert.equal(await ran(other), true, "that file's mode");
    await write(other, 'a.txt', 'edited\n');
    assert.equal(await ran(other), true, "a tracked file's content");
    assert.equal(await ran(other, { gate: { ...gate, command: 'node --test --test-only' } }), true, 'another command');
    inner.env = 'env-2';
    assert.equal(await ran(other), true, 'another environment');
    assert.equal(inner.runs, 7);
    inner.env = 'env-1';
    assert.equal(await ran(other), false, 'back to a tree, command and environment already run');
  });

  it('one run for the callers that ask at once and those after it; the whole result (every field) reads in the asking tree', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner();
    const runner = cache.around(inner);
    const seen: string[] = [];
    const results = await Promise.all([ws.dir, other, other].map((cwd) => runner.run(request(cwd, { onOutput: (c) => seen.push(c) }))));
    assert.equal(inner.runs, 1);
    assert.equal(results.filter((r) => r.reused).length, 2);
    const mine = `${realpathSync(other)}/suite.test.js`;
    assert.equal(results[1].output, `ran in ${mine}\n`, 'read in the asking tree');
    assert.deepEqual(results[1].testLocations, [{ name: 'adds', file: mine }]);
    assert.equal(seen.length, 2, 'the taken output reaches the log of who took it');
    assert.equal((await runner.run(request(other))).reused, true);
    assert.equal(inner.runs, 1, 'a finished run is kept for the run');
    assert.notEqual(
      (await runner.run(request(other, { timeoutMs: 20 }))).reused,
      true,
      'a run longer than the time limit asked for is not taken',
    );
  });

  it('a failing run is taken only by who takes failures (reuse: any) and by the task it was made for; a re-run (reuse: none) always runs; reuse: false always runs', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner(1);
    const runner = cache.around(inner);
    assert.equal((await runner.run(request(ws.dir, { reuse: 'any' }))).exitCode, 1);
    assert.equal((await runner.run(request(other))).reused, undefined, 'a failure fed back to an agent is its own run');
    assert.equal(inner.runs, 2);
    assert.equal((await runner.run(request(other, { reuse: 'any' }))).reused, true);
    await runner.run(request(other, { reuse: 'none' }));
    assert.equal(inner.runs, 3);
    const own = { ...gate, reuse: false };
    await Promise.all([runner.run(request(ws.dir, { gate: own, reuse: 'any' })), runner.run(request(other, { gate: own, reuse: 'any' }))]);
    assert.equal(inner.runs, 5);
    // made for a task (its agent's own run of the gate's command): that task takes its failure again, no other does
    await write(ws.dir, 'b.txt', 'b\n');
    await runner.run(request(ws.dir, { taskId: 'T-1' }));
    assert.equal((await runner.run(request(ws.dir, { taskId: 'T-1' }))).reused, true, "the task's gate takes its agent's failing run");
    assert.equal((await runner.run(request(ws.dir, { taskId: 'T-2' }))).reused, undefined, 'another task runs its own');
    assert.equal(inner.runs, 7);
    // the tree's first run made for no task (the run at a base): a task's gate runs its own once, and takes that one after
    await write(ws.dir, 'c.txt', 'c\n');
    await runner.run(request(ws.dir, { reuse: 'any' }));
    assert.equal(
      (await runner.run(request(ws.dir, { taskId: 'T-3' }))).reused,
      undefined,
      "the base's failure is not fed back to an agent",
    );
    assert.equal(
      (await runner.run(request(ws.dir, { taskId: 'T-3' }))).reused,
      true,
      "its next iteration on the same tree takes the task's own run",
    );
    assert.equal((await runner.run(request(ws.dir, { taskId: 'T-4' }))).reused, undefined, 'another task runs its own');
    assert.equal((await runner.run(request(ws.dir, { reuse: 'any' }))).reused, true);
    assert.equal(inner.runs, 10);
  });

  it('a shared run stopped or crashed midway is kept by no one: each waiter runs its own; a waiter stopped while waiting gets a stopped result', async () => {
    const cache = new GateRunCache();
    // the owner's run lasts until it is stopped, whatever the machine's load; the waiters' own are short
    const inner = new CountingRunner(0, (run) => (run === 1 ? 120_000 : 80));
    const runner = cache.around(inner);
    const owner = new AbortController();
    const first = runner.run(request(ws.dir, { signal: owner.signal }));
    for (let i = 0; i < 400 && inner.runs === 0; i++) await new Promise((r) => setTimeout(r, 25)); // the run has started (its key read)
    assert.equal(inner.runs, 1);
    const waiter = runner.run(request(other));
    const leaving = new AbortController();
    const leaver = runner.run(request(other, { signal: leaving.signal }));
    await cache.keyFor(inner, request(other)); // as long as their own key reads, begun before: they wait on the run by now
    leaving.abort();
    owner.abort();
    assert.equal((await first).aborted, true);
    assert.equal((await leaver).aborted, true);
    const own = await waiter;
    assert.equal(own.exitCode, 0);
    assert.notEqual(own.reused, true, 'the waiter ran its own');
    assert.equal(inner.runs, 2);
    // a runner that dies midway: its caller sees the error, a waiter runs its own, nothing is kept
    // (it dies when the test says, not after a fixed time: on a loaded machine the waiter's key read can outlast any)
    const crashing = new CountingRunner(0, (run) => (run === 1 ? 120_000 : 30));
    crashing.crash = true;
    const cache2 = new GateRunCache();
    const runner2 = cache2.around(crashing);
    const kill = new AbortController();
    const dying = runner2.run(request(ws.dir, { signal: kill.signal }));
    for (let i = 0; i < 400 && crashing.runs === 0; i++) await new Promise((r) => setTimeout(r, 25));
    const waiting = runner2.run(request(other));
    await cache2.keyFor(crashing, request(other));
    crashing.crash = false;
    kill.abort(); // the first run dies now (it read `crash` when it began); the waiter's own does not
    await assert.rejects(dying, /the runner died/);
    assert.notEqual((await waiting).reused, true);
    assert.equal(crashing.runs, 2);
    assert.equal((await runner2.run(request(ws.dir))).reused, true, "the waiter's own run is kept");
  });

  it('marks each spelling of the root (as given, real path) and reads it back under the same spelling', async () => {
    const given = `${ws.dir}-link`;
    const otherGiven = `${other}-link`;
    await fs.symlink(ws.dir, given);
    await fs.symlink(other, otherGiven);
    try {
      const out = portableOutput(`at ${ws.dir}/a.txt and ${given}/b.txt`, given);
      assert.ok(!out.includes(ws.dir) && !out.includes(given), out);
      assert.equal(localizedOutput(out, otherGiven), `at ${realpathSync(other)}/a.txt and ${otherGiven}/b.txt`);
    } finally {
      await fs.rm(given, { force: true });
      await fs.rm(otherGiven, { force: true });
    }
  });

  it("sandboxed: each worktree's root in the sandbox is made portable, so two task worktrees share a key; the sandbox on or off, the network, are other keys", async () => {
    const worktree = (name: string) => path.join(ws.dir, '.ralph', 'worktrees', name);
    for (const name of ['T-1', 'T-2']) ws.git('worktree', 'add', '-q', '--detach', worktree(name));
    const gates = (sandbox: 'auto' | 'off', network = false) =>
      new ProcessGateRunner(
        new IsolatedCommandRunner(
          new NodeCommandRunner(),
          { root: ws.dir, commands: { sandbox, network, env: [] }, keyVariables: [] },
          new SecretRedactor(),
          () => {},
          () => Promise.resolve({ available: true, reason: 'bubblewrap' }),
        ),
      );
    const cache = new GateRunCache();
    const key = await cache.keyFor(gates('auto'), request(worktree('T-1')));
    assert.ok(key);
    const described = await gates('auto').environment(request(worktree('T-1')));
    assert.match(described ?? '', /"sandbox":\{"root":/, 'the sandbox is part of what the run sees');
    assert.equal(await cache.keyFor(gates('auto'), request(worktree('T-2'))), key);
    assert.notEqual(await cache.keyFor(gates('off'), request(worktree('T-2'))), key);
    assert.notEqual(await cache.keyFor(gates('auto', true), request(worktree('T-2'))), key);
  });

  it('sandboxed with installed dependencies: each worktree mounts a cache folder of its own over node_modules/.cache, and two worktrees of one tree still share a key', async () => {
    const worktree = (name: string) => path.join(ws.dir, '.ralph', 'worktrees', name);
    await write(ws.dir, 'node_modules/runner/index.js', 'module.exports = 1;\n');
    for (const name of ['T-1', 'T-2']) {
      ws.git('worktree', 'add', '-q', '--detach', worktree(name));
      await fs.symlink(path.join(ws.dir, 'node_modules'), path.join(worktree(name), 'node_modules'));
    }
    const gates = new ProcessGateRunner(
      new IsolatedCommandRunner(
        new NodeCommandRunner(),
        { root: ws.dir, commands: { sandbox: 'auto', network: false, env: [] }, keyVariables: [], links: ['node_modules'] },
        new SecretRedactor(),
        () => {},
        () => Promise.resolve({ available: true, reason: 'bubblewrap' }),
      ),
    );
    const described = await gates.environment(request(worktree('T-1')));
    assert.match(
      described ?? '',
      /"writableCaches":\[".*node_modules\/\.cache"\]/,
      'the cache is part of what the run sees, by where tools see it',
    );
    assert.doesNotMatch(described ?? '', /ralph-cache/, "the worktree's own folder behind it is not");
    const cache = new GateRunCache();
    const key = await cache.keyFor(gates, request(worktree('T-1')));
    assert.ok(key);
    assert.equal(await cache.keyFor(gates, request(worktree('T-2'))), key);
  });
});
