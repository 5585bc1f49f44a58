import assert from 'node:assert/strict';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { assertGreenAtEveryCommit } from '../helpers/greenHistory';
import { eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

/** Green while the *.num files add up to at most 10. */
const CHECK_JS = `const fs = require('fs');
const total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
console.log('total ' + total + ' ok');
`;
const GATES = [{ name: 'check', command: 'node check.js', kind: 'custom' as const, required: true }];

/**
 * A scripted agent for every task: it writes the file its prompt names (`WRITE <file> <<content>>`)
 * and calls ralph_complete. Told that its gates fail (`exceeds 10`), it writes `1` instead: the
 * agent that says COMPLETE while its own suite is red, then mends it.
 */
const agent: Step = (request: RecordedRequest) => {
  const text = requestText(request);
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no WRITE instruction: ${text.slice(0, 200)}`);
  const last = (request.body?.messages ?? []).at(-1);
  if (last?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${match[1]}`, promiseEvidence: `${match[1]} written` } }] };
  const content = /exceeds 10/.test(text) ? '1' : match[2];
  return { toolCalls: [{ name: 'write_file', arguments: { path: match[1], content } }] };
};

/**
 * `merge.checkAhead` (default on) in the default parallel run, real git and a scripted model:
 * a COMPLETE is checked on its merged result while the task's own gates run; a COMPLETE its
 * loop does not accept (its own suite red) is taken back and never lands.
 */
describe('parallel run: merged checks ahead of the task gates (real git, scripted model)', function () {
  let h: LoopHarness;
  let project: string;
  afterEach(async () => h?.cleanup());

  async function setUp(merge: Record<string, unknown> = {}): Promise<void> {
    h = await makeLoopHarness(Array.from({ length: 30 }, () => agent));
    await h.configure({ loop: { maxParallel: 3, maxIterations: 4 }, gates: GATES, merge });
    await h.ws.write('check.js', CHECK_JS);
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a check');
    project = h.ws.git('rev-parse', 'HEAD');
    await addWriteTask('T-001', 'a.num', '2');
    await addWriteTask('T-002', 'big.num', '11'); // red in its own worktree: its first COMPLETE is not accepted
    await addWriteTask('T-003', 'c.num', '3');
  }

  const addWriteTask = (id: string, file: string, content: string) =>
    h.addTask({ id, title: `Write ${file}`, prompt: `WRITE ${file} <<${content}>>`, promise: `${file} holds the content` });

  /** The invariant: the required gate passes on every commit of main since the project had its check. */
  const assertMainGreenSinceProject = () =>
    assertGreenAtEveryCommit(h.ws, 'node check.js', [project, ...h.ws.git('rev-list', `${project}..main`).split('\n').filter(Boolean)]);

  const merges = (id: string) => eventsOf(h.events, 'merge').filter((e) => e.taskId === id);

  it('a COMPLETE whose own gates are red is taken back, never lands; the others land; main green at every commit', async () => {
    await setUp();
    const summary = await h.runner().run();
    assert.deepEqual(summary.results.map((r) => [r.taskId, r.status]).sort(), [
      ['T-001', 'done'],
      ['T-002', 'done'],
      ['T-003', 'done'],
    ]);
    assert.equal(await h.ws.read('big.num'), '1', 'the mended work landed, never the red one');
    const t2 = merges('T-002');
    assert.ok(
      t2.some((e) => e.provisional),
      'its first COMPLETE was checked ahead of its gates',
    );
    const taken = t2.find((e) => e.state === 'failed');
    assert.ok(taken, 'and taken back when its loop did not accept it');
    assert.match(taken.detail ?? '', /taken back: its loop did not accept COMPLETE/);
    assert.equal(t2.find((e) => e.state === 'merged')?.attempts, 1, 'the claim taken back is not an attempt');
    for (const id of ['T-001', 'T-003'])
      assert.ok(
        merges(id).some((e) => e.provisional),
        `${id} was checked ahead of its own gates`,
      );
    // done only once merged, and the merge never before its loop accepted COMPLETE
    for (const id of ['T-001', 'T-002', 'T-003']) {
      const mergedAt = h.events.findIndex((e) => e.type === 'merge' && e.taskId === id && e.state === 'merged');
      const gates = h.events.map((e, i) => (e.type === 'gate.finished' && e.taskId === id && e.iteration !== undefined ? i : -1));
      const lastGate = Math.max(...gates);
      assert.ok(lastGate >= 0 && mergedAt > lastGate, `${id} landed only after its own gates passed`);
    }
    await assertMainGreenSinceProject();
  });

  it('merge.checkAhead false: a task joins the queue only after its own gates passed', async () => {
    await setUp({ checkAhead: false });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done', 'done'],
    );
    assert.ok(!eventsOf(h.events, 'merge').some((e) => e.provisional), 'nothing checked ahead');
    assert.ok(!eventsOf(h.events, 'merge').some((e) => e.state === 'failed'), 'nothing taken back');
    await assertMainGreenSinceProject();
  });
});
