/**
 * Manual review (issue 21): with `merge.review: "manual"` a task whose merged check passed waits
 * as `review` and nothing reaches the target; Approve lands it with no run going (as checked, or
 * re-checked when the target moved), Request Changes sends it back to its agent with the
 * feedback pinned, Reject drops its branch and worktree. And a merge that waits on the person's
 * own files waits at most `merge.waitForUserMinutes`. Real git worktrees, the scripted server.
 */
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { mergeCheckGates } from '../../../src/core/review/mergeCheckGates';
import { ReviewDesk } from '../../../src/core/review/reviewDesk';
import { reviewRef } from '../../../src/core/review/reviewHolds';
import { unifiedDiff } from '../../../src/core/review/taskChanges';
import { parseConfig } from '../../../src/core/config/load';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { SecretRedactor } from '../../../src/core/commands/secrets';
import type { RalphEvent } from '../../../src/core/events';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

/** Each task's prompt says which file to write: `WRITE <file> <<content>>`; after the tool result it completes. */
const agent: Step = (request: RecordedRequest) => {
  const messages = request.body?.messages ?? [];
  const text = requestText({ body: { messages: messages.filter((m) => m.role === 'user') } });
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no instruction in: ${text.slice(0, 200)}`);
  if (messages.at(-1)?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${match[1]}`, promiseEvidence: 'written' } }] };
  // the review's feedback, once pinned, changes what is written
  const content = /CHANGES REQUESTED: (\S+)/.exec(text)?.[1] ?? match[2];
  return { toolCalls: [{ name: 'write_file', arguments: { path: match[1], content } }] };
};

