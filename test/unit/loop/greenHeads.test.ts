import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphEvent } from '../../../src/core/events';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { greenHeadsFrom } from '../../../src/core/loop/merge/greenHeads';
import type { MergeEntry } from '../../../src/core/loop/merge/mergeChain';
import type { Job, JobResult } from '../../../src/core/loop/merge/mergeChecks';
import type { MergeQueue, MergeOutcome } from '../../../src/core/loop/merge/mergeQueue';
import { chainQueue, taskWork as commitWork } from '../helpers/chainQueue';
import { assertGreenAtEveryCommit } from '../helpers/greenHistory';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * The merged check: green while the numbers in the *.num files add up to at most 10. The check
 * of the first prefix (one *.num file: main + the first task) waits (bounded) for the RELEASE
 * file, so the test decides that the prefixes behind it are green before the head is.
 */
const CHECK_JS = `const fs = require('fs');
const nums = fs.readdirSync('.').filter((f) => f.endsWith('.num'));
const until = Date.now() + 20000;
const nap = () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
while (process.env.RELEASE && nums.length === 1 && !fs.existsSync(process.env.RELEASE) && Date.now() < until) nap();
const total = nums.reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
console.log('total ' + total + ' ok');
`;

describe('green heads land together (real git, concurrent merged checks)', () => {
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let events: RalphEvent[];
  let release: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'check.js': CHECK_JS } });
    wt = new WorktreeManager(ws.dir);
    events = [];
    release = path.join(await ws.outsideDir(), 'release');
  });
  afterEach(async () => ws.cleanup());

  const queue = () =>
    chainQueue(wt, events, { name: 'check', command: `RELEASE=${release} node check.js`, kind: 'custom', required: true });
  const taskWork = (taskId: string, files: Record<string, string>) => commitWork(ws, wt, taskId, files);

  /** The queue's first step, taken once the prefixes behind the head are green (the head's check waits for `release` until then). */
  async function headDecidedLast(q: MergeQueue, behind: string[]): Promise<MergeOutcome | undefined> {
    const first = q.processNext();
    const green = () => behind.every((id) => events.some((e) => e.type === 'merge' && e.taskId === id && e.chain?.passed));
    for (let i = 0; i < 400 && !green(); i++) await new Promise((r) => setTimeout(r, 50));
    assert.ok(green(), `${behind.join(', ')} green before the head`);
    await fs.writeFile(release, '');
    return first;
  }

  async function rest(q: MergeQueue): Promise<MergeOutcome[]> {
    const out: MergeOutcome[] = [];
    for (let i = 0; i < 20 && q.pending; i++) {
      const o = await q.processNext();
      if (o) out.push(o);
      if (o?.state === 'waiting') break; // it waits for the person's files: asked again only later
    }
    await q.idle();
    return out;
  }

  /** T-1, T-2, T-3 (1, 2 and 3 in their *.num files) queued after `before`; the head decided once the two behind it are green. */
  async function threeQueued(before?: () => Promise<void>): Promise<(MergeOutcome | undefined)[]> {
    for (const id of ['T-1', 'T-2', 'T-3']) await taskWork(id, { [`${id}.num`]: id.slice(2) });
    await before?.();
    const q = queue();
    for (const id of ['T-1', 'T-2', 'T-3']) q.enqueue(id, `Add ${id}`);
    return [await headDecidedLast(q, ['T-2', 'T-3']), ...(await rest(q))];
  }

  const moves = () =>
    ws
      .git('reflog', 'show', '--format=%H %gs', 'refs/heads/main')
      .split('\n')
      .filter((l) => l.includes('ralph: merge queue'));
  const landedTrees = () =>
    events.filter((e) => e.type === 'merge' && e.state === 'merged').map((e) => (e.type === 'merge' ? e.commit : undefined));

  it('three heads green at once land in one step: each task its own checked commit, the target moved once, the user tree follows', async () => {
    const outcomes = await threeQueued();
    // handed out one a call, in chain order, as if they had landed one after another
    assert.deepEqual(
      outcomes.map((o) => [o?.taskId, o?.state]),
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
    // every commit the target gained is a prefix whose tree was checked, and the target moved once: to the last one
    assert.deepEqual(landedTrees(), ws.git('rev-list', '--reverse', 'main').split('\n').slice(1));
    assert.deepEqual(
      outcomes.map((o) => o?.commit),
      landedTrees(),
    );
    assert.equal(moves().length, 1, moves().join('\n'));
    assert.equal(moves()[0].split(' ')[0], ws.git('rev-parse', 'main'));
    assert.deepEqual(
      new Set(events.filter((e) => e.type === 'gate.finished' && e.passed).map((e) => (e.type === 'gate.finished' ? e.taskId : ''))),
      new Set(['T-1', 'T-2', 'T-3']),
    );
    // the workspace (main checked out) followed: the three files are there, nothing uncommitted
    for (const id of ['T-1', 'T-2', 'T-3']) assert.ok(await fs.stat(ws.path(`${id}.num`)));
    assert.equal(ws.git('status', '--porcelain', '--untracked-files=no'), '');
    await assertGreenAtEveryCommit(ws);
  });

  it("the user has uncommitted changes to a later head's file: the heads land one by one up to it, that one waits, the change is kept", async () => {
    const outcomes = await threeQueued(() => fs.writeFile(ws.path('T-3.num'), 'the user is writing this\n'));
    assert.deepEqual(
      outcomes.map((o) => [o?.taskId, o?.state]),
      [
        ['T-1', 'merged'],
        ['T-2', 'merged'],
        ['T-3', 'waiting'],
      ],
    );
    assert.equal(await fs.readFile(ws.path('T-3.num'), 'utf8'), 'the user is writing this\n');
    assert.deepEqual(ws.git('log', '--format=%s', 'main').split('\n'), ['ralph(T-2): Add T-2', 'ralph(T-1): Add T-1', 'initial']);
    assert.deepEqual(landedTrees(), ws.git('rev-list', '--reverse', 'main').split('\n').slice(1));
    assert.equal(moves().length, 2, 'one move per head: the step together was refused');
  });
});

