import assert from 'node:assert/strict';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../../src/core/gates/types';
import { GateBound, gateProcessLimit, machineIdleCores, runGateBound } from '../../../src/core/loop/run/gateBound';
import { availableParallelism } from 'node:os';

/** A gate runner whose runs end when the test says so; it records which ran at once. */
function heldRunner() {
  const ends = new Map<string, () => void>();
  const started: string[] = [];
  let running = 0;
  let most = 0;
  const runner: GateRunner = {
    run: (request: GateRunRequest) =>
      new Promise<GateRunResult>((resolve) => {
        started.push(request.gate.name);
        most = Math.max(most, ++running);
        ends.set(request.gate.name, () => {
          running--;
          resolve({ exitCode: 0, timedOut: false, aborted: false, output: request.gate.name, durationMs: 1 });
        });
      }),
  };
  return { runner, started, end: (name: string) => ends.get(name)!(), most: () => most };
}

const request = (name: string, signal?: AbortSignal): GateRunRequest => ({
  gate: { name, command: `run ${name}`, kind: 'custom', required: true } as GateRunRequest['gate'],
  cwd: '/tmp',
  timeoutMs: 1000,
  ...(signal ? { signal } : {}),
});
const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('GateBound: the run-wide bound on gate processes (loop.maxConcurrentGates)', () => {
  it('runs at most `limit` at once; the others wait in line, first come first served', async () => {
    const held = heldRunner();
    const bound = new GateBound(2);
    const runner = bound.around(held.runner);
    const runs = ['a', 'b', 'c', 'd'].map((name) => runner.run(request(name)));
    await tick();
    assert.deepEqual(held.started, ['a', 'b']);
    assert.equal(bound.waiting, 2);
    held.end('b');
    await tick();
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'the first in line takes the place');
    held.end('a');
    await tick();
    held.end('c');
    held.end('d');
    const outputs = (await Promise.all(runs)).map((r) => r.output);
    assert.deepEqual(outputs, ['a', 'b', 'c', 'd']);
    assert.equal(held.most(), 2);
    assert.deepEqual(bound.counts, { peak: 2, waited: 2, idleAdmitted: 0 });
  });

  it("tells the runner's environment as its own (the gate cache in front of it keys by it), and none when the runner tells none", async () => {
    const held = heldRunner();
    const described: GateRunner = { ...held.runner, environment: (r) => Promise.resolve(`env of ${r.gate.name}`) };
    const bound = new GateBound(1);
    assert.equal(await bound.around(described).environment?.(request('e')), 'env of e');
    assert.equal(bound.around(held.runner).environment, undefined);
  });

  it('shared by several runners (agents, base runs, merged checks): one bound for all', async () => {
    const one = heldRunner();
    const two = heldRunner();
    const bound = new GateBound(1);
    const first = bound.around(one.runner).run(request('x'));
    const second = bound.around(two.runner).run(request('y'));
    await tick();
    assert.deepEqual([one.started, two.started], [['x'], []]);
    one.end('x');
    await first;
    await tick();
    assert.deepEqual(two.started, ['y']);
    two.end('y');
    await second;
  });

  it('a run stopped while it waits leaves the line at once, runs nothing, and keeps no place', async () => {
    const held = heldRunner();
    const bound = new GateBound(1);
    const runner = bound.around(held.runner);
    const first = runner.run(request('a'));
    const stop = new AbortController();
    const stopped = runner.run(request('b', stop.signal));
    const third = runner.run(request('c'));
    await tick();
    stop.abort();
    const result = await stopped;
    assert.equal(result.aborted, true);
    assert.match(result.output, /stopped while waiting/);
    held.end('a');
    await first;
    await tick();
    assert.deepEqual(held.started, ['a', 'c'], 'the stopped run never ran; the next in line did');
    held.end('c');
    await third;
    const already = new AbortController();
    already.abort();
    assert.equal((await runner.run(request('d', already.signal))).aborted, true);
    assert.deepEqual(held.started, ['a', 'c']);
  });

  it('a run that throws gives its place back', async () => {
    const bound = new GateBound(1);
    const failing = bound.around({ run: () => Promise.reject(new Error('spawn failed')) });
    await assert.rejects(failing.run(request('a')), /spawn failed/);
    const held = heldRunner();
    const next = bound.around(held.runner).run(request('b'));
    await tick();
    assert.deepEqual(held.started, ['b']);
    held.end('b');
    await next;
  });

  it('defaults to the CPU count less one, at least 1; a configured value wins', () => {
    assert.equal(gateProcessLimit(undefined), Math.max(1, availableParallelism() - 1));
    assert.equal(gateProcessLimit(5), 5);
  });
});

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits until `done()` holds (looks come on timers: a loaded machine delays them, so no fixed sleep). */
async function until(done: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!done()) {
    if (Date.now() > deadline) assert.fail(`never: ${what}`);
    await wait(5);
  }
}

