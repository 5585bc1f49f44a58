import assert from 'node:assert/strict';
import { EMPTY_QUEUE, entryOf, type MergeAction, MergeQueueError, type MergeQueueState, nextToMerge, reduceMergeQueue } from '../../../src/core/loop/mergeQueue';

const run = (actions: MergeAction[], from: MergeQueueState = EMPTY_QUEUE) => actions.reduce(reduceMergeQueue, from);
const enqueue = (taskId: string): MergeAction => ({ type: 'enqueue', taskId, title: taskId });

describe('merge queue state machine (pure)', () => {
  it('goes queued → merging → checking → merged, first come first merged', () => {
    let s = run([enqueue('A'), enqueue('B')]);
    assert.equal(nextToMerge(s)?.taskId, 'A');
    s = run([{ type: 'begin', taskId: 'A' }], s);
    assert.equal(entryOf(s, 'A')?.state, 'merging');
    assert.equal(nextToMerge(s), undefined, 'one at a time');
    s = run([{ type: 'prepared', taskId: 'A' }, { type: 'landed', taskId: 'A', commit: 'abc', detail: 'merged' }], s);
    assert.equal(entryOf(s, 'A')?.state, 'merged');
    assert.equal(entryOf(s, 'A')?.commit, 'abc');
    assert.equal(nextToMerge(s)?.taskId, 'B');
  });

  it('never merges a task twice, and never has two merges in flight', () => {
    const merged = run([enqueue('A'), { type: 'begin', taskId: 'A' }, { type: 'prepared', taskId: 'A' }, { type: 'landed', taskId: 'A', detail: 'ok' }]);
    assert.throws(() => reduceMergeQueue(merged, enqueue('A')), (e: unknown) => e instanceof MergeQueueError && /never merged twice/.test(e.message));
    assert.throws(() => reduceMergeQueue(merged, { type: 'landed', taskId: 'A', detail: 'again' }), /is merged/);
    const two = run([enqueue('A'), enqueue('B'), { type: 'begin', taskId: 'A' }]);
    assert.throws(() => reduceMergeQueue(two, { type: 'begin', taskId: 'B' }), /one task at a time/);
    assert.throws(() => reduceMergeQueue(two, enqueue('A')), /already merging/);
  });

  it('a conflict or a red check ends the attempt; the task may be queued again (after its agent fixed it)', () => {
    let s = run([enqueue('A'), { type: 'begin', taskId: 'A' }, { type: 'conflict', taskId: 'A', files: ['x.txt'], hunks: [{ file: 'x.txt', text: '<<<<<<<' }] }]);
    assert.equal(entryOf(s, 'A')?.state, 'conflict');
    assert.deepEqual(entryOf(s, 'A')?.files, ['x.txt']);
    assert.equal(nextToMerge(s), undefined, 'a conflict is not retried by the queue itself');
    s = run([enqueue('A'), { type: 'begin', taskId: 'A' }, { type: 'prepared', taskId: 'A' }, { type: 'red', taskId: 'A', detail: 'tests fail', gates: [{ name: 'tests', passed: false, summary: '1 failing' }], feedback: ['tests: x'] }], s);
    assert.equal(entryOf(s, 'A')?.state, 'failed');
    assert.equal(entryOf(s, 'A')?.attempts, 2);
    assert.equal(entryOf(s, 'A')?.files, undefined, 'the old conflict is not carried into the new attempt');
  });

  it('a red check can only follow a merge that was prepared; a conflict only a merge in progress', () => {
    const merging = run([enqueue('A'), { type: 'begin', taskId: 'A' }]);
    assert.throws(() => reduceMergeQueue(merging, { type: 'red', taskId: 'A', detail: '', gates: [], feedback: [] }), /needs checking/);
    const checking = reduceMergeQueue(merging, { type: 'prepared', taskId: 'A' });
    assert.throws(() => reduceMergeQueue(checking, { type: 'conflict', taskId: 'A', files: [], hunks: [] }), /needs merging/);
    assert.throws(() => reduceMergeQueue(EMPTY_QUEUE, { type: 'begin', taskId: 'Z' }), /not in the merge queue/);
  });

  it('waiting for the user tree lets others pass; a moved target puts the task back at the front', () => {
    let s = run([enqueue('A'), enqueue('B'), { type: 'begin', taskId: 'A' }, { type: 'prepared', taskId: 'A' }, { type: 'wait', taskId: 'A', detail: 'your changes', files: ['a.txt'] }]);
    assert.equal(entryOf(s, 'A')?.state, 'waiting');
    assert.equal(nextToMerge(s)?.taskId, 'B', 'a waiting merge lets a queued one pass');
    s = run([{ type: 'begin', taskId: 'B' }, { type: 'prepared', taskId: 'B' }, { type: 'landed', taskId: 'B', detail: 'ok' }], s);
    assert.equal(nextToMerge(s)?.taskId, 'A', 'and is tried again once none is queued');
    s = run([{ type: 'begin', taskId: 'B' }, { type: 'prepared', taskId: 'B' }, { type: 'requeue', taskId: 'B', detail: 'moved' }], run([enqueue('B')], EMPTY_QUEUE));
    s = run([enqueue('C')], s);
    assert.equal(nextToMerge(s)?.taskId, 'B');
  });
});
