/**
 * The person in the loop (issue 21), core side: a NEEDS_HELP question answered and pinned in
 * the next iteration's context, the task resuming from its checkpoint (in its worktree in a
 * parallel run); Stop and Unblock resumed by the next Start instead of skipped; Increase Limit
 * after a time-out by the clock. Real git, the scripted model server, the core's own runner.
 */
import assert from 'node:assert/strict';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { TaskActions } from '../../../src/core/record/actions';
import { ANSWERS_HEADER } from '../../../src/core/tasks/questions';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';
import { waitFor } from '../../helpers/waitFor';

const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'hello.txt written' } }] };
const writeHello: Step = {
  content: 'Writing. <ralph>PROGRESS:50</ralph>',
  toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hi\n' } }],
};

describe('the person in the loop: questions, resumes and limits', function () {
  this.timeout(120_000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  const actions = () => new TaskActions(h.store, new CheckpointStore(h.paths), { root: h.ws.dir });

  for (const maxParallel of [1, 2]) {
    it(`a NEEDS_HELP question is answered, pinned in the next request, and the task resumes to done (maxParallel ${maxParallel})`, async () => {
      h = await makeLoopHarness([
        writeHello,
        { content: 'Which greeting? <ralph>NEEDS_HELP:Should hello.txt say hi or hello?</ralph>' },
        // the resumed iteration: only the answer can tell it what to write
        (request: RecordedRequest) =>
          /say "hello", lower case/.test(requestText(request))
            ? { toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content: 'hello\n' } }] }
            : { content: 'no answer seen <ralph>BLOCKED:the answer was not in my context</ralph>' },
        complete,
      ]);
      await h.configure({ loop: { maxParallel, maxIterations: 5 } });
      const id = await h.addTask();
      const first = await h.runner().run();
      assert.deepEqual(
        first.results.map((r) => r.status),
        ['needs_help'],
      );
      const asked = await h.store.get(id);
      assert.equal(asked.questions?.length, 1);
      assert.equal(asked.questions?.[0].question, 'Should hello.txt say hi or hello?');
      assert.equal(asked.questions?.[0].iteration, 1, 'asked in iteration 1 (after writing hello.txt)');
      assert.equal(asked.questions?.[0].answer, undefined);
      assert.deepEqual(first.outcome?.questions, [{ taskId: id, question: 'Should hello.txt say hi or hello?' }]);

      const answered = await actions().answer(id, 'say "hello", lower case');
      assert.equal(answered.status, 'halted', 'resumable from its checkpoint');
      assert.equal(answered.questions?.[0].answer, 'say "hello", lower case');
      assert.ok(answered.questions?.[0].answeredAt);

      // the next Start (no task named) resumes it: not skipped
      const second = await h.runner().run();
      assert.deepEqual(
        second.results.map((r) => [r.taskId, r.status]),
        [[id, 'done']],
      );
      const started = eventsOf(h.events, 'task.started').filter((e) => e.runId === second.runId);
      assert.equal(started[0].resumed, true, 'resumed from its checkpoint');
      assert.equal(started[0].iteration, 2, 'at the iteration after the question');
      const resumedRequest = chatRequests(h.server)[2];
      assert.match(
        requestText(resumedRequest),
        new RegExp(
          `${ANSWERS_HEADER.replace(/[[\]]/g, '\\$&')}\\n- Q .*Should hello.txt say hi or hello\\?\\n  A .*say "hello", lower case`,
        ),
      );
      if (maxParallel > 1) {
        const worktree = eventsOf(h.events, 'worktree').find((e) => e.runId === second.runId && e.state === 'ready');
        assert.equal(worktree?.created, false, 'the answered task went on in the worktree it had');
        assert.equal(h.ws.git('show', 'main:hello.txt'), 'hello');
      } else {
        assert.equal(await h.ws.read('hello.txt'), 'hello\n');
      }
    });
  }

  it('Stop keeps the work and the next Start resumes the task (not skipped); a cancelled one is given up', async () => {
    let stop: () => void = () => undefined;
    h = await makeLoopHarness([
      async () => {
        stop();
        return writeHello as Exclude<Step, (r: RecordedRequest) => unknown>;
      },
      complete,
      complete,
    ]);
    await h.configure({ loop: { maxParallel: 1, windDownSeconds: 0 } });
    const id = await h.addTask();
    const cancelled = await h.addTask({ id: 'T-GONE', title: 'Given up', prompt: 'never', promise: 'never' });
    await actions().cancel(cancelled);
    const runner = h.runner();
    stop = () => runner.stop();
    const first = await runner.run();
    assert.deepEqual(
      first.results.map((r) => [r.taskId, r.status]),
      [[id, 'halted']],
    );
    const second = await h.runner().run();
    assert.deepEqual(
      second.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
      'the stopped task resumed; the cancelled one did not start',
    );
    assert.equal(eventsOf(h.events, 'task.started').filter((e) => e.runId === second.runId)[0].resumed, true);
    assert.equal((await h.store.get(cancelled)).status, 'cancelled');
  });

  it('Unblock returns a blocked task to the ready set: the autopilot resumes it', async () => {
    h = await makeLoopHarness([{ content: '<ralph>BLOCKED:needs the fixtures folder</ralph>' }, writeHello, complete]);
    await h.configure({ loop: { maxParallel: 1 } });
    const id = await h.addTask();
    assert.deepEqual(
      (await h.runner().run()).results.map((r) => r.status),
      ['blocked'],
    );
    assert.equal((await actions().unblock(id)).status, 'halted');
    const second = await h.runner().run();
    assert.deepEqual(
      second.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
  });

  it('Increase Limit after a time-out by the clock raises the minutes (not the iterations) and says so; the task then finishes', async () => {
    // the first iteration outlasts the task's 0.6 s limit; no wind-down turn
    h = await makeLoopHarness([
      async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return writeHello as Exclude<Step, (r: RecordedRequest) => unknown>;
      },
      writeHello,
      complete,
    ]);
    await h.configure({ loop: { maxParallel: 1, taskTimeoutMinutes: 0.01, windDownSeconds: 0 } });
    const id = await h.addTask();
    const first = await h.runner().run();
    assert.deepEqual(
      first.results.map((r) => r.status),
      ['timeout'],
    );
    assert.match(first.results[0].reason, /task timeout \(0\.01 min\) reached/);
    const raised = await actions().increaseLimit(id, {}, { maxIterations: 5, timeoutMinutes: 0.01 });
    assert.equal(raised.limit, 'minutes', 'the clock ended it, so the minutes are raised');
    assert.equal(raised.from, 0.01);
    assert.ok(raised.to >= 0.02, `to ${raised.to}`);
    assert.equal(raised.task.status, 'halted');
    assert.equal(raised.task.maxIterations, undefined, 'the iteration limit is left alone');
    // give it room for the rest of the work
    await actions().increaseLimit(id, { limit: 'minutes', by: 5 }, { maxIterations: 5, timeoutMinutes: 0.01 });
    const second = await h.runner().run();
    assert.deepEqual(
      second.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
      'not timed out at once',
    );
  });

  it('Increase Limit after running out of iterations raises the iterations', async () => {
    h = await makeLoopHarness([{ content: 'Half way. <ralph>PROGRESS:50</ralph>' }, complete]);
    await h.configure({ loop: { maxParallel: 1, maxIterations: 1 } });
    const id = await h.addTask();
    assert.deepEqual(
      (await h.runner().run()).results.map((r) => r.status),
      ['timeout'],
    );
    const raised = await actions().increaseLimit(id, {}, { maxIterations: 1, timeoutMinutes: 30 });
    assert.deepEqual([raised.limit, raised.from, raised.to, raised.task.status], ['iterations', 1, 11, 'halted']);
  });

  it('Edit sets type, complexity, dependencies and the review mode; a dependency cycle is refused', async () => {
    h = await makeLoopHarness([]);
    const a = await h.addTask({ id: 'A' });
    const b = await h.addTask({ id: 'B', dependsOn: ['A'] });
    const edited = await actions().edit(a, { type: 'bugfix', complexity: 9, review: 'manual' });
    assert.deepEqual([edited.type, edited.complexity, edited.review], ['bugfix', 9, 'manual']);
    await assert.rejects(actions().edit(a, { dependsOn: [b] }), /cycle/);
    await assert.rejects(actions().edit(a, { dependsOn: ['NOPE'] }), /not in the store/);
    assert.deepEqual((await h.store.get(a)).dependsOn, []);
  });
});