describe('greenHeadsFrom', () => {
  const entry = (taskId: string, pos: number, extra: Partial<MergeEntry> = {}): MergeEntry => ({
    taskId,
    title: taskId,
    state: 'checking',
    seq: pos,
    attempts: 1,
    pos,
    passed: true,
    ...extra,
  });
  const job = (pos: number, value: JobResult): Job => ({
    pos,
    abort: new AbortController(),
    done: Promise.resolve(value),
    value,
    settled: true,
  });
  const checked = (base: string, result: string, passed = true): JobResult => ({
    kind: 'checked',
    base,
    result,
    gates: [],
    passed,
    feedback: [],
    detail: '',
  });
  const head = { taskId: 'A', base: 'c0', result: 'c1', gates: [] };

  it('takes the green heads behind the head while each is built on the one before', () => {
    const chain = [entry('A', 1), entry('B', 2), entry('C', 3)];
    const jobs = new Map([
      ['A', job(1, checked('c0', 'c1'))],
      ['B', job(2, checked('c1', 'c2'))],
      ['C', job(3, checked('c2', 'c3'))],
    ]);
    assert.deepEqual(
      greenHeadsFrom(chain, jobs, head).map((h) => [h.taskId, h.base, h.result]),
      [
        ['A', 'c0', 'c1'],
        ['B', 'c1', 'c2'],
        ['C', 'c2', 'c3'],
      ],
    );
  });

  it('stops at the first that is not green, is held for review, is covered by a batch, is still checked, or sits on another commit', () => {
    const jobs = new Map([
      ['A', job(1, checked('c0', 'c1'))],
      ['B', job(2, checked('c1', 'c2'))],
      ['C', job(3, checked('c2', 'c3'))],
    ]);
    const stopsAtB = (b: MergeEntry, bJob?: Job) =>
      greenHeadsFrom([entry('A', 1), b, entry('C', 3)], bJob ? new Map([...jobs, ['B', bJob]]) : jobs, head).map((h) => h.taskId);
    assert.deepEqual(stopsAtB(entry('B', 2, { passed: undefined })), ['A']);
    assert.deepEqual(stopsAtB(entry('B', 2, { aside: true })), ['A']);
    assert.deepEqual(stopsAtB(entry('B', 2), job(2, checked('c1', 'c2', false))), ['A']);
    assert.deepEqual(stopsAtB(entry('B', 2), job(2, { kind: 'covered', base: 'c1', result: 'c2' })), ['A']);
    assert.deepEqual(stopsAtB(entry('B', 2), { ...job(2, checked('c1', 'c2')), value: undefined, settled: false }), ['A']);
    assert.deepEqual(stopsAtB(entry('B', 2), job(2, checked('cX', 'c2'))), ['A']);
    // a head that is not the chain's own first: nothing behind it is taken
    assert.deepEqual(
      greenHeadsFrom([entry('B', 2), entry('C', 3)], jobs, head).map((h) => h.taskId),
      ['A'],
    );
  });
});
