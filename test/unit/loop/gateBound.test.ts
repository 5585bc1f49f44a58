import assert from 'node:assert/strict';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../../src/core/gates/types';
import { GateBound, gateProcessLimit, runGateBound } from '../../../src/core/loop/run/gateBound';
import { idleCoresSampler } from '../../../src/core/util/idleCores';
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
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean, what = 'the condition never held'): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await sleep(5);
  assert.ok(condition(), what);
}

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
    assert.deepEqual(bound.counts, { peak: 2, waited: 2, spare: 0 });
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

  it('the default bound lets one more in beyond its limit each look that finds CPU to spare, up to `most`; none while the cores are busy', async () => {
    const held = heldRunner();
    let idle = 0;
    const looks: number[] = [];
    const bound = new GateBound(1, {
      most: 3,
      everyMs: 5,
      needIdle: 0.5,
      idleCores: () => (looks.push(idle), idle),
    });
    const runner = bound.around(held.runner);
    const runs = ['a', 'b', 'c', 'd'].map((name) => runner.run(request(name)));
    // Waits for the looks themselves, not a fixed time: a loaded CI machine can delay 5 ms timers past 40 ms.
    await until(() => looks.length >= 3, 'the line looked while it waited');
    assert.deepEqual(held.started, ['a'], 'busy cores: the limit holds');
    idle = 1.5;
    await until(() => held.started.length === 3);
    await sleep(40);
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'first come first served, and never beyond `most`');
    assert.equal(bound.counts.spare, 2);
    idle = 0;
    held.end('b');
    await sleep(30);
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'a place beyond the limit that ends frees none within it');
    held.end('a');
    await tick();
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'c still holds the one place within the limit');
    held.end('c');
    await tick();
    assert.deepEqual(held.started, ['a', 'b', 'c', 'd'], 'a place within the limit goes to the next at once');
    held.end('d');
    await Promise.all(runs);
    const lookedAt = looks.length;
    await sleep(30);
    assert.equal(looks.length, lookedAt, 'no line, no looking');
  });

  it('a configured maxConcurrentGates is exact (no spare room); the default has it; the sampler reads the OS', async () => {
    const held = heldRunner();
    const exact = runGateBound(1).around(held.runner);
    const runs = ['a', 'b'].map((name) => exact.run(request(name)));
    await sleep(400);
    assert.deepEqual(held.started, ['a'], 'an idle machine lets no one past a configured bound');
    held.end('a');
    await until(() => held.started.length === 2);
    held.end('b');
    await Promise.all(runs);
    assert.equal(runGateBound(undefined).limit, gateProcessLimit(undefined));
    const idle = idleCoresSampler();
    await sleep(20);
    const cores = idle();
    assert.ok(cores >= 0 && cores <= availableParallelism() * 4, `idle cores ${cores}`);
  });
});
