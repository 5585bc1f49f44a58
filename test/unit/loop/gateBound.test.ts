import assert from 'node:assert/strict';
import type { GateRunner, GateRunRequest, GateRunResult } from '../../../src/core/gates/types';
import { GateBound, gatePlaces, gateProcessLimit, runGateBound } from '../../../src/core/loop/run/gateBound';
import { machineIdleCores, treeCpuMs } from '../../../src/core/util/processCpu';
import { spawn } from 'node:child_process';
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
        request.onStart?.(1000 + started.length);
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
    assert.deepEqual(bound.counts, { peak: 2, waited: 2, quietAdmitted: 0 });
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

describe('GateBound past its limit while the running gates only wait (the default bound)', () => {
  /** Gates whose CPU the test sets (`busy` pids use a whole core from their first look on), on a machine whose idle cores it sets. */
  function machine(idle: number, everyMs: number) {
    const state = {
      idle,
      looks: 0,
      busy: new Set<number>(),
      cpu: new Map<number, { ms: number; at: number }>(),
      unknown: new Set<number>(),
    };
    return {
      state,
      watch: (ceiling: number) => ({
        ceiling,
        everyMs,
        treeCpuMs: async (pid: number) => {
          if (state.unknown.has(pid)) return undefined;
          const last = state.cpu.get(pid) ?? { ms: 0, at: Date.now() - everyMs };
          const now = Date.now();
          const ms = last.ms + (state.busy.has(pid) ? now - last.at : 0);
          state.cpu.set(pid, { ms, at: now });
          return ms;
        },
        idleCores: () => (state.looks++, state.idle),
      }),
    };
  }

  it('lets the first in line in, one a look, while every running gate was quiet and half a core idle, up to the ceiling', async () => {
    const held = heldRunner();
    const m = machine(1.6, 5);
    const bound = new GateBound(1, m.watch(3));
    const runner = bound.around(held.runner);
    const runs = ['a', 'b', 'c', 'd'].map((name) => runner.run(request(name)));
    await tick();
    assert.deepEqual(held.started, ['a'], 'the limit holds until the gates were looked at');
    await until(() => held.started.length === 3, 'two more came in');
    const looked = m.state.looks;
    await until(() => m.state.looks >= looked + 3, 'three more looks');
    assert.deepEqual(held.started, ['a', 'b', 'c'], 'never past the ceiling');
    assert.equal(bound.counts.quietAdmitted, 2);
    held.end('a');
    m.state.busy.add(1002);
    const busyFrom = m.state.looks;
    await until(() => m.state.looks >= busyFrom + 3, 'looks while one gate is busy');
    assert.deepEqual(
      held.started,
      ['a', 'b', 'c'],
      'a place freed above the limit is not handed on, and a busy gate keeps the line waiting',
    );
    m.state.busy.clear();
    await until(() => held.started.length === 4, 'the last came in once all were quiet');
    ['b', 'c', 'd'].forEach((name) => held.end(name));
    await Promise.all(runs);
    assert.equal(held.most(), 3);
    const looks = m.state.looks;
    await wait(30);
    assert.equal(m.state.looks, looks, 'no one waits: no more looks');
  });

  it('keeps the limit while a running gate is busy, its process is not told or cannot be read, or the machine is busy', async () => {
    for (const how of ['busy gate', 'unknown tree', 'busy machine'] as const) {
      const held = heldRunner();
      const m = machine(how === 'busy machine' ? 0.3 : 1.6, 5);
      if (how === 'busy gate') m.state.busy.add(1001);
      if (how === 'unknown tree') m.state.unknown.add(1001);
      const bound = new GateBound(1, m.watch(4));
      const runner = bound.around(held.runner);
      const runs = ['a', 'b'].map((name) => runner.run(request(name)));
      await until(() => m.state.looks >= 5, `${how}: it kept looking`);
      assert.deepEqual(held.started, ['a'], how);
      held.end('a');
      await until(() => held.started.length === 2, `${how}: the freed place goes to the next`);
      held.end('b');
      await Promise.all(runs);
    }
  });

  it('a run stopped while it waits leaves the line, and the looks stop with the line', async () => {
    const held = heldRunner();
    const m = machine(0, 5);
    const bound = new GateBound(1, m.watch(4));
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

  it('a configured loop.maxConcurrentGates holds exactly; the default watches, up to twice the CPU count', () => {
    const configured = runGateBound(2) as unknown as { limit: number; watch?: unknown };
    assert.equal(configured.limit, 2);
    assert.equal(configured.watch, undefined);
    const fallback = runGateBound(undefined) as unknown as { limit: number; watch?: { ceiling: number } };
    assert.equal(fallback.limit, gateProcessLimit(undefined));
    assert.equal(fallback.watch?.ceiling, gatePlaces(undefined));
    assert.equal(gatePlaces(undefined), Math.max(fallback.limit, 2 * availableParallelism()));
    assert.equal(gatePlaces(3), 3);
  });

  it("reads a process tree's CPU from /proc (a busy child counts, a sleeping one does not), none elsewhere, and the machine's idle cores", async () => {
    const look = machineIdleCores();
    if (process.platform !== 'linux') {
      assert.equal(await treeCpuMs(process.pid), undefined, 'only Linux tells: the limit holds elsewhere');
      return;
    }
    // each in a group of its own, so the whole tree (the shell and its child) ends with the test
    const sleeper = spawn('sh', ['-c', 'sleep 5'], { stdio: 'ignore', detached: true });
    const worker = spawn('sh', ['-c', `${JSON.stringify(process.execPath)} -e "setTimeout(() => {}, 5000); for(;;){}"; true`], {
      stdio: 'ignore',
      detached: true,
    });
    try {
      const [s0, w0] = [await treeCpuMs(sleeper.pid!), await treeCpuMs(worker.pid!)];
      let w1 = w0 ?? 0;
      await until(() => {
        void treeCpuMs(worker.pid!).then((v) => (w1 = v ?? w1));
        return w1 - (w0 ?? 0) >= 100;
      }, 'the busy tree used CPU');
      const s1 = await treeCpuMs(sleeper.pid!);
      assert.ok(s0 !== undefined && s1 !== undefined && s1 - s0 < 50, `the sleeping tree: ${s0} → ${s1} ms`);
    } finally {
      for (const child of [sleeper, worker]) process.kill(-child.pid!, 'SIGKILL');
    }
    assert.equal(await treeCpuMs(2 ** 22 + 12345), undefined, 'no such process');
    const idle = look();
    assert.ok(idle >= 0 && idle <= availableParallelism() + 0.01, `idle cores ${idle}`);
  });
});
