import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../../../src/core/config/schema';
import type { RalphEvent } from '../../../src/core/events';
import { useMergeTree } from '../../../src/core/git/mergeTree';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import type { MergeQueue, MergeOutcome } from '../../../src/core/loop/merge/mergeQueue';
import { chainQueue, taskWork as commitWork } from '../helpers/chainQueue';
import { assertGreenAtEveryCommit } from '../helpers/greenHistory';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * Green while the numbers in the *.num files add up to at most 10; it also says it started (a
 * file per check in CHECKS_DIR) and, with WAIT_FOR set, waits (bounded) until that many checks
 * have started — which only happens when checks run side by side; with RELEASE set, until
 * that file exists (the test moves the target meanwhile).
 */
const CHECK_JS = `const fs = require('fs'); const path = require('path');
const dir = process.env.CHECKS_DIR;
if (dir) fs.writeFileSync(path.join(dir, String(process.pid)), process.cwd());
const want = Number(process.env.WAIT_FOR || 0);
const until = Date.now() + 20000;
const nap = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
while (want && fs.readdirSync(dir).filter((f) => /^\\d+$/.test(f)).length < want && Date.now() < until) nap();
while (process.env.RELEASE && !fs.existsSync(process.env.RELEASE) && Date.now() < until) nap();
const total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
console.log('total ' + total + ' ok');
`;

