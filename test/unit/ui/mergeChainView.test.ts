/**
 * The merge chain as a person sees it: the panel's queue rows (which prefix each check is on,
 * what it waits for, why a task was taken out) and `ralph status`, from the chain file a run keeps.
 */
import * as assert from 'node:assert/strict';
import { formatEvent } from '../../../src/core/eventFormat';
import { chainLines, chainSnapshot } from '../../../src/core/loop/merge/mergeChainFile';
import { EMPTY_QUEUE, type MergeAction, type MergeQueueState, prefixOf, reduceMergeQueue } from '../../../src/core/loop/merge/mergeChain';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { emptyPanelState, runningAgents } from '../../../src/protocol/panelState';
import { chainLine } from '../../../src/protocol/mergeChainText';

const stamp = (seq: number) => ({ runId: 'r', seq, time: `2026-01-01T10:00:0${seq}Z` });

describe('the merge chain in the panel and in ralph status', () => {
  it("the panel keeps each entry's place in the chain and says which prefix its check is on and what it waits for", () => {
    let state = emptyPanelState();
    state = reducePanel(state, {
      type: 'merge',
      taskId: 'T-1',
      state: 'checking',
      title: 'One',
      target: 'main',
      chain: { place: 1, ahead: [] },
      ...stamp(1),
    });
    state = reducePanel(state, {
      type: 'merge',
      taskId: 'T-2',
      state: 'checking',
      title: 'Two',
      target: 'main',
      chain: { place: 2, ahead: ['T-1'], passed: true },
      ...stamp(2),
    });
    state = reducePanel(state, {
      type: 'merge',
      taskId: 'T-3',
      state: 'queued',
      title: 'Three',
      target: 'main',
      detail: 'rebuilt without T-9: its merged check is red',
      ...stamp(3),
    });
    const [one, two, three] = state.queue;
    assert.equal(chainLine(one, 'main'), 'chain #1: main + T-1 · head of the chain: lands next once green');
    assert.equal(chainLine(two, 'main'), 'chain #2: main + T-1 + T-2 · green, lands after T-1');
    assert.equal(three.chain, undefined, 'out of the chain: no place');
    assert.match(three.detail ?? '', /rebuilt without T-9/);
  });

  it('ralph status prints the chain and why a task was taken out, from the snapshot the run saved', () => {
    const act = (s: MergeQueueState, a: MergeAction) => reduceMergeQueue(s, a);
    let s = ['A', 'B', 'C'].reduce((x, id) => act(x, { type: 'enqueue', taskId: id, title: id }), EMPTY_QUEUE);
    for (const id of ['A', 'B', 'C']) s = act(act(s, { type: 'begin', taskId: id, ahead: prefixOf(s) }), { type: 'prepared', taskId: id });
    s = act(s, { type: 'green', taskId: 'C' });
    const snapshot = chainSnapshot(s, 'main', new Date('2026-01-01T10:00:00Z'));
    assert.deepEqual(chainLines(snapshot, true), [
      'merge queue → main:',
      '  #1 A checking on main + A — checking',
      '  #2 B checking on main + A + B — checking, lands after A',
      '  #3 C checking on main + A + B + C — green, lands after A, B',
    ]);
    s = act(s, { type: 'red', taskId: 'A', detail: 'required gates fail on the merged result: unit (1 failed)', gates: [], feedback: [] });
    const after = chainLines(chainSnapshot(s, 'main', new Date('2026-01-01T10:00:00Z')), false);
    assert.deepEqual(after, [
      'merge queue → main (as the last run left it, 2026-01-01T10:00:00.000Z):',
      '  B queued: rebuilt without A: its merged check is red',
      '  C queued: rebuilt without A: its merged check is red',
      '  A failed: required gates fail on the merged result: unit (1 failed)',
    ]);
  });

  it('a task checked ahead of its own gates: its row says so, its tile stays a running agent, ralph status says it too', () => {
    let state = emptyPanelState();
    state = reducePanel(state, {
      type: 'task.started',
      taskId: 'T-1',
      title: 'One',
      iteration: 1,
      maxIterations: 5,
      resumed: false,
      ...stamp(1),
    });
    state = reducePanel(state, {
      type: 'merge',
      taskId: 'T-1',
      state: 'checking',
      title: 'One',
      target: 'main',
      chain: { place: 1, ahead: [], passed: true },
      provisional: true,
      ...stamp(2),
    });
    const [row] = state.queue;
    assert.equal(row.provisional, true);
    assert.equal(
      chainLine(row, 'main'),
      'chain #1: main + T-1 · green, lands once its own gates pass · checked ahead of its own gates: decided once they pass',
    );
    assert.equal(state.tasks.find((t) => t.id === 'T-1')?.merge, undefined, 'its agent is still at work on its gates');
    assert.deepEqual(
      runningAgents(state).map((t) => t.id),
      ['T-1'],
    );
    // confirmed: the task's work is the queue's now
    state = reducePanel(state, {
      type: 'merge',
      taskId: 'T-1',
      state: 'checking',
      target: 'main',
      chain: { place: 1, ahead: [], passed: true },
      ...stamp(3),
    });
    assert.equal(state.queue[0].provisional, undefined);
    assert.equal(state.tasks.find((t) => t.id === 'T-1')?.merge, 'checking');
    assert.deepEqual(runningAgents(state), [], 'its work waits in the queue');

    let s = reduceMergeQueue(EMPTY_QUEUE, { type: 'enqueue', taskId: 'A', title: 'A', provisional: true });
    s = reduceMergeQueue(reduceMergeQueue(s, { type: 'begin', taskId: 'A', ahead: [] }), { type: 'prepared', taskId: 'A' });
    assert.deepEqual(chainLines(chainSnapshot(s, 'main', new Date('2026-01-01T10:00:00Z')), true), [
      'merge queue → main:',
      '  #1 A checking on main + A — checking (checked ahead of its own gates: decided once they pass)',
    ]);
    // the CLI's line for the event
    assert.equal(
      formatEvent({ type: 'merge', taskId: 'A', state: 'checking', provisional: true, ...stamp(4) }),
      '⇶ A merge checking (checked ahead of its own gates)',
    );
    s = reduceMergeQueue(s, { type: 'withdraw', taskId: 'A', detail: 'its loop did not accept COMPLETE: gates red' });
    assert.deepEqual(chainLines(chainSnapshot(s, 'main', new Date('2026-01-01T10:00:00Z')), true), [
      'merge queue → main:',
      '  A failed: taken back: its loop did not accept COMPLETE: gates red',
    ]);
  });

  it("the card keeps the agent's own gates while the merged check runs ahead, and takes the check's once confirmed", () => {
    let state = emptyPanelState();
    const add = (e: Parameters<typeof reducePanel>[1]) => (state = reducePanel(state, e));
    add({ type: 'task.started', taskId: 'T-1', title: 'One', iteration: 1, maxIterations: 5, resumed: false, ...stamp(1) });
    const chain = { place: 1, ahead: [] };
    add({ type: 'merge', taskId: 'T-1', state: 'checking', target: 'main', chain, provisional: true, ...stamp(2) });
    // the merged check (no iteration) and the agent's own gates (iteration 1) at once
    add({ type: 'gate.started', taskId: 'T-1', gate: 'unit', kind: 'tests', command: 'npm test', ...stamp(3) });
    add({ type: 'gate.started', taskId: 'T-1', iteration: 1, gate: 'unit', kind: 'tests', command: 'npm test', ...stamp(4) });
    const finished = { type: 'gate.finished', taskId: 'T-1', gate: 'unit', kind: 'tests', required: true, durationMs: 5 } as const;
    add({ ...finished, iteration: 1, passed: true, summary: 'own: 4 passing', ...stamp(5) });
    add({ ...finished, passed: true, summary: 'merged: 4 passing', ...stamp(6) });
    let task = state.tasks.find((t) => t.id === 'T-1')!;
    assert.deepEqual(
      [task.gatesIteration, task.gatesMergeTarget, task.gates?.map((g) => g.summary)],
      [1, undefined, ['own: 4 passing']],
      "the agent's own verdict while it decides",
    );
    assert.deepEqual(
      task.aheadGates?.map((g) => g.summary),
      ['merged: 4 passing'],
    );
    add({ type: 'merge', taskId: 'T-1', state: 'checking', target: 'main', chain: { ...chain, passed: true }, ...stamp(7) });
    task = state.tasks.find((t) => t.id === 'T-1')!;
    assert.deepEqual(
      [task.gatesIteration, task.gatesMergeTarget, task.gates?.map((g) => g.summary), task.aheadGates],
      [undefined, 'main', ['merged: 4 passing'], undefined],
      'confirmed: the card shows the merged check',
    );
  });

  it('a merged check taken back leaves the card with the agent its own gates', () => {
    let state = emptyPanelState();
    const add = (e: Parameters<typeof reducePanel>[1]) => (state = reducePanel(state, e));
    add({
      type: 'merge',
      taskId: 'T-2',
      state: 'checking',
      target: 'main',
      chain: { place: 1, ahead: [] },
      provisional: true,
      ...stamp(1),
    });
    add({ type: 'gate.started', taskId: 'T-2', gate: 'unit', kind: 'tests', command: 'npm test', ...stamp(2) });
    // its merged check went green before its own gates failed
    add({
      type: 'merge',
      taskId: 'T-2',
      state: 'checking',
      target: 'main',
      chain: { place: 1, ahead: [], passed: true },
      gates: [{ name: 'unit', passed: true, summary: '12 passed' }],
      provisional: true,
      ...stamp(3),
    });
    assert.equal(state.queue[0].gates?.length, 1);
    add({ type: 'merge', taskId: 'T-2', state: 'failed', detail: 'taken back: its loop did not accept COMPLETE', ...stamp(4) });
    const task = state.tasks.find((t) => t.id === 'T-2')!;
    assert.equal(task.aheadGates, undefined);
    assert.equal(task.gatesMergeTarget, undefined);
    assert.equal(state.queue[0].gates, undefined, 'the queue row keeps no gates of a check taken back');
    assert.equal(state.queue[0].detail, 'taken back: its loop did not accept COMPLETE');
  });
});
