import assert from 'node:assert/strict';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

describe('a run-wide budget cap', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('halts only the running task and leaves the nine tasks that never started as todo', async () => {
    h = await makeLoopHarness([
      { content: 'working <ralph>PROGRESS:10</ralph>', usage: { prompt_tokens: 900, completion_tokens: 200 } },
      { content: 'never asked', usage: { prompt_tokens: 1, completion_tokens: 1 } },
    ]);
    await h.configure({ budget: { maxTokens: 1000 } });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push(await h.addTask({ title: `task ${i + 1}` }));

    const summary = await h.runner().run();

    const tasks = await h.store.list();
    const first = tasks.find((t) => t.id === ids[0])!;
    assert.equal(first.status, 'halted');
    assert.equal(first.iterations, 1);
    assert.match(
      first.blockedReason ?? '',
      /run token budget reached: 1100 of 1000 tokens used \(raise budget\.maxTokens in \.ralph\/config\.json\); state saved/,
    );
    const checkpoint = await new CheckpointStore(h.paths).load(ids[0]);
    assert.equal(checkpoint?.iteration, 1, 'its state is saved to resume from');
    const rest = tasks.filter((t) => t.id !== ids[0]);
    assert.equal(rest.length, 9);
    for (const task of rest) {
      assert.equal(task.status, 'todo', `${task.id} never started`);
      assert.equal(task.iterations, 0);
      assert.equal(await new CheckpointStore(h.paths).load(task.id), undefined);
    }
    assert.deepEqual(
      summary.results.map((r) => `${r.taskId}:${r.status}`),
      [`${ids[0]}:halted`],
    );
    assert.match(summary.reason, /budget\.maxTokens in \.ralph\/config\.json/);
    assert.match(summary.reason, /9 tasks not started stay todo/);
    assert.equal(eventsOf(h.events, 'task.started').length, 1);
    assert.equal(h.server.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 1, 'no model call past the cap');
  });

  it('a task cap halts that task only; the next task still runs', async () => {
    h = await makeLoopHarness([
      { content: 'working <ralph>PROGRESS:10</ralph>', usage: { prompt_tokens: 900, completion_tokens: 200 } },
      {
        toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }],
        usage: { prompt_tokens: 10, completion_tokens: 10 },
      },
    ]);
    await h.configure({ budget: { taskMaxTokens: 1000 } });
    const a = await h.addTask({ title: 'a' });
    const b = await h.addTask({ title: 'b' });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => `${r.taskId}:${r.status}`),
      [`${a}:halted`, `${b}:done`],
    );
    assert.match((await h.store.get(a)).blockedReason ?? '', /budget\.taskMaxTokens/);
  });
});