describe('MergeQueue as a speculative chain (real git, concurrent merged checks)', () => {
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let events: RalphEvent[];
  let checksDir: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'check.js': CHECK_JS } });
    wt = new WorktreeManager(ws.dir);
    events = [];
    checksDir = path.join(await ws.outsideDir(), 'checks');
    await fs.mkdir(checksDir, { recursive: true });
  });
  afterEach(async () => ws.cleanup());

  function gate(env = ''): GateConfig {
    return { name: 'check', command: `CHECKS_DIR=${checksDir} ${env} node check.js`, kind: 'custom', required: true };
  }

  const queue = (overrides: Partial<ConstructorParameters<typeof MergeQueue>[0]> = {}) => chainQueue(wt, events, gate(), overrides);
  const taskWork = (taskId: string, files: Record<string, string>) => commitWork(ws, wt, taskId, files);

  async function drain(q: MergeQueue): Promise<MergeOutcome[]> {
    const out: MergeOutcome[] = [];
    for (let i = 0; i < 50 && q.pending; i++) {
      const o = await q.processNext();
      if (o) out.push(o);
    }
    await q.idle();
    return out;
  }

  /** Releases the held checks; the outcomes of the call under way and of the rest of the queue, as [task, state]. */
  async function releaseAndDrain(q: MergeQueue, release: string, first: Promise<MergeOutcome | undefined>): Promise<string[][]> {
    await fs.writeFile(release, '');
    const outcomes = [await first, ...(await drain(q))].filter((o) => o !== undefined);
    return outcomes.map((o) => [o.taskId, o.state]);
  }

  const assertGreenHistory = () => assertGreenAtEveryCommit(ws);

  const checked = () => events.filter((e) => e.type === 'gate.finished');
  const landedTrees = () =>
    events.filter((e) => e.type === 'merge' && e.state === 'merged').map((e) => (e.type === 'merge' ? e.commit : undefined));

  it('checks three prefixes side by side (each waits for the others to start), lands them in queue order, each tree checked', async () => {
    for (const [id, n] of [
      ['T-1', '1'],
      ['T-2', '2'],
      ['T-3', '3'],
    ])
      await taskWork(id, { [`${id}.num`]: n });
    const q = queue({ gateConfigs: [gate('WAIT_FOR=3')] });
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, `Add ${id}`);
    const outcomes = await drain(q);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [
        ['T-1', 'merged'],
        ['T-2', 'merged'],
        ['T-3', 'merged'],
      ],
    );
    assert.deepEqual(ws.git('log', '--format=%s', 'main').split('\n'), [
      'ralph(T-3): Add T-3',
      'ralph(T-2): Add T-2',
      'ralph(T-1): Add T-1',
      'initial',
    ]);
    // three checks started in three merge worktrees at once, each on its own prefix
    const cwds = await Promise.all(
      (await fs.readdir(checksDir)).filter((f) => /^\d+$/.test(f)).map((f) => fs.readFile(path.join(checksDir, f), 'utf8')),
    );
    assert.deepEqual(new Set(cwds.map((c) => path.basename(c))), new Set(['_merge', '_merge-2', '_merge-3']));
    assert.deepEqual(
      checked()
        .map((e) => (e.type === 'gate.finished' ? [e.taskId, e.passed] : []))
        .sort(),
      [
        ['T-1', true],
        ['T-2', true],
        ['T-3', true],
      ],
    );
    // every commit the target got is exactly a tree that was checked: the commits are the checked prefixes
    assert.deepEqual(landedTrees(), ws.git('rev-list', '--reverse', 'main').split('\n').slice(1));
    const chains = events
      .filter((e) => e.type === 'merge' && e.taskId === 'T-3' && e.chain)
      .map((e) => (e.type === 'merge' ? e.chain?.ahead : undefined));
    assert.deepEqual(chains[0], ['T-1', 'T-2'], 'T-3 was checked on main + T-1 + T-2');
    await assertGreenHistory();
  });

  it('git without merge-tree: the same chain, each merge made in a merge worktree no check is using', async () => {
    useMergeTree(ws.dir, false);
    try {
      for (const [id, n] of [
        ['T-1', '1'],
        ['T-2', '2'],
        ['T-3', '3'],
      ])
        await taskWork(id, { [`${id}.num`]: n });
      const q = queue({ gateConfigs: [gate('WAIT_FOR=2')], concurrency: 2 });
      for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, `Add ${id}`);
      assert.deepEqual(
        (await drain(q)).map((o) => [o.taskId, o.state]),
        [
          ['T-1', 'merged'],
          ['T-2', 'merged'],
          ['T-3', 'merged'],
        ],
      );
      assert.deepEqual(landedTrees(), ws.git('rev-list', '--reverse', 'main').split('\n').slice(1));
      await assertGreenHistory();
    } finally {
      useMergeTree(ws.dir, undefined);
    }
  });

  it('one task breaks the suite only together with another: never landed red, the others land, the one taken out is told why', async () => {
    await taskWork('T-1', { 'a.num': '6' });
    await taskWork('T-2', { 'b.num': '5' }); // green alone (5), red on main + T-1 (11)
    await taskWork('T-3', { 'c.num': '3' }); // green on main + T-1 (9); its first prefix (main + T-1 + T-2) was red
    const q = queue();
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, id);
    const outcomes = await drain(q);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [
        ['T-1', 'merged'],
        ['T-2', 'failed'],
        ['T-3', 'merged'],
      ],
    );
    const red = outcomes[1];
    assert.match(red.detail ?? '', /required gates fail on the merged result: check/);
    assert.ok(
      red.feedback && red.feedback.length > 0 && red.feedback.some((f) => /exceeds 10/.test(f)),
      `the agent is told why: ${JSON.stringify(red.feedback)}`,
    );
    // T-3 was rebuilt without T-2 and checked again on main + T-1
    const t3 = events.filter((e) => e.type === 'merge' && e.taskId === 'T-3');
    assert.ok(
      t3.some((e) => e.type === 'merge' && /rebuilt without T-2/.test(e.detail ?? '')),
      'T-3 says it was rebuilt without T-2',
    );
    assert.ok(!ws.git('ls-tree', '--name-only', 'main').split('\n').includes('b.num'), 'T-2 never reached main');
    await assertGreenHistory();
    assert.deepEqual(landedTrees(), ws.git('rev-list', '--reverse', 'main').split('\n').slice(1));
  });

  it('gates[].exclusive: a gate that holds a shared resource runs in one check at a time, the chain still lands all', async () => {
    const lock = path.join(checksDir, 'port.lock');
    const exclusive: GateConfig = {
      name: 'port',
      command: `mkdir ${lock} && node -e "setTimeout(()=>{},300)" && rmdir ${lock}`,
      kind: 'custom',
      required: true,
      exclusive: true,
    };
    for (const [id, n] of [
      ['T-1', '1'],
      ['T-2', '2'],
      ['T-3', '3'],
    ])
      await taskWork(id, { [`${id}.num`]: n });
    const q = queue({ gateConfigs: [gate('WAIT_FOR=3'), exclusive] });
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, id);
    const outcomes = await drain(q);
    assert.deepEqual(
      outcomes.map((o) => o.state),
      ['merged', 'merged', 'merged'],
      JSON.stringify(outcomes.map((o) => o.detail)),
    );
    assert.equal(
      checked().filter((e) => e.type === 'gate.finished' && e.gate === 'port' && e.passed).length,
      3,
      'the exclusive gate never found its resource taken',
    );
  });

  it('merge.batchSize 3: one check covers three tasks, landed as three commits; a red batch is split and checked one by one', async () => {
    for (const [id, n] of [
      ['T-1', '1'],
      ['T-2', '2'],
      ['T-3', '3'],
    ])
      await taskWork(id, { [`${id}.num`]: n });
    const q = queue({ batchSize: 3, concurrency: 1 });
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, id);
    assert.deepEqual(
      (await drain(q)).map((o) => o.state),
      ['merged', 'merged', 'merged'],
    );
    assert.equal(checked().length, 1, 'one merged check for the batch');
    assert.equal(ws.git('rev-list', '--count', 'main'), '4');
    // a red batch: T-5 breaks it; the batch is split, T-4 and T-6 land, T-5 is sent back
    events.length = 0;
    await taskWork('T-4', { 'd.num': '1' });
    await taskWork('T-5', { 'e.num': '9' });
    await taskWork('T-6', { 'f.num': '1' });
    for (const id of ['T-4', 'T-5', 'T-6']) q.enqueue(id, id);
    const second = await drain(q);
    assert.deepEqual(
      second.map((o) => [o.taskId, o.state]),
      [
        ['T-4', 'merged'],
        ['T-5', 'failed'],
        ['T-6', 'merged'],
      ],
    );
    assert.ok(events.some((e) => e.type === 'merge' && /its batch \(with T-6\) was red/.test(e.detail ?? '')));
    await assertGreenHistory();
  });

  it('merge.batchSize 3, concurrency 1: tasks queued while a check runs wait and join one batch (never a second check at once)', async () => {
    const release = path.join(checksDir, 'release');
    await taskWork('T-1', { 'a.num': '1' });
    const q = queue({ batchSize: 3, concurrency: 1, gateConfigs: [gate(`RELEASE=${release}`)] });
    q.enqueue('T-1', 'T-1');
    const first = q.processNext();
    // T-1's check is under way (held); three more tasks arrive one by one, the queue looking at each
    const started = () => fs.readdir(checksDir).then((f) => f.filter((n) => /^\d+$/.test(n)).length);
    for (let i = 0; i < 200 && (await started()) < 1; i++) await new Promise((r) => setTimeout(r, 25));
    for (const [id, file] of [
      ['T-2', 'b.num'],
      ['T-3', 'c.num'],
      ['T-4', 'd.num'],
    ]) {
      await taskWork(id, { [file]: '1' });
      q.enqueue(id, id);
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(await started(), 1, 'no second check beside the one under way');
    assert.deepEqual(await releaseAndDrain(q, release, first), [
      ['T-1', 'merged'],
      ['T-2', 'merged'],
      ['T-3', 'merged'],
      ['T-4', 'merged'],
    ]);
    assert.equal(checked().length, 2, 'T-1 alone, then T-2..T-4 in one check');
    const batch = events.find((e) => e.type === 'merge' && e.taskId === 'T-4' && e.state === 'checking');
    assert.ok(batch?.type === 'merge' && batch.chain?.ahead?.length === 2, 'T-4 checked on main + T-2 + T-3');
  });

  it('a task cancelled while its prefix is checked: the ones behind are rebuilt without it and land', async () => {
    await taskWork('T-1', { 'a.num': '1' });
    await taskWork('T-2', { 'b.num': '2' });
    await taskWork('T-3', { 'c.num': '3' });
    const release = path.join(checksDir, 'release');
    const q = queue({ gateConfigs: [gate(`WAIT_FOR=3 RELEASE=${release}`)] });
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, id);
    const first = q.processNext();
    // while the three checks run (held until the release), T-2 is cancelled: its check stops, T-3 is rebuilt on main + T-1
    for (let i = 0; i < 400 && (await fs.readdir(checksDir)).length < 3; i++) await new Promise((r) => setTimeout(r, 50));
    q.cancel('T-2', 'cancelled by the person');
    assert.deepEqual(await releaseAndDrain(q, release, first), [
      ['T-1', 'merged'],
      ['T-3', 'merged'],
    ]);
    assert.ok(!ws.git('ls-tree', '--name-only', 'main').split('\n').includes('b.num'));
    assert.ok(events.some((e) => e.type === 'merge' && e.taskId === 'T-3' && /rebuilt without T-2/.test(e.detail ?? '')));
  });

  it('the target moved by the user during the checks: the chain is built again on the new tip, nothing lands on the old one', async () => {
    await taskWork('T-1', { 'a.num': '1' });
    await taskWork('T-2', { 'b.num': '2' });
    const release = path.join(checksDir, 'release');
    const q = queue({ gateConfigs: [gate(`WAIT_FOR=2 RELEASE=${release}`)] });
    q.enqueue('T-1', 'One');
    q.enqueue('T-2', 'Two');
    const first = q.processNext();
    for (let i = 0; i < 400 && (await fs.readdir(checksDir)).length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    await fs.writeFile(ws.path('user.txt'), 'mine\n');
    ws.git('add', 'user.txt');
    ws.git('commit', '-q', '-m', 'user commit');
    await fs.writeFile(release, '');
    const outcomes = [await first, ...(await drain(q))].filter((o) => o !== undefined);
    assert.deepEqual(
      outcomes.map((o) => [o.taskId, o.state]),
      [
        ['T-1', 'merged'],
        ['T-2', 'merged'],
      ],
    );
    assert.deepEqual(ws.git('log', '--format=%s', 'main').split('\n'), ['ralph(T-2): Two', 'ralph(T-1): One', 'user commit', 'initial']);
    assert.ok(events.some((e) => e.type === 'merge' && /main moved during the check; the chain is built again/.test(e.detail ?? '')));
    await assertGreenHistory();
  });
});
