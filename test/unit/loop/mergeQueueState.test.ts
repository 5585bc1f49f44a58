import assert from 'node:assert/strict';
import {
  awaitsConfirmation,
  chainHead,
  chainOf,
  EMPTY_QUEUE,
  entryOf,
  type MergeAction,
  MergeQueueError,
  type MergeQueueState,
  nextToBuild,
  nextToMerge,
  prefixOf,
  reduceMergeQueue,
} from '../../../src/core/loop/merge/mergeQueue';

const run = (actions: MergeAction[], from: MergeQueueState = EMPTY_QUEUE) => actions.reduce(reduceMergeQueue, from);
const enqueue = (taskId: string): MergeAction => ({ type: 'enqueue', taskId, title: taskId });
/** Joins the chain on every task in it (as the executor does), and its prefix is built. */
const join = (s: MergeQueueState, taskId: string, extra: Partial<Extract<MergeAction, { type: 'begin' }>> = {}): MergeQueueState =>
  run(
    [
      { type: 'begin', taskId, ahead: prefixOf(s), ...extra },
      { type: 'prepared', taskId },
    ],
    s,
  );
const green = (taskId: string): MergeAction => ({ type: 'green', taskId });
const red = (taskId: string): MergeAction => ({
  type: 'red',
  taskId,
  detail: 'tests fail',
  gates: [{ name: 'tests', passed: false, summary: '1 failing' }],
  feedback: ['tests: x'],
});
const landed = (taskId: string): MergeAction => ({ type: 'landed', taskId, commit: `c-${taskId}`, detail: 'merged' });
const states = (s: MergeQueueState) => Object.fromEntries(s.entries.map((e) => [e.taskId, e.state]));

/** A chain of A, B, C (and D) all being checked: target + A, target + A + B, target + A + B + C. */
function chainOfFour(n = 4): MergeQueueState {
  const ids = ['A', 'B', 'C', 'D'].slice(0, n);
  let s = run(ids.map(enqueue));
  for (const id of ids) s = join(s, id);
  return s;
}

