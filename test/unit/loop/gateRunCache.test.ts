import assert from 'node:assert/strict';
import { promises as fs, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GateRunCache, localizedOutput, portableOutput } from '../../../src/core/loop/gateRunCache';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../../src/core/gates/types';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { makeTempWorkspace } from '../helpers/tempWorkspace';
import { writeAgent } from '../helpers/writeAgent';

/**
 * A node:test suite that writes down every run of it (where it ran, which *.num files it saw)
 * in a file outside the repository, with one test that fails everywhere (pre-existing at the
 * base) and one that checks the tasks' files. Slow enough (≈ 0.6 s) for tasks to start together.
 */
function suite(log: string): string {
  return `const fs = require('fs'); const path = require('path'); const test = require('node:test'); const assert = require('assert');
const files = fs.readdirSync('.').filter((f) => f.endsWith('.num')).sort();
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ where: path.basename(process.cwd()), files }) + '\\n');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
test('legacy date parsing', () => assert.equal(new Date('2001-02-30').getDate(), 30));
test('num files hold digits', () => { for (const f of files) assert.match(fs.readFileSync(f, 'utf8'), /^\\d+$/); });
`;
}

const agent = writeAgent;

interface SuiteRun {
  where: string;
  files: string[];
}

describe("the run's gate runs by tree (real git, scripted model, 4 agents in worktrees)", function () {
  this.timeout(240000);
  let h: LoopHarness;
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-gateruns-'));
  });
  afterEach(async () => {
    await h?.cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function project(tasks: { n: number; dependsOn?: string[] }[]): Promise<{ ids: string[]; runs: () => Promise<SuiteRun[]> }> {
    const log = path.join(dir, 'runs.jsonl');
    h = await makeLoopHarness(Array.from({ length: 40 }, () => agent));
    // no sandbox: the suite writes its log outside the repository
    await h.configure({
      loop: { maxParallel: 4, maxIterations: 4 },
      commands: { sandbox: 'off' },
      gates: [{ name: 'suite', command: 'node --test --test-reporter=tap suite.test.js', kind: 'tests', required: true }],
    });
    await h.ws.write('suite.test.js', suite(log));
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a red legacy test');
    const ids: string[] = [];
    for (const t of tasks)
      ids.push(
        await h.addTask({
          title: `Write n${t.n}`,
          prompt: `WRITE n${t.n}.num <<${t.n}>>`,
          promise: `n${t.n}.num written`,
          ...(t.dependsOn ? { dependsOn: t.dependsOn } : {}),
        }),
      );
    // every run of the suite: the agents' (base, completion) and the merge queue's (in _merge worktrees)
    const runs = async () =>
      (await fs.readFile(log, 'utf8'))
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as SuiteRun);
    return { ids, runs };
  }

  /** Each tree the suite saw (its *.num files), with how many times it ran there. */
  function byTree(all: SuiteRun[]): Map<string, SuiteRun[]> {
    const trees = new Map<string, SuiteRun[]>();
    for (const r of all) trees.set(r.files.join(','), [...(trees.get(r.files.join(',')) ?? []), r]);
    return trees;
  }

  it('4 tasks on one base: the suite runs at the base once, every tree once in the whole run, and each task still has the red legacy test forgiven as pre-existing', async () => {
    const { ids, runs } = await project([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ids.map(() => 'done'),
      summary.results.map((r) => r.reason).join('; '),
    );
    const all = await runs();
    const atBase = all.filter((r) => r.files.length === 0);
    assert.equal(atBase.length, 1, `one run at the shared base, saw ${JSON.stringify(all)}`);
    assert.ok(
      ids.map((id) => `_base-${id}`).includes(atBase[0].where),
      `the base run happened in one task's scratch worktree at the base, beside its first iteration: ${atBase[0].where}`,
    );
    for (const [tree, seen] of byTree(all))
      assert.equal(seen.length, 1, `the tree [${tree}] ran ${seen.length} times: ${JSON.stringify(all)}`);
    // each task's baseline carries the base's verdict: the legacy failure is forgiven in every task's completion
    const baselines = eventsOf(h.events, 'integrity.baseline');
    assert.deepEqual(baselines.map((b) => b.taskId).sort(), [...ids].sort());
    for (const b of baselines) assert.equal(b.gates[0].tests?.named, 2);
    const finished = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId && ids.includes(e.taskId));
    for (const id of ids) {
      const own = finished.filter((e) => e.taskId === id && e.passed);
      assert.ok(own.length >= 1, `${id} passed its gate`);
      assert.deepEqual(own[0].preExisting, ['legacy date parsing'], `${id}: the legacy failure forgiven`);
    }
    // the first task onto the tip: its merged check is the tree its own gate passed on, taken from that run and said so
    const reused = finished.filter((e) => / \(taken from an earlier run on the same tree\)/.test(e.summary));
    assert.ok(reused.length >= 1, `a merged check took a task's own run: ${JSON.stringify(finished.map((e) => e.summary))}`);
    assert.ok(
      reused.every((e) => e.passed),
      'what was taken passed as it did the first time',
    );
  });

  it("a task that starts on a commit the queue landed takes the merged check's run as its base run", async () => {
    const first = await project([{ n: 1 }, { n: 2 }]);
    const dependent = await h.addTask({
      title: 'Write n3',
      prompt: 'WRITE n3.num <<3>>',
      promise: 'n3.num written',
      dependsOn: [first.ids[0]],
    });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done', 'done'],
      summary.results.map((r) => r.reason).join('; '),
    );
    const all = await first.runs();
    assert.equal(all.filter((r) => r.files.length === 0).length, 1, `the two first tasks shared their base's run: ${JSON.stringify(all)}`);
    assert.deepEqual(
      all.filter((r) => r.where.endsWith(dependent) && !r.files.includes('n3.num')),
      [],
      `no run at the dependent task's own base: ${JSON.stringify(all)}`,
    );
    for (const [tree, seen] of byTree(all))
      assert.equal(seen.length, 1, `the tree [${tree}] ran ${seen.length} times: ${JSON.stringify(all)}`);
    const baseline = eventsOf(h.events, 'integrity.baseline').find((b) => b.taskId === dependent);
    assert.equal(baseline?.gates[0].tests?.named, 2, "its baseline has the base's test inventory");
    const own = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId === dependent && e.passed);
    assert.deepEqual(own[0]?.preExisting, ['legacy date parsing']);
  });
});

