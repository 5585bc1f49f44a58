import assert from 'node:assert/strict';
import { buildIterationMessages, SYSTEM_PROMPT, taskBrief } from '../../../src/core/agent/context';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import type { Task } from '../../../src/core/tasks/schema';
import { promptText, type RecordedRequest } from '../../fixtures/scriptedServer';
import { chatRequests, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

const progress = { content: 'working <ralph>PROGRESS:50</ralph>' };
const complete = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'checked' } }] };

function commonPrefix(a: string, b: string): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

function userText(request: RecordedRequest): string {
  return String(request.body?.messages?.find((m) => m.role === 'user')?.content ?? '');
}

describe('a prompt providers can cache: the stable prefix', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it("buildIterationMessages: nothing volatile comes before the task's brief", () => {
    const task = { id: 'T-001', title: 'Fix login', type: 'bug', prompt: 'Fix it.', promise: 'tests pass' } as unknown as Task;
    const first = buildIterationMessages({
      task,
      iteration: 1,
      maxIterations: 5,
      progressFile: '.ralph/progress/T-001.md',
      progressNotes: '',
      previous: undefined,
      recentCommits: [],
    });
    const later = buildIterationMessages({
      task,
      iteration: 7,
      maxIterations: 9,
      progressFile: '.ralph/progress/T-001.md',
      progressNotes: 'did a thing',
      previous: {
        iteration: 6,
        startedAt: 'x',
        durationMs: 1,
        model: 'm',
        outcome: 'continue',
        filesChanged: ['a'],
        feedback: ['gate failed'],
        gates: [],
        failingTests: [],
        failed: true,
        highFinding: false,
        tampering: [],
        usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 },
      },
      recentCommits: [{ sha: 'abcdef1234', message: 'wip' }],
    });
    assert.equal(first[0].content, SYSTEM_PROMPT);
    assert.equal(later[0].content, SYSTEM_PROMPT);
    const brief = taskBrief(task);
    for (const messages of [first, later]) assert.ok(String(messages[1].content).startsWith(`${brief}\n\n## This iteration\n`));
    assert.equal(commonPrefix(String(first[1].content), String(later[1].content)), `${brief}\n\n## This iteration\nIteration `.length);
  });

  it("every request of a run starts with the same bytes: system prompt and tools across tasks, the brief across a task's iterations; the simulated cache serves them", async () => {
    h = await makeLoopHarness([progress, complete, progress, complete], { prefixCache: true });
    await h.configure({ loop: { maxIterations: 5 } });
    const a = await h.addTask({ title: 'first task', prompt: 'Create a.txt.', promise: 'a.txt exists' });
    const b = await h.addTask({ title: 'second task', prompt: 'Create b.txt with a longer request text.', promise: 'b.txt exists' });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done'],
    );

    const requests = chatRequests(h.server);
    assert.equal(requests.length, 4);
    const [a1, a2, b1, b2] = requests;
    // across tasks: tools and the system prompt, byte for byte
    const shared = JSON.stringify(a1.body?.tools) + JSON.stringify(a1.body?.messages?.[0]);
    for (const r of requests) assert.ok(promptText(r.body).startsWith(shared), `request ${r.seq} starts with the run's shared prefix`);
    // across a task's iterations: the brief too, and the iteration number only after it
    for (const [task, first, second] of [
      [a, a1, a2],
      [b, b1, b2],
    ] as const) {
      const brief = taskBrief(await h.store.get(task));
      assert.ok(userText(first).startsWith(brief) && userText(second).startsWith(brief));
      assert.ok(userText(first).indexOf('Iteration 1 of') > brief.length);
      assert.ok(userText(second).indexOf('Iteration 2 of') > brief.length);
      assert.ok(
        commonPrefix(promptText(first.body), promptText(second.body)) >=
          shared.length + JSON.stringify({ role: 'user', content: brief }).length - 2,
      );
    }

    // the scripted provider cached the shared bytes (~4 characters a token) and the receipts say so
    const receiptA = (await new CheckpointStore(h.paths).load(a))?.receipt;
    const receiptB = (await new CheckpointStore(h.paths).load(b))?.receipt;
    assert.equal(receiptA?.byIteration['1'].cachedPromptTokens, 0, 'nothing to reuse on the very first request');
    const prefixTokens = (first: RecordedRequest, second: RecordedRequest) =>
      Math.floor(commonPrefix(promptText(first.body), promptText(second.body)) / 4);
    assert.equal(receiptA?.byIteration['2'].cachedPromptTokens, prefixTokens(a1, a2));
    assert.equal(receiptB?.byIteration['1'].cachedPromptTokens, Math.max(prefixTokens(a1, b1), prefixTokens(a2, b1)));
    assert.ok(
      (receiptB?.byIteration['1'].cachedPromptTokens ?? 0) >= Math.floor(shared.length / 4),
      'a new task reuses the system prompt and tools',
    );
    assert.equal(receiptB?.byIteration['2'].cachedPromptTokens, Math.max(prefixTokens(a1, b2), prefixTokens(a2, b2), prefixTokens(b1, b2)));
  });
});