describe('merge chain state machine (pure)', () => {
  it('builds each prefix on the tasks ahead, checks them side by side, and lands the head first, in queue order', () => {
    let s = chainOfFour(3);
    assert.deepEqual(
      chainOf(s).map((e) => [e.taskId, e.ahead]),
      [
        ['A', []],
        ['B', ['A']],
        ['C', ['A', 'B']],
      ],
    );
    // C's prefix passes first: it still waits for A and B to land
    s = run([green('C')], s);
    assert.throws(() => reduceMergeQueue(s, landed('C')), /not the head of the merge chain \(A is\)/);
    s = run([green('A'), landed('A')], s);
    assert.equal(chainHead(s)?.taskId, 'B');
    assert.deepEqual(entryOf(s, 'C')?.ahead, ['B'], 'A is on the target now: C is built on the target + B');
    s = run([green('B'), landed('B'), landed('C')], s);
    assert.deepEqual(states(s), { A: 'merged', B: 'merged', C: 'merged' });
    assert.equal(nextToMerge(s), undefined);
  });

  it('a red prefix in the middle: exactly that task goes back, the prefixes behind it are rebuilt without it', () => {
    let s = run([green('A'), green('C')], chainOfFour());
    s = run([landed('A'), red('B')], s);
    assert.deepEqual(states(s), { A: 'merged', B: 'failed', C: 'queued', D: 'queued' });
    assert.match(entryOf(s, 'C')?.detail ?? '', /rebuilt without B: its merged check is red/);
    assert.equal(entryOf(s, 'C')?.passed, undefined, 'a green result built on the red task counts for nothing');
    assert.deepEqual(entryOf(s, 'B')?.feedback, ['tests: x'], 'the task taken out is told why');
    // they keep their places: C before D, and neither builds on B any more
    assert.deepEqual(
      nextToBuild(s, 3).map((e) => e.taskId),
      ['C', 'D'],
    );
    s = join(join(s, 'C'), 'D');
    assert.deepEqual(entryOf(s, 'D')?.ahead, ['C']);
  });

  it('a red first prefix: the head goes back, every prefix behind is rebuilt on the target alone', () => {
    const s = run([green('B'), red('A')], chainOfFour(3));
    assert.deepEqual(states(s), { A: 'failed', B: 'queued', C: 'queued' });
    assert.equal(chainOf(s).length, 0);
    const again = join(s, 'B');
    assert.deepEqual(entryOf(again, 'B')?.ahead, []);
  });

  it('two red prefixes: each is decided as the head, the second only after the first left', () => {
    let s = chainOfFour(3);
    // B's red result is not a verdict while A may still be red: only the head is decided
    assert.throws(() => reduceMergeQueue(s, red('B')), /not the head/);
    s = run([green('A'), landed('A'), red('B')], s);
    assert.deepEqual(states(s), { A: 'merged', B: 'failed', C: 'queued' });
    s = join(s, 'C');
    s = run([red('C')], s);
    assert.deepEqual(states(s), { A: 'merged', B: 'failed', C: 'failed' });
    // sent back, fixed by their agents, queued again
    s = run([enqueue('B'), enqueue('C')], s);
    assert.equal(entryOf(s, 'B')?.attempts, 2);
    assert.equal(entryOf(s, 'B')?.feedback, undefined, 'the old failure is not carried into the new attempt');
  });

  it('a task cancelled while its prefix is being checked: out of the queue, the ones built on it rebuilt', () => {
    let s = run([green('A')], chainOfFour(3));
    s = run([{ type: 'cancel', taskId: 'B', detail: 'cancelled by the person' }], s);
    assert.equal(entryOf(s, 'B'), undefined);
    assert.deepEqual(states(s), { A: 'checking', C: 'queued' });
    assert.match(entryOf(s, 'C')?.detail ?? '', /rebuilt without B: B left the queue \(cancelled by the person\)/);
    assert.equal(entryOf(s, 'A')?.passed, true, 'the prefix ahead of it is untouched');
    // a queued task may be cancelled too; a merged one never is
    s = run([landed('A')], s);
    assert.throws(() => reduceMergeQueue(s, { type: 'cancel', taskId: 'A', detail: 'late' }), /is merged/);
    s = run([{ type: 'cancel', taskId: 'C', detail: 'dropped' }], s);
    assert.equal(nextToMerge(s), undefined);
  });

  it('the target moved by the user meanwhile: the head is put back, the whole chain with it, places kept', () => {
    let s = run([green('A'), green('B')], chainOfFour(3));
    s = run([{ type: 'requeue', taskId: 'A', detail: 'main moved during the check' }], s);
    assert.deepEqual(states(s), { A: 'queued', B: 'queued', C: 'queued' });
    assert.deepEqual(
      nextToBuild(s, 2).map((e) => e.taskId),
      ['A', 'B'],
      'first come, first merged, room for two checks',
    );
    assert.equal(entryOf(s, 'B')?.passed, undefined);
  });

  it('never merges a task twice; a conflict leaves the chain; illegal steps throw', () => {
    const merged = run([enqueue('A'), { type: 'begin', taskId: 'A' }, { type: 'prepared', taskId: 'A' }, landed('A')]);
    assert.throws(
      () => reduceMergeQueue(merged, enqueue('A')),
      (e: unknown) => e instanceof MergeQueueError && /never merged twice/.test(e.message),
    );
    assert.throws(() => reduceMergeQueue(merged, landed('A')), /is merged/);
    const two = run([enqueue('A'), enqueue('B'), { type: 'begin', taskId: 'A' }]);
    assert.throws(() => reduceMergeQueue(two, enqueue('A')), /already merging/);
    assert.throws(() => reduceMergeQueue(two, { type: 'begin', taskId: 'B', ahead: ['Z'] }), /not in the merge chain/);
    assert.throws(() => reduceMergeQueue(two, { type: 'red', taskId: 'A', detail: '', gates: [], feedback: [] }), /needs checking/);
    assert.throws(() => reduceMergeQueue(EMPTY_QUEUE, { type: 'begin', taskId: 'Z' }), /not in the merge queue/);
    const conflict = run([{ type: 'conflict', taskId: 'A', files: ['x.txt'], hunks: [{ file: 'x.txt', text: '<<<<<<<' }] }], two);
    assert.equal(entryOf(conflict, 'A')?.state, 'conflict');
    assert.equal(entryOf(conflict, 'A')?.pos, undefined, 'out of the chain');
    assert.deepEqual(
      nextToBuild(conflict, 1).map((e) => e.taskId),
      ['B'],
      'a conflict is not retried by the queue itself',
    );
  });

  it('a task held for review is checked in the chain, but the prefixes behind it are built without it', () => {
    let s = run(['A', 'B', 'C'].map(enqueue));
    s = join(s, 'A', { aside: true });
    assert.deepEqual(prefixOf(s), [], 'nothing builds on a result that waits for a person');
    assert.throws(() => reduceMergeQueue(s, { type: 'begin', taskId: 'B', ahead: ['A'] }), /waits for a review/);
    s = join(join(s, 'B'), 'C');
    assert.deepEqual(entryOf(s, 'C')?.ahead, ['B']);
    s = run([green('A'), { type: 'review', taskId: 'A', detail: 'waits for your review', base: 't0', result: 'r1' }], s);
    assert.deepEqual(states(s), { A: 'review', B: 'checking', C: 'checking' }, 'held: the others keep their checks');
  });

  it('batches: the last task of a batch covers the ones ahead; a red batch is split, its tasks checked one by one', () => {
    let s = run(['A', 'B', 'C'].map(enqueue));
    s = join(s, 'A', { coveredBy: 'C' });
    s = join(s, 'B', { coveredBy: 'C' });
    s = join(s, 'C');
    s = run([{ type: 'green', taskId: 'C', covers: ['A', 'B'] }], s);
    assert.deepEqual(
      chainOf(s).map((e) => e.passed),
      [true, true, true],
    );
    let r = run(['A', 'B', 'C'].map(enqueue));
    r = join(join(join(r, 'A', { coveredBy: 'C' }), 'B', { coveredBy: 'C' }), 'C');
    r = run([{ type: 'split', taskId: 'A', members: ['A', 'B', 'C'], detail: 'its batch was red' }], r);
    assert.deepEqual(states(r), { A: 'queued', B: 'queued', C: 'queued' });
    assert.deepEqual(
      r.entries.map((e) => e.alone),
      [true, true, true],
    );
  });

  it('waiting for the user tree lets queued ones pass; it is tried again on the bare target once none is left', () => {
    let s = run([enqueue('A'), enqueue('B')]);
    s = join(s, 'A');
    s = run([green('A'), { type: 'wait', taskId: 'A', detail: 'your changes', files: ['a.txt'] }], s);
    assert.equal(entryOf(s, 'A')?.state, 'waiting');
    assert.deepEqual(
      nextToBuild(s, 3).map((e) => e.taskId),
      ['B'],
      'a waiting merge lets a queued one pass',
    );
    s = join(s, 'B');
    assert.deepEqual(nextToBuild(s, 3), [], 'not on a prefix: it needs the target itself');
    s = run([green('B'), landed('B')], s);
    assert.equal(nextToMerge(s)?.taskId, 'A');
  });
});

