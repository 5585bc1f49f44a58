import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { GateRunCache } from '../../../src/core/loop/run/gateRunCache';
import { GATE_RUNS_DIR_ENV, GateRunsDir, gateRunsDirFrom } from '../../../src/core/loop/run/sharedGateRuns';
import { ProcessGateRunner, runGates } from '../../../src/core/gates/runGates';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import type { GateRunRequest } from '../../../src/core/gates/types';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** The suite: notes each run of it in the marker file outside the trees, prints where it ran, ends with exit.txt's code. */
const CHECK = `const fs = require('fs');
fs.appendFileSync(process.argv[2], process.cwd() + '\\n');
console.log('checked in ' + process.cwd());
process.exit(Number(fs.readFileSync('exit.txt', 'utf8')));
`;
const LOCK = (version: string) => JSON.stringify({ lockfileVersion: 3, packages: { 'node_modules/left-pad': { version } } });

describe('gate runs shared between runs (RALPH_GATE_RUNS_DIR, real git and real processes)', () => {
  let store: string;
  let marker: string;
  let workspaces: TempWorkspace[];
  const runner = new ProcessGateRunner(new NodeCommandRunner());

  /** A workspace as `npm install` leaves it: the suite committed, node_modules ignored with npm's hidden lockfile. */
  async function workspace(exit = 0, lock = LOCK('1.3.0')): Promise<TempWorkspace> {
    const ws = await makeTempWorkspace({
      commit: true,
      files: { 'check.js': CHECK, 'exit.txt': `${exit}\n`, '.gitignore': 'node_modules/\nvenv/\n' },
    });
    await ws.write('node_modules/.package-lock.json', lock);
    await ws.write('node_modules/left-pad/index.js', 'module.exports = 1;\n');
    workspaces.push(ws);
    return ws;
  }
  /** One `ralph run` in `ws`: its own cache, over the shared folder. */
  const run = (ws: TempWorkspace) => new GateRunCache(new GateRunsDir(store, ws.dir)).around(runner);
  const gate = (): GateRunRequest['gate'] => ({ name: 'tests', command: `node check.js ${marker}`, kind: 'tests', required: true });
  const request = (ws: TempWorkspace, extra: Partial<GateRunRequest> = {}): GateRunRequest => ({
    gate: gate(),
    cwd: ws.dir,
    timeoutMs: 60_000,
    ...extra,
  });
  const runs = async () => (await fs.readFile(marker, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  const entries = async () => (await fs.readdir(store).catch(() => [] as string[])).sort();

  beforeEach(async () => {
    workspaces = [];
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-sharedruns-'));
    store = path.join(dir, 'gate-runs');
    marker = path.join(dir, 'runs.log');
  });
  afterEach(async () => {
    for (const ws of workspaces) await ws.cleanup();
    await fs.rm(path.dirname(store), { recursive: true, force: true });
  });

  it('two runs of two workspaces with the same tree: the second takes the base run, read in its own tree, and says it came from another run', async () => {
    const [a, b, c] = [await workspace(), await workspace(), await workspace()];
    const first = await run(a).run(request(a, { reuse: 'any' }));
    assert.equal(first.exitCode, 0);
    assert.equal(first.reused, undefined);
    assert.deepEqual(await runs(), [a.dir]);
    const [entry] = await entries();
    assert.match(entry, /^[0-9a-f]{64}\.json$/);
    assert.equal((await fs.readFile(path.join(store, entry), 'utf8')).includes(a.dir), false, 'an entry names no folder');

    const second = await run(b).run(request(b, { reuse: 'any' }));
    assert.deepEqual(await runs(), [a.dir], 'the second run did not run the command');
    assert.equal(second.exitCode, 0);
    assert.equal(second.reused, true);
    assert.equal(second.otherRun, true);
    assert.equal(second.output.trim(), `checked in ${b.dir}`, "the output names the second run's own tree");

    // a task's gate (a passing request) of a third run takes the pass too, within its time limit
    const third = await run(c).run(request(c, { taskId: 'T-001' }));
    assert.equal(third.otherRun, true);
    assert.deepEqual(await runs(), [a.dir]);
    const tooShort = await run(c).run(request(c, { taskId: 'T-001', timeoutMs: first.durationMs }));
    assert.equal(tooShort.reused, undefined, "a result that took the request's whole time limit is not taken");
  });

  it("the gate's outcome says its run was taken from another ralph run", async () => {
    const [a, b] = [await workspace(), await workspace()];
    const first = await runGates({ gates: [gate()], runner: run(a), cwd: a.dir, reuse: 'any' });
    assert.doesNotMatch(first.outcomes[0].summary, /taken from/);
    const second = await runGates({ gates: [gate()], runner: run(b), cwd: b.dir, reuse: 'any' });
    assert.equal(second.outcomes[0].passed, true);
    assert.match(
      second.outcomes[0].summary,
      /\(taken from an earlier run on the same tree, made by another ralph run \(RALPH_GATE_RUNS_DIR\)\)$/,
    );
    assert.equal((await runs()).length, 1);
  });

  it('other installed dependencies, an ignored dependency folder that cannot be described: not shared', async () => {
    const a = await workspace();
    await run(a).run(request(a, { reuse: 'any' }));
    const b = await workspace(0, LOCK('1.3.1'));
    const other = await run(b).run(request(b, { reuse: 'any' }));
    assert.equal(other.reused, undefined, "another version in npm's hidden lockfile");
    assert.equal((await runs()).length, 2);
    assert.equal((await entries()).length, 2);

    // node_modules without any package manager's state: never shared across runs, nothing written
    const c = await workspace();
    await fs.rm(c.path('node_modules', '.package-lock.json'));
    const cache = new GateRunCache(new GateRunsDir(store, c.dir));
    assert.equal((await cache.around(runner).run(request(c, { reuse: 'any' }))).reused, undefined);
    assert.equal((await runs()).length, 3);
    assert.equal((await entries()).length, 2);
    // …but the run's own cache still shares it within the run
    assert.equal((await cache.around(runner).run(request(c, { reuse: 'any' }))).reused, true);
    assert.equal((await runs()).length, 3);

    // an ignored virtualenv beside the same tree as the first
    const d = await workspace();
    await d.write('venv/lib/site.py', 'x = 1\n');
    assert.equal((await run(d).run(request(d, { reuse: 'any' }))).reused, undefined);
    assert.equal((await runs()).length, 4);
    assert.equal((await entries()).length, 2);

    // pnpm's state file describes its node_modules as npm's hidden lockfile does
    const pnpm = async () => {
      const ws = await workspace();
      await fs.rm(ws.path('node_modules', '.package-lock.json'));
      await ws.write('node_modules/.modules.yaml', 'layoutVersion: 5\npackageManager: pnpm@9.0.0\n');
      return ws;
    };
    const [e, f] = [await pnpm(), await pnpm()];
    assert.equal((await run(e).run(request(e, { reuse: 'any' }))).reused, undefined);
    assert.equal((await run(f).run(request(f, { reuse: 'any' }))).otherRun, true);
    assert.equal((await runs()).length, 5);
  });

  it("a failing result: kept from a base or tip run, taken across runs only by a reuse: 'any' request; a task's own failure stays in its run", async () => {
    const [a, b, c] = [await workspace(1), await workspace(1), await workspace(1)];
    const atBase = await run(a).run(request(a, { reuse: 'any' }));
    assert.equal(atBase.exitCode, 1);
    assert.equal((await entries()).length, 1);
    const taskGate = await run(b).run(request(b, { taskId: 'T-001' }));
    assert.equal(taskGate.reused, undefined, "a task's gate does not take another run's failure");
    assert.equal(taskGate.exitCode, 1);
    assert.equal((await runs()).length, 2);
    const base = await run(c).run(request(c, { reuse: 'any' }));
    assert.equal(base.reused, true);
    assert.equal(base.otherRun, true);
    assert.equal(base.exitCode, 1);
    assert.equal((await runs()).length, 2);

    // a failure made for a task is not kept for other runs
    await fs.rm(store, { recursive: true });
    const d = await workspace(1);
    assert.equal((await run(d).run(request(d, { taskId: 'T-001' }))).exitCode, 1);
    assert.deepEqual(await entries(), []);
  });

  it('never shared: reuse none (a re-run), a gate with reuse: false, a gate with a report', async () => {
    const a = await workspace();
    await run(a).run(request(a, { reuse: 'none' }));
    await run(a).run(request(a, { gate: { ...gate(), reuse: false } }));
    await run(a).run(request(a, { gate: { ...gate(), report: { junit: 'reports/junit.xml' } } as GateRunRequest['gate'] }));
    assert.deepEqual(await entries(), []);
    assert.equal((await runs()).length, 3);
  });

  it('a corrupt or foreign entry is ignored (the gate runs, and its result is written whole); writes of one key at once leave one whole entry', async () => {
    const [a, b, c] = [await workspace(), await workspace(), await workspace()];
    await run(a).run(request(a, { reuse: 'any' }));
    const [entry] = await entries();
    for (const bad of ['{"format": 1, "key": "', JSON.stringify({ format: 1, key: 'another', result: { exitCode: 0 } }), '']) {
      await fs.writeFile(path.join(store, entry), bad);
      const again = await run(b).run(request(b, { reuse: 'any' }));
      assert.equal(again.reused, undefined, `an entry of ${JSON.stringify(bad.slice(0, 30))} is not read`);
      assert.equal(again.exitCode, 0);
    }
    assert.equal((await runs()).length, 4);
    assert.equal((await run(c).run(request(c, { reuse: 'any' }))).otherRun, true, 'the entry written again is whole');

    const dir = new GateRunsDir(store, c.dir);
    const result = { exitCode: 0, timedOut: false, aborted: false, output: 'x'.repeat(200_000), durationMs: 5 };
    await Promise.all(Array.from({ length: 8 }, (_, i) => dir.write('k'.repeat(64), { ...result, durationMs: i })));
    assert.equal((await dir.read('k'.repeat(64)))?.output.length, 200_000);
    assert.deepEqual(
      (await entries()).filter((f) => !f.endsWith('.json')),
      [],
      'no temporary file is left',
    );
    // a folder that cannot be made: nothing written, never fatal
    const blocked = new GateRunsDir(path.join(marker, 'below-a-file'), c.dir);
    await blocked.write('k'.repeat(64), result);
    assert.equal(await blocked.read('k'.repeat(64)), undefined);
  });

  it(`${GATE_RUNS_DIR_ENV} unset or empty: no store, nothing written`, async () => {
    assert.equal(gateRunsDirFrom({}, '/w'), undefined);
    assert.equal(gateRunsDirFrom({ [GATE_RUNS_DIR_ENV]: ' ' }, '/w'), undefined);
    assert.ok(gateRunsDirFrom({ [GATE_RUNS_DIR_ENV]: store }, '/w') instanceof GateRunsDir);
    const [a, b] = [await workspace(), await workspace()];
    await new GateRunCache(gateRunsDirFrom({}, a.dir)).around(runner).run(request(a, { reuse: 'any' }));
    await new GateRunCache(gateRunsDirFrom({}, b.dir)).around(runner).run(request(b, { reuse: 'any' }));
    assert.equal((await runs()).length, 2);
    assert.deepEqual(await entries(), []);
  });
});