describe('answers while a run goes on', function () {
  this.timeout(120_000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  /** `ASK <question>` asks until answered, then writes `<file>`; `HOLD` waits for `release` before it completes. */
  function agent(release: Promise<void>, onAsked: () => void): Step {
    return async (request: RecordedRequest) => {
      const messages = request.body?.messages ?? [];
      const all = requestText(request);
      if (messages.at(-1)?.role === 'tool') return complete as Exclude<Step, (r: RecordedRequest) => unknown>;
      if (/ASK/.test(all)) {
        const answer = /A \(.*\): (\S+)/.exec(all)?.[1];
        if (!answer) {
          onAsked();
          return { content: '<ralph>NEEDS_HELP:Which file?</ralph>' };
        }
        return { toolCalls: [{ name: 'write_file', arguments: { path: answer, content: 'answered\n' } }] };
      }
      await release;
      return { toolCalls: [{ name: 'write_file', arguments: { path: 'held.txt', content: 'held\n' } }] };
    };
  }

  it('autopilot: the other agent goes on, and the answered task is picked up again in the same run', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let asked!: () => void;
    const wasAsked = new Promise<void>((resolve) => (asked = resolve));
    h = await makeLoopHarness(Array.from({ length: 12 }, () => agent(released, asked)));
    // the held call waits for the other task to land, however long that takes: no request timeout cuts it short
    await h.configure({ loop: { maxParallel: 2, maxIterations: 4 }, llm: { requestTimeoutMs: 600_000 } });
    await h.addTask({ id: 'A', title: 'Asks', prompt: 'ASK which file', promise: 'p', priority: 1 });
    await h.addTask({ id: 'B', title: 'Holds', prompt: 'HOLD', promise: 'p', priority: 2 });
    const run = h.runner().run();
    await wasAsked;
    await waitFor('A to need help', async () => (await h.store.get('A')).status === 'needs_help', 60_000);
    await new TaskActions(h.store, new CheckpointStore(h.paths), { root: h.ws.dir }).answer('A', 'answer.txt');
    // B is still at work: the run looks for the person's answers meanwhile and starts A again
    await waitFor('A to be done', async () => (await h.store.get('A')).status === 'done', 60_000);
    release();
    const summary = await run;
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]).sort(),
      [
        ['A', 'done'],
        ['A', 'needs_help'],
        ['B', 'done'],
      ].sort(),
    );
    assert.equal(h.ws.git('show', 'main:answer.txt'), 'answered');
    assert.deepEqual(summary.outcome?.done.sort(), ['A', 'B']);
  });

  it('semi-auto: the run waits for the answer (waiting_user); given at the prompt, the task resumes with it', async () => {
    h = await makeLoopHarness(Array.from({ length: 12 }, () => agent(Promise.resolve(), () => undefined)));
    await h.configure({ loop: { maxParallel: 1, maxIterations: 4, mode: 'semi-auto' }, commands: { allow: ['*'] } });
    await h.addTask({ id: 'A', title: 'Asks', prompt: 'ASK which file', promise: 'p', priority: 1 });
    await h.addTask({ id: 'B', title: 'Next', prompt: 'HOLD', promise: 'p', priority: 2 });
    const asked: string[] = [];
    await h
      .runner({
        approval: { approve: async () => true },
        safeguards: {
          decide: async (warning) => {
            if (warning.code !== 'task-ended') return { action: 'continue' };
            asked.push(`${warning.taskId}: ${warning.question}`);
            return { action: 'answer', text: 'semi.txt' };
          },
        },
      })
      .run();
    assert.deepEqual(asked, ['A: Which file?']);
    assert.equal((await h.store.get('A')).status, 'done', 'resumed with the answer in the same run');
    assert.equal(await h.ws.read('semi.txt'), 'answered\n');
    assert.deepEqual(
      eventsOf(h.events, 'warning.answered')
        .filter((w) => w.code === 'task-ended')
        .map((w) => w.action),
      ['answered'],
    );
    assert.equal((await h.store.get('B')).status, 'done');
  });
});