describe("merge chain: checked ahead of the task's own gates (merge.checkAhead)", () => {
  const ahead = (taskId: string): MergeAction => ({ type: 'enqueue', taskId, title: taskId, provisional: true });
  const confirm = (taskId: string, proof?: string): MergeAction => ({ type: 'confirm', taskId, proof });
  const withdraw = (taskId: string): MergeAction => ({ type: 'withdraw', taskId, detail: 'its gates are red' });

  it('is built and checked like any entry, but decided only once confirmed; confirming counts the attempt', () => {
    let s = run([ahead('A'), enqueue('B')]);
    assert.equal(entryOf(s, 'A')?.attempts, 0, 'not an attempt yet');
    s = join(join(s, 'A'), 'B');
    assert.deepEqual(
      chainOf(s).map((e) => [e.taskId, e.ahead, e.provisional === true]),
      [
        ['A', [], true],
        ['B', ['A'], false],
      ],
    );
    s = run([green('A'), green('B')], s);
    assert.ok(awaitsConfirmation(s, chainHead(s)!));
    for (const decide of [landed('A'), red('A'), { type: 'conflict', taskId: 'A', files: ['x'], hunks: [] } as MergeAction])
      assert.throws(() => reduceMergeQueue(s, decide), /checked ahead of its own gates: it is decided only once its loop accepts COMPLETE/);
    s = run([confirm('A', 'fails on its base: t1')], s);
    assert.equal(awaitsConfirmation(s, chainHead(s)!), false);
    assert.equal(entryOf(s, 'A')?.attempts, 1);
    assert.equal(entryOf(s, 'A')?.proof, 'fails on its base: t1');
    assert.equal(entryOf(s, 'A')?.passed, true, 'its check is kept');
    s = run([landed('A'), landed('B')], s);
    assert.deepEqual(states(s), { A: 'merged', B: 'merged' });
  });

  it('withdrawn while its prefix is checked: it leaves the chain as taken back, the prefixes built on it are rebuilt without it', () => {
    let s = run([enqueue('A'), ahead('B'), enqueue('C')]);
    for (const id of ['A', 'B', 'C']) s = join(s, id);
    s = run([green('C'), { type: 'green', taskId: 'B', gates: [{ name: 'unit', passed: true, summary: 'ok' }] }], s);
    assert.equal(entryOf(s, 'B')?.gates?.length, 1);
    s = run([withdraw('B')], s);
    assert.deepEqual(states(s), { A: 'checking', B: 'failed', C: 'queued' });
    assert.equal(entryOf(s, 'B')?.gates, undefined, 'the gates of its check go with it');
    assert.equal(entryOf(s, 'B')?.attempts, 0, 'not an attempt');
    assert.equal(entryOf(s, 'B')?.provisional, undefined);
    assert.deepEqual(
      chainOf(s).map((e) => e.taskId),
      ['A'],
      'out of the chain',
    );
    assert.match(entryOf(s, 'C')!.detail!, /rebuilt without B: B was taken back \(its gates are red\)/);
    s = join(s, 'C');
    assert.deepEqual(entryOf(s, 'C')?.ahead, ['A']);
  });

  it('a task sent back before keeps its record and its attempts when a later check ahead is withdrawn', () => {
    let s = join(run([enqueue('A')]), 'A');
    s = run([red('A'), ahead('A')], s);
    assert.equal(entryOf(s, 'A')?.attempts, 1);
    s = run([withdraw('A')], join(s, 'A'));
    assert.equal(entryOf(s, 'A')?.state, 'failed');
    assert.equal(entryOf(s, 'A')?.attempts, 1, 'the withdrawn check is not an attempt');
    assert.match(entryOf(s, 'A')!.detail!, /taken back: its gates are red/);
    s = run([enqueue('A')], s);
    assert.equal(entryOf(s, 'A')?.attempts, 2);
  });

  it('a batch whose check is provisional waits for it; confirm and withdraw need a provisional entry; no second claim', () => {
    let s = run([enqueue('A'), ahead('B')]);
    s = join(s, 'A', { coveredBy: 'B' });
    s = join(s, 'B');
    assert.ok(awaitsConfirmation(s, chainHead(s)!), 'A is covered by the check of B, which is not confirmed');
    assert.throws(() => reduceMergeQueue(s, confirm('A')), /not checked ahead of its gates/);
    assert.throws(() => reduceMergeQueue(s, withdraw('Z')), /not in the merge queue/);
    assert.throws(() => reduceMergeQueue(s, ahead('B')), /already checking/);
    s = run([confirm('B')], s);
    assert.equal(awaitsConfirmation(s, chainHead(s)!), false);
    assert.throws(() => reduceMergeQueue(s, confirm('B')), /not checked ahead of its gates/);
  });

  it('put back (the target moved) or split, it stays provisional; a cancel takes it out like any entry', () => {
    let s = run([ahead('A'), enqueue('B')]);
    s = join(join(s, 'A'), 'B');
    s = run([{ type: 'requeue', taskId: 'A', detail: 'main moved' }], s);
    assert.equal(entryOf(s, 'A')?.provisional, true);
    assert.deepEqual(states(s), { A: 'queued', B: 'queued' });
    s = run([{ type: 'cancel', taskId: 'A', detail: 'cancelled' }], s);
    assert.deepEqual(states(s), { B: 'queued' });
  });
});
