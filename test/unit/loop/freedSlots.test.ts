import assert from 'node:assert/strict';
import type { RalphEvent } from '../../../src/core/events';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { waitFor } from '../../helpers/waitFor';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { firstCallOf, GATE_JS, gateConfig, gatesFast, ownGates, readStamps, slotAgent } from '../helpers/slowGate';

/** The most tasks that talked to the model at once, replayed from the run's events. */
function mostTalking(events: readonly RalphEvent[]): number {
  const talking = new Set<string>();
  let most = 0;
  for (const e of events) {
    if (e.type === 'task.started' || e.type === 'iteration.started') talking.add(e.taskId);
    else if (e.type === 'agent.slot') {
      if (e.state === 'model') talking.add(e.taskId);
      else talking.delete(e.taskId);
    } else if (e.type === 'task.finished' || (e.type === 'merge' && !e.provisional)) talking.delete(e.taskId);
    most = Math.max(most, talking.size);
  }
  return most;
}

/**
 * Issue 34, no agent idle on gates: a slot is a model conversation. Real git, worktrees, the
 * scripted model through the real `openai` client, and a gate that records when it ran.
 */
describe('parallel run: the agent slot goes to the next task while the gates run (real git, scripted model)', function () {
  this.timeout(90_000);
  let h: LoopHarness;
  let stamps: string;
  afterEach(async () => {
    if (stamps) await gatesFast(stamps).catch(() => undefined);
    await h?.cleanup();
  });

  async function setUp(loop: Record<string, number>, gateMs: number, hold?: (file: string) => Promise<void> | undefined) {
    h = await makeLoopHarness(Array.from({ length: 40 }, () => slotAgent(hold)));
    stamps = await h.ws.outsideDir();
    // a held model turn lasts as long as the test holds it: no request timeout cuts it short
    await h.configure({
      loop: { maxIterations: 4, ...loop },
      gates: gateConfig(stamps, gateMs),
      commands: { sandbox: 'off' },
      llm: { requestTimeoutMs: 600_000 },
    });
    await h.ws.write('gate.js', GATE_JS);
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a gate');
    if (process.env.RALPH_DEBUG_EVENTS) h.bus.subscribe((e) => console.log(JSON.stringify(e).slice(0, 200)));
  }

  const addTask = (id: string, file: string, content: string) =>
    h.addTask({ id, title: `Write ${file}`, prompt: `WRITE ${file} <<${content}>>`, promise: `${file} holds the content` });
  const slotEvents = (id: string) => eventsOf(h.events, 'agent.slot').filter((e) => e.taskId === id);

  it('2 slots, slow gates: the third task talks to the model while the first two tasks’ gates run; never more than 2 talk', async () => {
    // the tasks' own gates run until the third task's first model call (not for a fixed time a loaded machine can outlast)
    await setUp({ maxParallel: 2, maxConcurrentGates: 2 }, 60_000, (file) => (file === 'c.num' ? gatesFast(stamps) : undefined));
    await addTask('T-001', 'a.num', '2');
    await addTask('T-002', 'b.num', '3');
    await addTask('T-003', 'c.num', '1');
    const summary = await h.runner().run();

    assert.deepEqual(summary.results.map((r) => [r.taskId, r.status]).sort(), [
      ['T-001', 'done'],
      ['T-002', 'done'],
      ['T-003', 'done'],
    ]);
    const runs = await readStamps(stamps);
    const [first, second] = [ownGates(runs, 'T-001')[0], ownGates(runs, 'T-002')[0]];
    assert.ok(first?.end && second?.end, 'each of the first two tasks ran its gates in its worktree');
    const third = firstCallOf(h.server.requests, 'c.num');
    assert.ok(third !== undefined, 'the third task talked to the model');
    assert.ok(
      third < first.end && third < second.end,
      `the third task's first model call (${third}) came before the first two tasks' gates ended (${first.end}, ${second.end})`,
    );
    const given = h.events.findIndex((e) => e.type === 'agent.slot' && e.state === 'gates');
    const thirdStarted = h.events.findIndex((e) => e.type === 'task.started' && e.taskId === 'T-003');
    assert.ok(given >= 0 && thirdStarted > given, 'in the slot a task on its gates gave away');
    assert.equal(mostTalking(h.events), 2, 'loop.maxParallel still bounds the model conversations');
    for (const id of ['T-001', 'T-002']) assert.equal(slotEvents(id)[0]?.state, 'gates', `${id} gave its slot away as its gates started`);
  });

  it('a task sent back by its gates gets the next free slot before a new task starts', async () => {
    let sendBack!: () => void;
    let oneGone!: () => void;
    const sentBack = new Promise<void>((resolve) => (sendBack = resolve));
    const slotTaken = new Promise<void>((resolve) => (oneGone = resolve));
    // T-002 and T-003 talk long: both slots are busy when T-001's gates send it back; then T-002's
    // slot alone comes free (T-003 talks on until that slot went to T-001 or to T-004, a new task)
    const holds: Record<string, Promise<void>> = { 'b.num': sentBack, 'c.num': slotTaken };
    // T-001's gates (red) run until T-003 has started in the slot they gave away
    await setUp({ maxParallel: 2, maxConcurrentGates: 2 }, 60_000, (file) => holds[file]);
    h.bus.subscribe((e) => {
      if (e.type === 'task.started' && e.taskId === 'T-003') void gatesFast(stamps);
      if (e.type === 'agent.slot' && e.taskId === 'T-001' && e.state === 'waiting') sendBack();
      if ((e.type === 'agent.slot' && e.taskId === 'T-001' && e.state === 'model') || (e.type === 'task.started' && e.taskId === 'T-004'))
        oneGone();
    });
    await addTask('T-001', 'a.num', '11'); // red in its worktree: its gates send it back
    await addTask('T-002', 'b.num', '2');
    await addTask('T-003', 'c.num', '3');
    await addTask('T-004', 'd.num', '1');
    const summary = await h.runner().run();

    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done', 'done', 'done'],
    );
    assert.deepEqual(
      slotEvents('T-001').map((e) => e.state),
      ['gates', 'waiting', 'model', 'gates'],
      'T-001 gave its slot away, waited for one when its gates sent it back, got it, and gave it away at its next gates',
    );
    const at = (match: (e: RalphEvent) => boolean) => h.events.findIndex(match);
    const waiting = at((e) => e.type === 'agent.slot' && e.taskId === 'T-001' && e.state === 'waiting');
    const back = at((e) => e.type === 'iteration.started' && e.taskId === 'T-001' && e.iteration === 2);
    const fourth = at((e) => e.type === 'task.started' && e.taskId === 'T-004');
    const thirdStarted = at((e) => e.type === 'task.started' && e.taskId === 'T-003');
    assert.ok(thirdStarted < waiting, 'T-003 took the slot T-001 gave away');
    assert.ok(waiting >= 0 && back > waiting && fourth > back, 'T-001 went on before T-004, a new task, started');
    assert.equal(await h.ws.read('a.num'), '1', 'the mended work landed');
    assert.equal(mostTalking(h.events), 2);
  });

  it('loop.maxConcurrentGates 1: never two gate processes at once, whatever the agents do', async () => {
    await setUp({ maxParallel: 3, maxConcurrentGates: 1 }, 500);
    await addTask('T-001', 'a.num', '2');
    await addTask('T-002', 'b.num', '3');
    await addTask('T-003', 'c.num', '1');
    const summary = await h.runner().run();

    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done', 'done'],
    );
    const runs = await readStamps(stamps);
    assert.ok(ownGates(runs).length >= 3, 'every task ran its gates');
    assert.ok(runs.length > ownGates(runs).length, 'and the base runs and merged checks are in the record too');
    for (const run of runs) assert.ok(run.end !== undefined, `the gate run in ${run.where} ended`);
    for (const [i, a] of runs.entries())
      for (const b of runs.slice(i + 1))
        assert.ok(b.start >= a.end!, `gate runs in ${a.where} (${a.start}–${a.end}) and ${b.where} (${b.start}–${b.end}) overlapped`);
  });

  it('Stop while the gates run without a slot: every task halts with its state, the gate process ends, the next run finishes them', async () => {
    let release!: () => void;
    const never = new Promise<void>((resolve) => (release = resolve));
    // T-002's and T-003's first model turns last until the stop; T-001's gates are red and last until the stop too
    await setUp({ maxParallel: 2, maxConcurrentGates: 2, windDownSeconds: 0 }, 60_000, (file) =>
      file === 'b.num' || file === 'c.num' ? never : undefined,
    );
    await addTask('T-001', 'a.num', '11');
    await addTask('T-002', 'b.num', '2');
    await addTask('T-003', 'c.num', '3');
    const runner = h.runner();
    const run = runner.run();
    // T-001 on its gates without its slot, T-003 talking in it
    await waitFor('T-001 on its gates', async () => ownGates(await readStamps(stamps), 'T-001').length > 0);
    await waitFor("T-003's first model call", () => firstCallOf(h.server.requests, 'c.num'));
    assert.equal(slotEvents('T-001').at(-1)?.state, 'gates');
    runner.stop();
    const summary = await run;
    release();

    assert.deepEqual(summary.results.map((r) => [r.taskId, r.status]).sort(), [
      ['T-001', 'halted'],
      ['T-002', 'halted'],
      ['T-003', 'halted'],
    ]);
    const gate = ownGates(await readStamps(stamps), 'T-001')[0];
    assert.equal(gate.end, undefined, 'the gate process was stopped, not waited for');
    for (const id of ['T-001', 'T-002', 'T-003'])
      assert.match((await h.store.get(id)).blockedReason ?? '', /stopped by the user; state saved/);

    // the next run, quick gates: each task goes on from its checkpoint and lands once
    await gatesFast(stamps);
    const again = await h.runner().run();
    assert.deepEqual(
      again.results.map((r) => r.status),
      ['done', 'done', 'done'],
    );
    assert.equal(await h.ws.read('a.num'), '1');
    const landed = h.ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean);
    assert.deepEqual([...landed].sort(), ['T-001', 'T-002', 'T-003']);
  });

  it('Stop while a task sent back by its gates waits for a slot: it halts at once', async () => {
    let release!: () => void;
    const never = new Promise<void>((resolve) => (release = resolve));
    await setUp({ maxParallel: 2, maxConcurrentGates: 2, windDownSeconds: 0 }, 0, (file) =>
      file === 'b.num' || file === 'c.num' ? never : undefined,
    );
    await addTask('T-001', 'a.num', '11');
    await addTask('T-002', 'b.num', '2');
    await addTask('T-003', 'c.num', '3');
    const runner = h.runner();
    const run = runner.run();
    await waitFor('T-001 waiting for a slot', () => slotEvents('T-001').at(-1)?.state === 'waiting');
    runner.stop();
    const summary = await run;
    release();
    assert.deepEqual(summary.results.map((r) => [r.taskId, r.status]).sort(), [
      ['T-001', 'halted'],
      ['T-002', 'halted'],
      ['T-003', 'halted'],
    ]);
    assert.ok(!eventsOf(h.events, 'iteration.started').some((e) => e.taskId === 'T-001' && e.iteration === 2), 'T-001 never talked again');
    const cp = await new CheckpointStore(h.paths).load('T-001');
    assert.equal(cp?.phase, 'between', 'its first iteration was recorded whole: the next run starts its second');
    assert.equal(cp?.iteration, 1);
  });
});