/** A gate runner that counts its runs; each run waits `ms`, prints the cwd, ends with `exitCode` (or is stopped). */
class CountingRunner implements GateRunner {
  runs = 0;
  /** `ms`: how long each run takes, or by the run's number (1 for the first). */
  constructor(
    private readonly exitCode: number | null = 0,
    private readonly ms: number | ((run: number) => number) = 30,
  ) {}
  run(request: GateRunRequest): Promise<GateRunResult> {
    this.runs++;
    const ms = typeof this.ms === 'function' ? this.ms(this.runs) : this.ms;
    return new Promise((resolve) => {
      const done = (aborted: boolean) =>
        resolve({
          exitCode: aborted ? null : this.exitCode,
          timedOut: false,
          aborted,
          output: `ran in ${request.cwd}/suite.test.js\n`,
          durationMs: ms,
        });
      const timer = setTimeout(() => done(false), ms);
      request.signal?.addEventListener('abort', () => (clearTimeout(timer), done(true)), { once: true });
    });
  }
}

describe('GateRunCache (real git)', () => {
  const gate = { name: 'suite', command: 'node --test', kind: 'tests', required: true } as GateRunRequest['gate'];
  let ws: Awaited<ReturnType<typeof makeTempWorkspace>>;
  let other: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n' } });
    other = path.join(ws.dir, '..', `${path.basename(ws.dir)}-wt`);
    ws.git('worktree', 'add', '-q', '--detach', other);
  });
  afterEach(async () => {
    await fs.rm(other, { recursive: true, force: true });
    await ws.cleanup();
  });
  const request = (cwd: string, extra: Partial<GateRunRequest> = {}): GateRunRequest => ({ gate, cwd, timeoutMs: 60000, ...extra });

  it('keys: two worktrees at one clean tree share a key; a changed tracked file, an untracked file, another commit or another gate definition do not; .ralph/ does not count', async () => {
    const cache = new GateRunCache();
    const key = await cache.keyFor(request(ws.dir));
    assert.ok(key);
    assert.equal(await cache.keyFor(request(other)), key);
    assert.notEqual(await cache.keyFor(request(ws.dir, { gate: { ...gate, timeoutMs: 5000 } })), key, 'the whole definition is the key');
    await fs.mkdir(path.join(other, '.ralph'), { recursive: true });
    await fs.writeFile(path.join(other, '.ralph', 'notes.md'), "the orchestrator's\n");
    assert.equal(await cache.keyFor(request(other)), key, "the orchestrator's folder is not the tree");
    await fs.writeFile(path.join(other, 'a.txt'), 'changed\n');
    assert.equal(await cache.keyFor(request(other)), undefined, 'a tree with changes is never shared');
    await fs.writeFile(path.join(ws.dir, 'new.test.js'), 'untracked\n');
    const untracked = await cache.keyFor(request(ws.dir));
    assert.ok(untracked && untracked !== key, 'an untracked file the suite may read makes another key');
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'next');
    assert.notEqual(await cache.keyFor(request(ws.dir)), key, 'another commit, another key');
  });

  it('one run for the callers that ask at once and those after it; the output names the asking tree; a dirty tree always runs', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner();
    const runner = cache.around(inner);
    const seen: string[] = [];
    const results = await Promise.all([ws.dir, other, other].map((cwd) => runner.run(request(cwd, { onOutput: (c) => seen.push(c) }))));
    assert.equal(inner.runs, 1);
    assert.equal(results.filter((r) => r.reused).length, 2);
    assert.equal(results[1].output, `ran in ${realpathSync(other)}/suite.test.js\n`, 'read in the asking tree');
    assert.equal(seen.length, 2, 'the taken output reaches the log of who took it');
    assert.equal((await runner.run(request(other))).reused, true);
    assert.equal(inner.runs, 1, 'a finished run is kept for the run');
    await fs.writeFile(path.join(other, 'a.txt'), 'changed\n');
    assert.notEqual((await runner.run(request(other))).reused, true);
    assert.equal(inner.runs, 2);
  });

  it('a failing run is taken only by who takes failures (reuse: any); a re-run (reuse: none) always runs', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner(1);
    const runner = cache.around(inner);
    assert.equal((await runner.run(request(ws.dir, { reuse: 'any' }))).exitCode, 1);
    const again = await runner.run(request(other));
    assert.equal(again.reused, undefined, 'a failure fed back to an agent is its own run');
    assert.equal(inner.runs, 2);
    assert.equal((await runner.run(request(other, { reuse: 'any' }))).reused, true);
    await runner.run(request(other, { reuse: 'none' }));
    assert.equal(inner.runs, 3);
  });

  it('a gate with reuse: false always runs (its result depends on more than the tree)', async () => {
    const cache = new GateRunCache();
    const inner = new CountingRunner();
    const runner = cache.around(inner);
    const own = { ...gate, reuse: false };
    await Promise.all([runner.run(request(ws.dir, { gate: own })), runner.run(request(other, { gate: own, reuse: 'any' }))]);
    assert.equal((await runner.run(request(other, { gate: own }))).reused, undefined);
    assert.equal(inner.runs, 3);
  });

  it('a run its owner stopped is dropped: a waiter runs its own; a waiter stopped while waiting gets a stopped result', async () => {
    const cache = new GateRunCache();
    // the owner's run lasts until it is stopped, whatever the machine's load; the waiter's own is short
    const inner = new CountingRunner(0, (run) => (run === 1 ? 120_000 : 80));
    const runner = cache.around(inner);
    const owner = new AbortController();
    const first = runner.run(request(ws.dir, { signal: owner.signal }));
    for (let i = 0; i < 400 && inner.runs === 0; i++) await new Promise((r) => setTimeout(r, 25)); // the run has started (its key read)
    assert.equal(inner.runs, 1);
    const waiter = runner.run(request(other));
    const leaving = new AbortController();
    const leaver = runner.run(request(other, { signal: leaving.signal }));
    await cache.keyFor(request(other)); // as long as their own key reads, begun before: they wait on the run by now
    leaving.abort();
    owner.abort();
    assert.equal((await first).aborted, true);
    assert.equal((await leaver).aborted, true);
    const own = await waiter;
    assert.equal(own.exitCode, 0);
    assert.notEqual(own.reused, true, 'the waiter ran its own');
    assert.equal(inner.runs, 2);
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
});
