import assert from 'node:assert/strict';
import type { RalphRunner } from '../../../src/core/loop/run/runner';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

const write = (file: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path: file, content } }] });
const complete: Step = {
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'hello.txt contains hi' } }],
};

describe('a graceful wind-down at every cap (scripted server, real git)', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  const notesOf = (id: string) => `.ralph/progress/${id}.md`;

  it('a task budget hit mid-iteration: one bounded, tool-limited turn writes the notes, the orchestrator commits, the task ends halted', async () => {
    h = await makeLoopHarness();
    await h.configure({ budget: { taskMaxTokens: 1000 } });
    const id = await h.addTask();
    h.server.push(
      // this call crosses the cap; its tool call still runs, the next model call is refused
      { ...write('hello.txt', 'half of'), usage: { prompt_tokens: 900, completion_tokens: 200 } },
      {
        toolCalls: [
          {
            name: 'write_file',
            arguments: { path: notesOf(id), content: '# notes\nhello.txt is half written ("half of"); next: write "hi".\n' },
          },
          { name: 'write_file', arguments: { path: 'sneaky.txt', content: 'new work' } },
        ],
        usage: { prompt_tokens: 300, completion_tokens: 40 },
      },
    );
    const summary = await h.runner().run();

    assert.equal(summary.results[0].status, 'halted');
    assert.match(summary.results[0].reason, /task .* token budget reached.*budget\.taskMaxTokens/);
    const requests = chatRequests(h.server);
    assert.equal(requests.length, 2, 'the refused call never left; only the wind-down turn did');
    const turn = requests[1];
    assert.equal(turn.body?.max_completion_tokens, 1500, 'a short token cap');
    assert.deepEqual(
      turn.body?.tools?.map((t) => t.function.name),
      ['write_file', 'edit_file'],
      'only the tools that write notes',
    );
    assert.match(requestText(turn), /\[WIND-DOWN\] This iteration is being cut short: task .* token budget reached/);
    assert.match(requestText(turn), /write_file\(\{"path":"hello.txt"/, 'it is shown what it did');

    const [windDown] = eventsOf(h.events, 'wind-down');
    assert.equal(windDown.cause, 'budget');
    assert.deepEqual(windDown.wrote, [notesOf(id)]);
    const refused = eventsOf(h.events, 'tool.result').find((r) => r.agent === 'wind-down' && !r.ok);
    assert.match(refused?.summary ?? '', /only .* may be written during the wind-down/);
    assert.equal(h.ws.exists('sneaky.txt'), false);

    const [commit] = eventsOf(h.events, 'git.commit');
    for (const file of ['hello.txt', notesOf(id)])
      assert.ok(commit.files.includes(file), `the half-done work and the notes are committed: ${file}`);
    assert.equal(
      h.ws.git('status', '--porcelain', '--untracked-files=all', '--', 'hello.txt', '.ralph/progress'),
      '',
      'nothing left uncommitted',
    );
    assert.match(h.ws.git('show', `HEAD:${notesOf(id)}`), /next: write "hi"/);
    assert.match(h.ws.git('show', 'HEAD:hello.txt'), /half of/);
    const next = eventsOf(h.events, 'iteration.finished')[0];
    assert.equal(next.outcome, 'error');
  });

  it('Stop mid-iteration: the wind-down turn, then the commit; the task ends halted and resumes from the notes', async () => {
    h = await makeLoopHarness();
    const id = await h.addTask();
    const runner: RalphRunner = h.runner();
    const stopDuringCall: Step = () => {
      runner.stop(); // the user presses Stop while the model is answering
      return { content: 'never seen' };
    };
    h.server.push(write('hello.txt', 'draft'), stopDuringCall, write(notesOf(id), '# notes\nhello.txt has a draft; next: write "hi".\n'));
    const summary = await runner.run();

    assert.equal(summary.results[0].status, 'halted');
    assert.match(summary.results[0].reason, /stopped by the user/);
    const [windDown] = eventsOf(h.events, 'wind-down');
    assert.equal(windDown.cause, 'stop');
    assert.equal(windDown.reason, 'the user pressed Stop');
    assert.deepEqual(windDown.wrote, [notesOf(id)]);
    assert.equal(eventsOf(h.events, 'iteration.finished')[0].outcome, 'stopped');
    const [commit] = eventsOf(h.events, 'git.commit');
    for (const file of ['hello.txt', notesOf(id)]) assert.ok(commit.files.includes(file), file);
    assert.match(h.ws.git('show', `HEAD:${notesOf(id)}`), /next: write "hi"/);

    // the next run resumes from the notes and is told the last iteration was cut short
    h.server.push(write('hello.txt', 'hi'), complete);
    const again = await h.runner().run({ taskId: id });
    assert.equal(again.results[0].status, 'done');
    const resumed = requestText(chatRequests(h.server)[3]);
    assert.match(resumed, /next: write "hi"/, 'the notes are in the fresh context');
    assert.match(resumed, /cut short \(the user pressed Stop\); you wrote your progress notes in a wind-down turn/);
  });

  it('the task timeout mid-iteration: the wind-down turn writes the notes, the commit keeps them, the task ends timeout', async () => {
    h = await makeLoopHarness();
    await h.configure({ loop: { taskTimeoutMinutes: 0.005 } }); // 300 ms, spent by a model call that never answers
    const id = await h.addTask();
    // the wind-down's step first: it is taken by its match, so it does not matter whether the hanging call was ever sent
    // (on a loaded machine the 300 ms can run out before it is)
    h.server.push(
      { match: { lastUserContains: '[WIND-DOWN]' }, ...write(notesOf(id), '# notes\nthe model hung before any work.\n') },
      { fault: 'hang' },
    );
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    const [windDown] = eventsOf(h.events, 'wind-down');
    assert.equal(windDown.cause, 'timeout');
    assert.deepEqual(windDown.wrote, [notesOf(id)]);
    assert.match(h.ws.git('show', `HEAD:${notesOf(id)}`), /the model hung/);
  });

  it('loop.windDownSeconds 0 turns the wind-down off: no call past the cap', async () => {
    h = await makeLoopHarness([
      { ...write('hello.txt', 'half'), usage: { prompt_tokens: 900, completion_tokens: 200 } },
      { content: 'never asked' },
    ]);
    await h.configure({ budget: { taskMaxTokens: 1000 }, loop: { windDownSeconds: 0 } });
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'halted');
    assert.equal(chatRequests(h.server).length, 1);
    assert.equal(eventsOf(h.events, 'wind-down').length, 0);
    assert.ok(eventsOf(h.events, 'git.commit')[0].files.includes('hello.txt'), 'the work is still committed');
  });

  it('a COMPLETE on the last allowed iteration is judged like any other, even by the call that crossed the budget', async () => {
    h = await makeLoopHarness([write('hello.txt', 'hi'), { ...complete, usage: { prompt_tokens: 900, completion_tokens: 200 } }]);
    await h.configure({ budget: { taskMaxTokens: 1000 }, loop: { maxIterations: 1 } });
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    assert.equal((await h.store.get(id)).iterations, 1);
    assert.equal(eventsOf(h.events, 'wind-down').length, 0, 'nothing was cut short');
  });
});
