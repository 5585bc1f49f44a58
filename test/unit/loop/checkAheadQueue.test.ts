import assert from 'node:assert/strict';
import type { GateConfig } from '../../../src/core/config/schema';
import type { RalphEvent } from '../../../src/core/events';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { entryOf, type MergeQueue, type MergeOutcome } from '../../../src/core/loop/merge/mergeQueue';
import { chainQueue, taskWork as commitWork } from '../helpers/chainQueue';
import { assertGreenAtEveryCommit } from '../helpers/greenHistory';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** Green while the numbers in the *.num files add up to at most 10. */
const CHECK_JS = `const fs = require('fs');
const total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
console.log('total ' + total + ' ok');
`;

/**
 * `merge.checkAhead` on real git: a task queued as provisional (its agent signalled COMPLETE,
 * its own gates still run) is built and checked like any other, but never decided before its
 * loop confirms it; taken back, the prefixes built on it are built again without it.
 */
describe('MergeQueue: checked ahead of the task gates (real git)', () => {
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let events: RalphEvent[];
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'check.js': CHECK_JS } });
    wt = new WorktreeManager(ws.dir);
    events = [];
  });
  afterEach(async () => ws.cleanup());

  const gate: GateConfig = { name: 'check', command: 'node check.js', kind: 'custom', required: true };

  const queue = () => chainQueue(wt, events, gate);
  const taskWork = (taskId: string, files: Record<string, string>) => commitWork(ws, wt, taskId, files);

  /** Bounded: polls `done` until it holds (at most ~20 s), for states the queue reaches on its own. */
  async function until(what: string, done: () => boolean): Promise<void> {
    for (let i = 0; i < 400 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(done(), `never reached: ${what}`);
  }

  async function drain(q: MergeQueue, first?: Promise<MergeOutcome | undefined>): Promise<MergeOutcome[]> {
    const out: MergeOutcome[] = [];
    const one = await first;
    if (one) out.push(one);
    for (let i = 0; i < 50 && q.pending; i++) {
      const o = await q.processNext();
      if (o) out.push(o);
    }
    await q.idle();
    return out;
  }

  const passed = (q: MergeQueue, id: string) => entryOf(q.snapshot, id)?.passed === true;
  const mainTip = () => ws.git('rev-parse', 'main');

  it('is checked while its gates run, lands only once confirmed, and the confirmed task behind it lands after it', async () => {
    await taskWork('T-1', { 'a.num': '3' });
    await taskWork('T-2', { 'b.num': '4' });
    const before = mainTip();
    const q = queue();
    q.enqueue('T-1', 'T-1', { provisional: true, fresh: true });
    q.enqueue('T-2', 'T-2', { fresh: true });
    const step = q.processNext();
    await until('both prefixes green', () => passed(q, 'T-1') && passed(q, 'T-2'));
    assert.equal(mainTip(), before, 'nothing lands before its loop accepted COMPLETE');
    const ahead = events.find((e) => e.type === 'merge' && e.taskId === 'T-1' && e.provisional && e.chain);
    assert.ok(ahead, 'the merge event says the check is ahead of its own gates');
    assert.equal(entryOf(q.snapshot, 'T-1')?.attempts, 0);
    q.confirm('T-1', 'fails on its base: a');
    const outcomes = await drain(q, step);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state, o.attempts]),
      [
        ['T-1', 'merged', 1],
        ['T-2', 'merged', 1],
      ],
    );
    assert.equal(outcomes[0].proof, 'fails on its base: a');
    assert.equal(events.filter((e) => e.type === 'gate.finished').length, 2, 'each prefix checked once: no check again after confirm');
    await assertGreenAtEveryCommit(ws);
  });

  it('confirmed behind the head, its branch unmoved: it lands in one step with the head (one move of main)', async () => {
    await taskWork('T-1', { 'a.num': '3' });
    await taskWork('T-2', { 'b.num': '4' });
    const moves = () => ws.git('reflog', 'show', '--format=%H', 'refs/heads/main').split('\n').filter(Boolean).length;
    const before = moves();
    const q = queue();
    q.enqueue('T-1', 'T-1', { provisional: true, fresh: true });
    q.enqueue('T-2', 'T-2', { provisional: true, fresh: true });
    const step = q.processNext();
    await until('both prefixes green', () => passed(q, 'T-1') && passed(q, 'T-2'));
    q.confirm('T-2');
    q.confirm('T-1');
    const outcomes = await drain(q, step);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [
        ['T-1', 'merged'],
        ['T-2', 'merged'],
      ],
    );
    assert.equal(moves(), before + 1, 'main moved once, to the last checked prefix');
    await assertGreenAtEveryCommit(ws);
  });

  it('taken back while checked: never lands, the prefixes built on it are built again without it and land', async () => {
    await taskWork('T-1', { 'a.num': '8' }); // its own gates would be red in its worktree: taken back
    await taskWork('T-2', { 'b.num': '1' });
    await taskWork('T-3', { 'c.num': '1' });
    const q = queue();
    q.enqueue('T-1', 'T-1', { provisional: true, fresh: true });
    q.enqueue('T-2', 'T-2', { fresh: true });
    q.enqueue('T-3', 'T-3', { fresh: true });
    const step = q.processNext();
    await until('T-3 built on T-1 and T-2', () => (entryOf(q.snapshot, 'T-3')?.ahead ?? []).length === 2);
    q.withdraw('T-1', 'its loop did not accept COMPLETE: gates red');
    assert.equal(entryOf(q.snapshot, 'T-1')?.state, 'failed', 'the views see it leave');
    assert.equal(entryOf(q.snapshot, 'T-1')?.attempts, 0, 'not an attempt');
    assert.ok(
      events.some(
        (e) => e.type === 'merge' && e.taskId === 'T-1' && e.state === 'failed' && !e.provisional && /taken back/.test(e.detail ?? ''),
      ),
    );
    const outcomes = await drain(q, step);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [
        ['T-2', 'merged'],
        ['T-3', 'merged'],
      ],
    );
    assert.ok(!ws.git('ls-tree', '--name-only', 'main').split('\n').includes('a.num'), 'T-1 never reached main');
    assert.ok(
      events.some((e) => e.type === 'merge' && e.taskId === 'T-3' && /rebuilt without T-1: T-1 was taken back/.test(e.detail ?? '')),
      'T-3 says why it was rebuilt',
    );
    await assertGreenAtEveryCommit(ws);
  });

  it('merge.batchSize 3: a task taken back from the middle of its batch never lands; the others are checked again without it and land', async () => {
    await taskWork('T-1', { 'a.num': '1' });
    await taskWork('T-2', { 'b.num': '1' });
    await taskWork('T-3', { 'c.num': '1' });
    const q = chainQueue(wt, events, gate, { batchSize: 3, concurrency: 1 });
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, id, { provisional: true, fresh: true });
    const step = q.processNext();
    await until('the batch checked by T-3', () => passed(q, 'T-3') && entryOf(q.snapshot, 'T-1')?.coveredBy === 'T-3');
    q.withdraw('T-2', 'its loop did not accept COMPLETE: gates red');
    q.confirm('T-1');
    q.confirm('T-3');
    const outcomes = await drain(q, step);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [
        ['T-1', 'merged'],
        ['T-3', 'merged'],
      ],
    );
    const files = ws.git('ls-tree', '--name-only', 'main').split('\n');
    assert.ok(files.includes('a.num') && files.includes('c.num') && !files.includes('b.num'), 'T-2 never reached main');
    assert.equal(events.filter((e) => e.type === 'gate.finished').length, 2, 'the batch, then T-1 + T-3 checked again without T-2');
    assert.ok(!events.some((e) => e.type === 'merge' && /was red/.test(e.detail ?? '')), 'no batch was red: it lost a task');
    assert.ok(
      events.some((e) => e.type === 'merge' && e.taskId === 'T-1' && /rebuilt without T-2/.test(e.detail ?? '')),
      'T-1 says why',
    );
    await assertGreenAtEveryCommit(ws);
  });

  it('its branch moved after its check began: confirmed, it is built again from the new tip, never landed stale', async () => {
    await taskWork('T-1', { 'a.num': '2' });
    const q = queue();
    q.enqueue('T-1', 'T-1', { provisional: true, fresh: true });
    const step = q.processNext();
    await until('T-1 green', () => passed(q, 'T-1'));
    await taskWork('T-1', { 'later.num': '1' });
    q.confirm('T-1');
    const outcomes = await drain(q, step);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [['T-1', 'merged']],
    );
    assert.ok(ws.git('ls-tree', '--name-only', 'main').split('\n').includes('later.num'), 'the branch tip of now landed');
    assert.ok(events.some((e) => e.type === 'merge' && /its branch moved after its check began/.test(e.detail ?? '')));
    await assertGreenAtEveryCommit(ws);
  });

  it('a stop while the head waits for its loop: the chain is put back, still provisional, nothing landed', async () => {
    await taskWork('T-1', { 'a.num': '2' });
    const before = mainTip();
    const q = queue();
    q.enqueue('T-1', 'T-1', { provisional: true, fresh: true });
    const stop = new AbortController();
    const step = q.processNext(stop.signal);
    await until('T-1 green', () => passed(q, 'T-1'));
    stop.abort();
    assert.equal(await step, undefined);
    await q.idle();
    assert.equal(entryOf(q.snapshot, 'T-1')?.state, 'queued');
    assert.equal(entryOf(q.snapshot, 'T-1')?.provisional, true);
    assert.equal(mainTip(), before);
    q.withdraw('T-1', 'its agent ended halted: stopped');
    assert.equal(q.pending, false, 'nothing left for a run to wait on');
  });
});