describe('GateBound past its limit while a core sits idle (the default bound)', () => {
  /** A machine whose idle cores the test sets; every look is counted. */
  function machine(idle: number) {
    const state = { idle, looks: 0 };
    return { state, idleCores: () => (state.looks++, state.idle) };
  }

  it('lets the first in line in, one a look, while half a core or more was idle, up to the ceiling', async () => {
    const held = heldRunner();
    const m = machine(1.6);
    const bound = new GateBound(1, { ceiling: 3, everyMs: 5, idleCores: m.idleCores });
    const runner = bound.around(held.runner);
    const runs = ['a', 'b', 'c', 'd'].map((name) => runner.run(request(name)));
    await tick();
    assert.deepEqual(held.started, ['a'], 'the limit holds until the machine was looked at');
    await until(() => held.started.length === 3, 'two more came in');
    const looked = m.state.looks;
    await until(() => m.state.looks >= looked + 3, 'three more looks');
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'never past the ceiling');
    assert.equal(bound.waiting, 1);
    assert.equal(bound.counts.idleAdmitted, 2);
    m.state.idle = 0;
    held.end('a');
    const busyFrom = m.state.looks;
    await until(() => m.state.looks >= busyFrom + 3, 'looks at a busy machine');
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'a place freed above the limit is not handed on: the idle look decides');
    m.state.idle = 1.6;
    await until(() => held.started.length === 4, 'the last came in on a look');
    ['b', 'c', 'd'].forEach((name) => held.end(name));
    await Promise.all(runs);
    assert.equal(held.most(), 3);
    const looks = m.state.looks;
    await wait(30);
    assert.equal(m.state.looks, looks, 'no one waits: no more looks');
  });

  it('keeps the limit while the machine is busy (less than half a core idle)', async () => {
    const held = heldRunner();
    const m = machine(0.3);
    const bound = new GateBound(1, { ceiling: 4, everyMs: 5, idleCores: m.idleCores });
    const runner = bound.around(held.runner);
    const runs = ['a', 'b'].map((name) => runner.run(request(name)));
    await until(() => m.state.looks >= 4, 'it kept looking');
    assert.deepEqual(held.started, ['a']);
    m.state.idle = 1.2;
    await until(() => held.started.length === 2, 'a core went idle: the next came in');
    held.end('a');
    held.end('b');
    await Promise.all(runs);
  });

  it('a run stopped while it waits leaves the line, and the looks stop with the line', async () => {
    const held = heldRunner();
    const m = machine(0);
    const bound = new GateBound(1, { ceiling: 4, everyMs: 5, idleCores: m.idleCores });
    const runner = bound.around(held.runner);
    const first = runner.run(request('a'));
    const stop = new AbortController();
    const second = runner.run(request('b', stop.signal));
    await until(() => m.state.looks >= 2, 'it looked');
    stop.abort();
    assert.equal((await second).aborted, true);
    await wait(20);
    const looks = m.state.looks;
    await wait(30);
    assert.equal(m.state.looks, looks);
    held.end('a');
    await first;
  });

  it('a configured loop.maxConcurrentGates holds exactly; the default looks at the machine', () => {
    const configured = runGateBound(2) as unknown as { limit: number; idle?: unknown };
    assert.equal(configured.limit, 2);
    assert.equal(configured.idle, undefined);
    const fallback = runGateBound(undefined) as unknown as { limit: number; idle?: { ceiling: number } };
    assert.equal(fallback.limit, gateProcessLimit(undefined));
    assert.equal(fallback.idle?.ceiling, Math.max(fallback.limit, 2 * availableParallelism()));
  });

  it("reads the machine's idle cores from the OS: between 0 and the core count", async () => {
    const look = machineIdleCores();
    await wait(50);
    const idle = look();
    assert.ok(idle >= 0 && idle <= availableParallelism() + 0.01, `idle cores ${idle}`);
  });
});
