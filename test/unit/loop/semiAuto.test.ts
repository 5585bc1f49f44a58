/**
 * Semi-auto mode (seed 004): a task that ends BLOCKED frees its slot and the run waits for the
 * person before it starts another task; the other agents work on meanwhile. Autopilot mode goes
 * straight on. Real git worktrees, the scripted model server, the core's own runner.
 */
import assert from 'node:assert/strict';
import type { SafeguardPrompt, SafeguardWarning } from '../../../src/core/ports';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

/** Every task's prompt says what its agent does: `BLOCK`, or `WRITE <file> <<content>>`. */
function agent(holdFor?: () => Promise<void>): Step {
  return async (request: RecordedRequest) => {
    const messages = request.body?.messages ?? [];
    const user = messages.find((m) => m.role === 'user');
    const text = typeof user?.content === 'string' ? user.content : '';
    if (/\bBLOCK\b/.test(text)) return { content: 'I cannot go on. <ralph>BLOCKED:needs an API key</ralph>' };
    const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
    if (!match) throw new Error(`no instruction in: ${text.slice(0, 200)}`);
    // T-002 stays at work until the hold was asked: otherwise its slot could go to T-003 first
    if (holdFor && match[1] === 'b.txt') await holdFor();
    if (messages.at(-1)?.role === 'tool')
      return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${match[1]}`, promiseEvidence: 'written' } }] };
    return { toolCalls: [{ name: 'write_file', arguments: { path: match[1], content: match[2] } }] };
  };
}

describe('semi-auto mode: the run waits for the person after a task ends blocked', function () {
  this.timeout(120000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  async function setUp(mode: 'autopilot' | 'semi-auto', maxParallel: number): Promise<void> {
    let held: () => void = () => undefined;
    const asked = new Promise<void>((resolve) => (held = resolve));
    h = await makeLoopHarness(Array.from({ length: 12 }, () => agent(mode === 'semi-auto' && maxParallel > 1 ? () => asked : undefined)));
    h.bus.subscribe((e) => {
      if (e.type === 'warning' && e.code === 'task-ended') held();
    });
    // T-002's held call waits as long as the person's answer takes: no request timeout cuts it short
    await h.configure({ loop: { maxParallel, maxIterations: 3, mode }, gates: [], llm: { requestTimeoutMs: 600_000 } });
    await h.addTask({ id: 'T-001', title: 'Blocks', prompt: 'BLOCK', promise: 'p', priority: 1 });
    await h.addTask({ id: 'T-002', title: 'Writes b', prompt: 'WRITE b.txt <<b>>', promise: 'p', priority: 2 });
    await h.addTask({ id: 'T-003', title: 'Writes c', prompt: 'WRITE c.txt <<c>>', promise: 'p', priority: 3 });
  }

  /** Answers `task-ended` with `answer`, noting what had started by then; other warnings go on. */
  function person(answer: 'continue' | 'stop', asked: { warning: SafeguardWarning; startedBefore: string[] }[]): SafeguardPrompt {
    return {
      decide: async (warning) => {
        if (warning.code !== 'task-ended') return { action: 'continue' };
        asked.push({ warning, startedBefore: eventsOf(h.events, 'task.started').map((e) => e.taskId) });
        return { action: answer };
      },
    };
  }

  it('parallel: no new agent starts until the person answers Continue; then the rest runs', async () => {
    await setUp('semi-auto', 2);
    const asked: { warning: SafeguardWarning; startedBefore: string[] }[] = [];
    const summary = await h.runner({ safeguards: person('continue', asked) }).run();
    assert.equal(asked.length, 1, 'asked once, when T-001 ended blocked');
    assert.equal(asked[0].warning.taskId, 'T-001');
    assert.match(asked[0].warning.message, /T-001 ended blocked .*semi-auto mode waits for you/);
    assert.ok(!asked[0].startedBefore.includes('T-003'), 'T-003 did not start before the answer');
    const statuses = Object.fromEntries(summary.results.map((r) => [r.taskId, r.status]));
    assert.deepEqual(statuses, { 'T-001': 'blocked', 'T-002': 'done', 'T-003': 'done' });
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'task-ended');
    assert.equal(warning?.taskId, 'T-001');
    assert.deepEqual(
      eventsOf(h.events, 'warning.answered')
        .filter((w) => w.code === 'task-ended')
        .map((w) => w.action),
      ['continue'],
    );
  });

  it('parallel: Stop at the hold lets running agents finish and starts no other task', async () => {
    await setUp('semi-auto', 2);
    const asked: { warning: SafeguardWarning; startedBefore: string[] }[] = [];
    const summary = await h.runner({ safeguards: person('stop', asked) }).run();
    assert.equal(asked.length, 1);
    const statuses = Object.fromEntries(summary.results.map((r) => [r.taskId, r.status]));
    assert.equal(statuses['T-001'], 'blocked');
    assert.equal(statuses['T-002'], 'done', 'the agent already at work finished and was merged');
    assert.equal((await h.store.get('T-003')).status, 'todo', 'never started');
    assert.ok(!eventsOf(h.events, 'task.started').some((e) => e.taskId === 'T-003'));
    assert.ok(!eventsOf(h.events, 'warning').some((w) => w.code === 'autopilot-stalled'), 'a stop at the hold is not a stall');
  });

  it('one at a time in the workspace: Stop at the hold ends the run with the reason', async () => {
    await setUp('semi-auto', 1);
    const asked: { warning: SafeguardWarning; startedBefore: string[] }[] = [];
    const summary = await h.runner({ safeguards: person('stop', asked) }).run();
    assert.equal(asked.length, 1);
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [['T-001', 'blocked']],
    );
    assert.match(summary.reason, /stopped after T-001 ended blocked \(semi-auto\)/);
    assert.equal((await h.store.get('T-002')).status, 'todo');
  });

  it('autopilot mode never waits: the blocked task frees its slot and the next one starts', async () => {
    await setUp('autopilot', 2);
    const asked: { warning: SafeguardWarning; startedBefore: string[] }[] = [];
    const summary = await h.runner({ safeguards: person('stop', asked) }).run();
    assert.equal(asked.length, 0);
    assert.deepEqual(Object.fromEntries(summary.results.map((r) => [r.taskId, r.status])), {
      'T-001': 'blocked',
      'T-002': 'done',
      'T-003': 'done',
    });
    // the blocked task's worktree is kept (its path for the card and the tree), announced as such
    const kept = eventsOf(h.events, 'worktree')
      .filter((w) => w.taskId === 'T-001')
      .map((w) => w.state);
    assert.deepEqual(kept, ['ready', 'kept']);
    assert.ok(
      eventsOf(h.events, 'worktree').some((w) => w.taskId === 'T-002' && w.state === 'removed'),
      'merged: removed',
    );
    const merged = eventsOf(h.events, 'merge').find((m) => m.taskId === 'T-002' && m.state === 'merged');
    assert.equal(merged?.target, 'main');
    assert.equal(merged?.title, 'Writes b');
  });
});