describe("manual review and the bounded wait on the person's files", function () {
  this.timeout(180_000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  const GATE = { name: 'check', command: 'node -e "process.exit(0)"', kind: 'custom', required: true } as const;

  async function setUp(extra: Record<string, unknown> = {}): Promise<void> {
    h = await makeLoopHarness(Array.from({ length: 20 }, () => agent));
    await h.configure({ loop: { maxParallel: 2, maxIterations: 4 }, merge: { review: 'manual' }, gates: [GATE], ...extra });
  }

  /** The review desk as the CLI builds it, on the harness's configuration. */
  async function desk(events: RalphEvent[] = []) {
    const config = parseConfig(JSON.parse(await fs.readFile(h.paths.config, 'utf8')));
    const checkpoints = new CheckpointStore(h.paths);
    const emit = (body: Parameters<typeof eventsOf>[0][number] | object) =>
      events.push({ ...body, runId: 'review', seq: events.length + 1, time: '' } as RalphEvent);
    return new ReviewDesk({
      paths: h.paths,
      config,
      store: h.store,
      checkpoints,
      emit,
      gates: (merge) =>
        mergeCheckGates({ paths: h.paths, config, commands: new NodeCommandRunner(), redactor: new SecretRedactor(), emit }, merge),
    });
  }

  it('holds the checked result as `review` (nothing on main), and Approve with no run going lands it as checked', async () => {
    await setUp();
    await h.addTask({ id: 'R-1', title: 'Write a', prompt: 'WRITE a.txt <<alpha>>', promise: 'a.txt' });
    const before = h.ws.git('rev-parse', 'main');
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [['R-1', 'review']],
    );
    assert.deepEqual(summary.outcome?.reviews, ['R-1']);
    assert.equal(h.ws.git('rev-parse', 'main'), before, 'nothing landed');
    assert.equal(h.ws.exists('a.txt'), false, 'the user tree is untouched');
    const task = await h.store.get('R-1');
    assert.equal(task.status, 'review');
    const cp = await new CheckpointStore(h.paths).load('R-1');
    assert.equal(cp?.review?.base, before);
    assert.deepEqual(
      cp?.review?.gates.map((g) => [g.name, g.passed]),
      [['check', true]],
    );
    assert.equal(h.ws.git('rev-parse', reviewRef('R-1')), cp?.review?.result, 'a ref keeps the held commit');
    const merge = eventsOf(h.events, 'merge')
      .filter((e) => e.taskId === 'R-1')
      .map((e) => e.state);
    assert.deepEqual(merge.slice(-1), ['review']);

    const changes = await (await desk()).changes('R-1');
    assert.equal(changes.kind, 'would-land');
    // the agent's progress notes land with its work
    assert.deepEqual(changes.files, [
      { path: '.ralph/progress/R-1.md', status: 'added' },
      { path: 'a.txt', status: 'added' },
    ]);
    assert.match(await unifiedDiff(h.ws.dir, changes), /\+\+\+ b\/a\.txt\n@@ -0,0 \+1 @@\n\+alpha/);

    const outcome = await (await desk()).approve('R-1');
    assert.equal(outcome.kind, 'landed', JSON.stringify(outcome));
    assert.equal(h.ws.git('rev-parse', 'main'), cp?.review?.result, 'landed exactly the checked result');
    assert.equal((await h.store.get('R-1')).status, 'done');
    assert.equal(await h.ws.read('a.txt'), 'alpha', 'the user tree followed');
    assert.equal(h.ws.exists('.ralph/worktrees/R-1'), false, 'its worktree is gone');
    assert.throws(() => h.ws.git('rev-parse', '--verify', reviewRef('R-1')), 'the review ref is gone');
    const landed = await (await desk()).changes('R-1');
    assert.equal(landed.kind, 'landed');
    assert.deepEqual(
      landed.files.map((f) => f.path),
      ['.ralph/progress/R-1.md', 'a.txt'],
    );
  });

  it('Approve after the target moved re-runs the check on the new tip, then lands', async () => {
    await setUp();
    await h.addTask({ id: 'R-2', title: 'Write b', prompt: 'WRITE b.txt <<beta>>', promise: 'b.txt' });
    await h.runner().run();
    await h.ws.write('mine.txt', "the person's own commit\n");
    h.ws.git('add', 'mine.txt');
    h.ws.git('commit', '-q', '-m', 'my own work');
    const moved = h.ws.git('rev-parse', 'main');
    const shown = await (await desk()).changes('R-2');
    assert.equal(shown.base, moved, 'shown against the current tip');
    assert.match(shown.note ?? '', /moved since the check/);
    const events: RalphEvent[] = [];
    const outcome = await (await desk(events)).approve('R-2');
    assert.equal(outcome.kind, 'landed', JSON.stringify(outcome));
    assert.ok(
      eventsOf(events, 'gate.finished').some((e) => e.gate === 'check' && e.passed),
      're-checked on the new tip',
    );
    assert.equal(h.ws.git('rev-parse', 'main~1'), moved, "on top of the person's commit");
    assert.equal(await h.ws.read('b.txt'), 'beta');
  });

  it('Request Changes sends it back with the feedback pinned; the next run resumes it in its worktree and it waits for review again', async () => {
    await setUp();
    await h.addTask({ id: 'R-3', title: 'Write c', prompt: 'WRITE c.txt <<gamma>>', promise: 'c.txt' });
    await h.runner().run();
    const back = await (
      await desk()
    ).requestChanges('R-3', 'CHANGES REQUESTED: GAMMA', [{ file: 'c.txt', line: 1, text: 'upper case please' }]);
    assert.equal(back.status, 'halted');
    assert.equal(back.questions?.at(-1)?.kind, 'review');
    assert.match(back.questions?.at(-1)?.answer ?? '', /CHANGES REQUESTED: GAMMA\nOn the diff:\n- c\.txt:1: upper case please/);
    const requestsBefore = chatRequests(h.server).length;
    const second = await h.runner().run();
    assert.deepEqual(
      second.results.map((r) => [r.taskId, r.status]),
      [['R-3', 'review']],
    );
    const resumed = chatRequests(h.server)[requestsBefore];
    assert.match(requestText(resumed), /Review of your finished work .*changes requested:\n\s+CHANGES REQUESTED: GAMMA/s);
    assert.match(requestText(resumed), /a person looked at your finished work and asked for changes/);
    assert.equal(
      eventsOf(h.events, 'worktree').find((e) => e.runId === second.runId && e.state === 'ready')?.created,
      false,
      'in its worktree',
    );
    assert.match(h.ws.git('show', `${reviewRef('R-3')}:c.txt`), /GAMMA/);
  });

  it('Reject drops the branch and the worktree; the task is cancelled and nothing landed', async () => {
    await setUp();
    await h.addTask({ id: 'R-4', title: 'Write d', prompt: 'WRITE d.txt <<delta>>', promise: 'd.txt' });
    const before = h.ws.git('rev-parse', 'main');
    await h.runner().run();
    const rejected = await (await desk()).reject('R-4');
    assert.equal(rejected.status, 'cancelled');
    assert.equal(h.ws.git('branch', '--list', 'ralph/R-4'), '');
    assert.equal(existsSync(h.ws.path('.ralph/worktrees/R-4')), false);
    assert.equal(h.ws.git('rev-parse', 'main'), before);
    await assert.rejects((await desk()).approve('R-4'), /only a task waiting for review/);
  });

  it("a merge waiting on the person's uncommitted file waits at most merge.waitForUserMinutes, then waits for them as `review`, files named", async () => {
    await setUp({ merge: { review: 'auto', waitForUserMinutes: 0.02 } });
    await h.addTask({ id: 'W-1', title: 'Write notes', prompt: 'WRITE notes.txt <<from the agent>>', promise: 'notes.txt' });
    await h.ws.write('notes.txt', 'my own notes, never committed\n');
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [['W-1', 'review']],
      'the run ended instead of retrying forever',
    );
    const task = await h.store.get('W-1');
    assert.match(task.blockedReason ?? '', /waited 0\.02 min \(merge\.waitForUserMinutes\) for your uncommitted changes to notes\.txt/);
    assert.equal(await h.ws.read('notes.txt'), 'my own notes, never committed\n', 'never overwritten');
    assert.ok(eventsOf(h.events, 'warning').some((w) => w.code === 'merge-waiting' && /notes\.txt/.test(w.message)));
    // once the person moved the file away, Approve lands the checked result
    await h.ws.write('notes.txt', '');
    h.ws.git('rm', '-q', '--cached', '--ignore-unmatch', 'notes.txt');
    await fs.rm(h.ws.path('notes.txt'));
    const outcome = await (await desk()).approve('W-1');
    assert.equal(outcome.kind, 'landed', JSON.stringify(outcome));
    assert.equal(await h.ws.read('notes.txt'), 'from the agent');
  });

  it("unattended, a merge meeting the person's untracked file ends its landing at once: checked, waiting to land, the file untouched; the next run lands it without the agent", async () => {
    // the default merge.waitForUserMinutes (30): an attended run would wait half an hour here
    await setUp({ merge: { review: 'auto' } });
    await h.addTask({ id: 'W-2', title: 'Write notes', prompt: 'WRITE notes.txt <<from the agent>>', promise: 'notes.txt' });
    const mine = Buffer.from([0x6d, 0x69, 0x6e, 0x65, 0x00, 0xff, 0x0a]);
    await fs.writeFile(h.ws.path('notes.txt'), mine);
    const before = h.ws.git('rev-parse', 'main');
    const summary = await h.runner({ unattended: true }).run();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status, r.waitsToLand]),
      [['W-2', 'in_progress', ['notes.txt']]],
    );
    assert.deepEqual(
      summary.outcome?.landing?.map((l) => [l.taskId, l.files]),
      [['W-2', ['notes.txt']]],
    );
    assert.deepEqual(await fs.readFile(h.ws.path('notes.txt')), mine, 'the file is byte-identical');
    assert.equal(h.ws.git('rev-parse', 'main'), before, 'nothing landed');
    const task = await h.store.get('W-2');
    assert.equal(task.status, 'in_progress', 'not failed, not a review: checked and waiting to land');
    assert.match(task.blockedReason ?? '', /^waits to land: your uncommitted changes to notes\.txt are in the way/);
    const cp = await new CheckpointStore(h.paths).load('W-2');
    assert.ok(cp?.review?.approvedAt, 'its checked result is kept, approved');
    assert.deepEqual(cp?.review?.files, ['notes.txt']);
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'landing-waits');
    assert.match(warning?.message ?? '', /notes\.txt.*ralph run --task W-2/s);
    assert.ok(!eventsOf(h.events, 'warning').some((w) => w.code === 'merge-waiting'), 'no wait was announced');

    // the person moves the file: the next run lands the checked result, the agent is not asked again
    const asked = chatRequests(h.server).length;
    await fs.rm(h.ws.path('notes.txt'));
    const next = await h.runner({ unattended: true }).run();
    assert.deepEqual(
      next.results.map((r) => [r.taskId, r.status]),
      [['W-2', 'done']],
    );
    assert.equal(chatRequests(h.server).length, asked, 'no model call: its agent did not run again');
    assert.equal(await h.ws.read('notes.txt'), 'from the agent');
    const landed = await h.store.get('W-2');
    assert.equal(landed.blockedReason, undefined);
    assert.equal((await new CheckpointStore(h.paths).load('W-2'))?.review, undefined, 'the hold is released once landed');
    assert.throws(() => h.ws.git('rev-parse', '--verify', '-q', reviewRef('W-2')), 'its ref is gone');
  });
});
