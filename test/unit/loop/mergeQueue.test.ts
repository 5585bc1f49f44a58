import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../../../src/core/config/schema';
import type { RalphEvent, RalphEventBody } from '../../../src/core/events';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { MergeQueue } from '../../../src/core/loop/merge/mergeQueue';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { assertGreenAtEveryCommit } from '../helpers/greenHistory';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** Green while the numbers in the *.num files add up to at most 10: each task alone can be green, two together red. */
const CHECK_JS = `const fs = require('fs');
const total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
if (fs.readFileSync('shared.txt', 'utf8').includes('<<<<<<<')) { console.error('conflict marker'); process.exit(2); }
if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
console.log('total ' + total + ' ok');
`;
const GATES: GateConfig[] = [
  { name: 'check', command: 'node check.js', kind: 'custom', required: true },
  { name: 'advisory', command: 'exit 1', kind: 'lint', required: false },
];

describe('MergeQueue (real git, real worktrees, real gate processes)', () => {
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let events: RalphEvent[];
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'check.js': CHECK_JS, 'shared.txt': 'line one\nline two\nline three\n' } });
    wt = new WorktreeManager(ws.dir);
    events = [];
  });
  afterEach(async () => ws.cleanup());

  function queue(overrides: Partial<ConstructorParameters<typeof MergeQueue>[0]> = {}): MergeQueue {
    let seq = 0;
    const emit = (body: RalphEventBody) => void events.push({ ...body, runId: 'r', seq: ++seq, time: '' } as RalphEvent);
    return new MergeQueue({
      worktrees: wt,
      gates: new ProcessGateRunner(new NodeCommandRunner()),
      gateConfigs: GATES,
      target: 'main',
      strategy: 'squash',
      emit,
      ...overrides,
    });
  }

  /** A task's agent at work: its worktree from the current tip, files written and committed there. */
  async function taskWork(taskId: string, files: Record<string, string>, commits = 1): Promise<string> {
    const { path: dir } = await wt.create(taskId, 'main');
    const entries = Object.entries(files);
    for (let i = 0; i < commits; i++) {
      for (const [rel, content] of entries) await fs.writeFile(path.join(dir, rel), i === commits - 1 ? content : `draft ${i}\n`);
      ws.git('-C', dir, 'add', '-A');
      ws.git('-C', dir, 'commit', '-q', '-m', `ralph(${taskId}): iteration ${i + 1}`);
    }
    return dir;
  }

  /** Runs the gate on every commit of main (in a scratch worktree): the invariant "green at every commit". */
  const assertGreenHistory = () => assertGreenAtEveryCommit(ws);

  it('merges two tasks on different files in order; one commit each, the target green at every commit, the user tree follows', async () => {
    await taskWork('T-001', { 'a.num': '3' }, 2);
    await taskWork('T-002', { 'b.num': '4' });
    const q = queue();
    q.enqueue('T-001', 'Add a');
    q.enqueue('T-002', 'Add b');
    const first = await q.processNext();
    const second = await q.processNext();
    assert.equal(first?.state, 'merged');
    assert.equal(second?.state, 'merged');
    assert.equal(await q.processNext(), undefined);
    const log = ws.git('log', '--format=%s', 'main').split('\n');
    assert.deepEqual(
      log,
      ['ralph(T-002): Add b', 'ralph(T-001): Add a', 'initial'],
      'one squashed commit per task, in queue order, linear',
    );
    assert.equal(ws.git('rev-parse', 'main'), second?.commit);
    assert.match(ws.git('log', '-1', '--format=%B', 'main'), /Ralph-Task: T-002\nRalph-Branch-Tip: [0-9a-f]{40}/);
    // the user's tree had main checked out and was clean: it followed both merges
    assert.equal(await ws.read('a.num'), '3');
    assert.equal(await ws.read('b.num'), '4');
    assert.equal(ws.git('status', '--porcelain'), '');
    await assertGreenHistory();
    // the merged check ran the required gate only, in the merge worktree
    const gates = events.filter((e) => e.type === 'gate.finished');
    assert.deepEqual(
      gates.map((e) => (e.type === 'gate.finished' ? [e.taskId, e.gate, e.passed] : [])),
      [
        ['T-001', 'check', true],
        ['T-002', 'check', true],
      ],
    );
    const states = events.filter((e) => e.type === 'merge' && e.taskId === 'T-001').map((e) => (e.type === 'merge' ? e.state : ''));
    // (a second `checking` says its prefix passed: it lands once it is the chain's head)
    assert.deepEqual(
      states.filter((s, i) => s !== states[i - 1]),
      ['queued', 'merging', 'checking', 'merged'],
    );
    // never merged twice: not by the state machine, not on a fresh queue after a crash (trailer found)
    assert.throws(() => q.enqueue('T-001', 'Add a'), /never merged twice/);
    const afterCrash = queue();
    afterCrash.enqueue('T-002', 'Add b');
    const again = await afterCrash.processNext();
    assert.equal(again?.state, 'merged');
    assert.match(again?.detail ?? '', /already on main/);
    assert.equal(ws.git('rev-list', '--count', 'main'), '3', 'no second commit for T-002');
  });

  it('two tasks editing the same line: the second conflicts, the target is untouched, the conflict is named with its hunk', async () => {
    await taskWork('T-001', { 'shared.txt': 'line one\nline TWO by T-001\nline three\n' });
    await taskWork('T-002', { 'shared.txt': 'line one\nline 2 by T-002\nline three\n' });
    const q = queue();
    q.enqueue('T-001', 'First');
    q.enqueue('T-002', 'Second');
    assert.equal((await q.processNext())?.state, 'merged');
    const tipAfterFirst = ws.git('rev-parse', 'main');
    const conflict = await q.processNext();
    assert.equal(conflict?.state, 'conflict');
    assert.deepEqual(conflict?.files, ['shared.txt']);
    assert.match(
      conflict?.hunks?.[0].text ?? '',
      /@@ line 2\n<<<<<<< [^\n]*\nline TWO by T-001\n=======\nline 2 by T-002\n>>>>>>> ralph\/T-002/,
    );
    assert.equal(ws.git('rev-parse', 'main'), tipAfterFirst, 'nothing of the conflicting merge reached the target');
    assert.equal(await ws.read('shared.txt'), 'line one\nline TWO by T-001\nline three\n');
    assert.throws(
      () => ws.git('grep', '-n', '-E', '^(<<<<<<<|>>>>>>>) ', 'main'),
      'no conflict marker on the target (git grep finds none)',
    );
    assert.equal(ws.git('status', '--porcelain'), '');
    // the merge worktree is left clean for the next task
    assert.equal(ws.git('-C', ws.path('.ralph', 'worktrees', '_merge'), 'status', '--porcelain'), '');
    await assertGreenHistory();
  });

  it('two tasks each green alone and red together: the second is not merged, the failure is reported', async () => {
    const a = await taskWork('T-001', { 'a.num': '6' });
    const b = await taskWork('T-002', { 'b.num': '6' });
    for (const dir of [a, b])
      assert.equal(
        (await new NodeCommandRunner().run({ command: 'node check.js', cwd: dir, timeoutMs: 20000, maxOutputChars: 2000 })).exitCode,
        0,
        'green alone',
      );
    const q = queue();
    q.enqueue('T-001', 'Six in a');
    q.enqueue('T-002', 'Six in b');
    assert.equal((await q.processNext())?.state, 'merged');
    const tip = ws.git('rev-parse', 'main');
    const red = await q.processNext();
    assert.equal(red?.state, 'failed');
    assert.match(red?.detail ?? '', /required gates fail on the merged result: check/);
    assert.deepEqual(
      red?.gates?.map((g) => [g.name, g.passed]),
      [['check', false]],
    );
    assert.ok(
      red?.feedback?.some((f) => /total 12 exceeds 10/.test(f)),
      `feedback names the failure: ${JSON.stringify(red?.feedback)}`,
    );
    assert.equal(ws.git('rev-parse', 'main'), tip, 'never merged red');
    assert.equal(ws.exists('b.num'), false);
    await assertGreenHistory();
  });

  it('waits (and says why) while the user has uncommitted changes to a file the merge touches; never overwrites them', async () => {
    await taskWork('T-001', { 'a.num': '2', 'shared.txt': 'line one\nchanged by the task\nline three\n' });
    await ws.write('shared.txt', 'line one\nthe user is editing this\nline three\n');
    await ws.write('unrelated.txt', 'user notes\n');
    const q = queue();
    q.enqueue('T-001', 'Touch shared');
    const tip = ws.git('rev-parse', 'main');
    const waiting = await q.processNext();
    assert.equal(waiting?.state, 'waiting');
    assert.deepEqual(waiting?.files, ['shared.txt']);
    assert.match(waiting?.detail ?? '', /uncommitted changes .* shared\.txt would be overwritten.*never/);
    assert.equal(ws.git('rev-parse', 'main'), tip);
    assert.equal(await ws.read('shared.txt'), 'line one\nthe user is editing this\nline three\n');
    assert.equal(ws.git('stash', 'list'), '', 'nothing stashed');
    // the user commits their edit elsewhere in the file… here: reverts it; the merge then goes through
    ws.git('checkout', '--', 'shared.txt');
    const merged = await q.processNext();
    assert.equal(merged?.state, 'merged');
    assert.equal(await ws.read('shared.txt'), 'line one\nchanged by the task\nline three\n');
    assert.equal(await ws.read('unrelated.txt'), 'user notes\n', 'unrelated user work carried along');
    assert.equal(ws.git('status', '--porcelain'), '?? unrelated.txt');
  });

  it('re-merges onto the new tip when the user commits to the target during the check', async () => {
    await taskWork('T-001', { 'a.num': '1' });
    // a gate that commits to main while it runs: the target moves under the check
    const sneaky: GateConfig[] = [
      {
        name: 'check',
        command: `node check.js && git -C "${ws.dir}" commit -q --allow-empty -m "user commit" 2>/dev/null; true`,
        kind: 'custom',
        required: true,
      },
    ];
    let calls = 0;
    const runner = new ProcessGateRunner(new NodeCommandRunner());
    const q = queue({
      gateConfigs: sneaky,
      gates: { run: (req) => (calls++ === 0 ? runner.run(req) : runner.run({ ...req, gate: GATES[0] })) },
    });
    q.enqueue('T-001', 'One');
    const out = await q.processNext();
    assert.equal(out?.state, 'merged');
    assert.equal(calls, 2, 'checked again on the new tip');
    assert.deepEqual(ws.git('log', '--format=%s', 'main').split('\n'), ['ralph(T-001): One', 'user commit', 'initial']);
  });

  it('the merged check finds the linked dependencies, and the queue resets its worktree without touching them', async () => {
    await ws.write('node_modules/limit/index.js', 'module.exports = 10;\n');
    await ws.write('.gitignore', 'node_modules/\n');
    ws.git('add', '.gitignore');
    ws.git('commit', '-q', '-m', 'ignore deps');
    wt = new WorktreeManager(ws.dir, ['node_modules']);
    await taskWork('T-001', { 'a.num': '2' });
    const withDep: GateConfig[] = [
      { name: 'dep', command: 'node -e "process.exit(require(\'limit\') === 10 ? 0 : 1)"', kind: 'custom', required: true },
    ];
    const q = queue({ gateConfigs: withDep });
    await taskWork('T-002', { 'b.num': '3' });
    q.enqueue('T-001', 'Uses the dep');
    q.enqueue('T-002', 'Uses it too');
    assert.equal((await q.processNext())?.state, 'merged');
    assert.equal((await fs.lstat(path.join(ws.dir, '.ralph', 'worktrees', '_merge', 'node_modules'))).isSymbolicLink(), true);
    // the second merge cleans the merge worktree (clean -ffdx) with the link in place: the link goes, never what it points to
    assert.equal((await q.processNext())?.state, 'merged');
    assert.equal(await ws.read('node_modules/limit/index.js'), 'module.exports = 10;\n');
    assert.equal(ws.git('status', '--porcelain'), '');
  });

  it('merge strategy keeps the iteration commits behind a merge commit whose first-parent chain is green', async () => {
    await taskWork('T-001', { 'a.num': '3' }, 3);
    const q = queue({ strategy: 'merge' });
    q.enqueue('T-001', 'Three');
    assert.equal((await q.processNext())?.state, 'merged');
    assert.deepEqual(ws.git('log', '--first-parent', '--format=%s', 'main').split('\n'), ['ralph(T-001): Three', 'initial']);
    assert.equal(ws.git('rev-list', '--count', 'main'), '5');
    assert.equal(ws.git('rev-list', '--parents', '-n1', 'main').split(' ').length, 3, 'a merge commit');
  });
});
