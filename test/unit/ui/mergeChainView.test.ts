/**
 * The merge chain as a person sees it: the panel's queue rows (which prefix each check is on,
 * what it waits for, why a task was taken out) and `ralph status`, from the chain file a run keeps.
 */
import * as assert from 'node:assert/strict';
import { formatEvent } from '../../../src/core/eventFormat';
import { chainLines, chainSnapshot } from '../../../src/core/loop/mergeChainFile';
import { EMPTY_QUEUE, type MergeAction, type MergeQueueState, prefixOf, reduceMergeQueue } from '../../../src/core/loop/mergeChain';
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
});
