/**
 * Every wait has a bound (issue 21): the task's time limit covers the run of its gates at the
 * base (a gate that hangs there) and every model request (a stream that trickles a character a
 * second is cut at the limit, the wind-down turn included). And the command rules ask only what
 * a person must decide: a write to a path known only at run time is not asked about where the
 * sandbox confines it; what they still ask, an unattended run records as the task's question.
 *
 * The bounds are checked by mocha's own timeouts, far from the numbers under test: a task
 * limit of a few seconds against the 60 s wind-down default and the minutes a hanging gate
 * would otherwise take.
 */
import assert from 'node:assert/strict';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { probeSandbox } from '../../../src/core/commands/sandbox';
import { TaskActions } from '../../../src/core/record/actions';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'ran it' } }] };

/**
 * Writes to paths known only when the command runs: the loop's values come from a command's output
 * (a loop over spelled-out values is judged value by value, and runs without a question).
 */
const RUN_TIME_PATHS = 'mkdir -p gen && for i in $(seq 1 2); do echo $i > gen/$i.txt; done';

describe('bounded waits and the questions only a person can answer', function () {
  this.timeout(60_000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it("a required gate that hangs at the task's base ends the task at its time limit (timeout, the base named)", async function () {
    this.timeout(40_000);
    h = await makeLoopHarness([complete]);
    // 3 s limit; the gate would sleep for ten minutes (its own timeout)
    await h.configure({
      loop: { maxParallel: 1, taskTimeoutMinutes: 0.05 },
      gates: [{ name: 'slow', command: 'node -e "setTimeout(() => {}, 600000)"', kind: 'tests', required: true }],
    });
    await h.addTask();
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['timeout'],
    );
    assert.match(summary.results[0].reason, /task timeout \(0\.05 min\) reached during the run of the required gates at the task's base/);
    assert.equal(chatRequests(h.server).length, 0, 'no model call after the time ran out');
    const cp = await new CheckpointStore(h.paths).load('T-001');
    assert.ok((cp?.elapsedMs ?? 0) >= 3_000, 'the time at the base counts against the limit');
  });

  it("a model stream that trickles a character a second is cut at the task's limit, the wind-down turn within it", async function () {
    // 6 s limit against the 60 s wind-down default: a run past 40 s means the limit did not hold
    this.timeout(40_000);
    h = await makeLoopHarness([
      { fault: 'trickle', everyMs: 1_000 },
      { fault: 'trickle', everyMs: 1_000 },
    ]);
    await h.configure({ loop: { maxParallel: 1, taskTimeoutMinutes: 0.1 }, llm: { requestTimeoutMs: 5_000, maxRetries: 0 } });
    await h.addTask();
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['timeout'],
    );
    const windDown = eventsOf(h.events, 'wind-down')[0];
    assert.ok(windDown, 'the agent still got its wind-down turn');
    assert.match(windDown.error ?? '', /did not finish within 2 s/, 'bounded by the slice of the limit kept for it (2 s at least)');
  });

  it('a write to a path known only at run time is not asked about where the sandbox confines it', async function () {
    const probe = await probeSandbox();
    if (!probe.available) this.skip();
    h = await makeLoopHarness([{ toolCalls: [{ name: 'run_command', arguments: { command: RUN_TIME_PATHS } }] }, complete]);
    await h.configure({ loop: { maxParallel: 1 }, commands: { sandbox: 'required' } });
    await h.addTask();
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
    );
    assert.equal(await h.ws.read('gen/2.txt'), '2\n');
    assert.ok(
      !eventsOf(h.events, 'warning').some((w) => w.code === 'command-question' || w.code === 'command-refused'),
      'nobody was asked',
    );
  });

  it("without a sandbox the same command is still asked; unattended, it becomes the task's question, and an approval lets exactly it run", async () => {
    const command = RUN_TIME_PATHS;
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'run_command', arguments: { command } }] },
      { content: 'It was not run; waiting for the person. <ralph>PROGRESS:10</ralph>' },
      // resumed after the approval: the same command runs now
      { toolCalls: [{ name: 'run_command', arguments: { command } }] },
      complete,
    ]);
    await h.configure({ loop: { maxParallel: 1 }, commands: { sandbox: 'off' } });
    const id = await h.addTask();
    const first = await h.runner().run();
    assert.deepEqual(
      first.results.map((r) => r.status),
      ['needs_help'],
      'not a failed iteration: a question',
    );
    const task = await h.store.get(id);
    assert.equal(task.questions?.[0].kind, 'command');
    assert.equal(task.questions?.[0].command, command);
    assert.match(task.questions?.[0].question ?? '', /redirecting output \(>\) to a path known only when it runs/);
    assert.equal(h.ws.exists('gen/1.txt'), false, 'it did not run');
    const toolResult = requestText(chatRequests(h.server)[1]);
    assert.match(toolResult, /recorded as your task's question/);

    const actions = new TaskActions(h.store, new CheckpointStore(h.paths), { root: h.ws.dir });
    await assert.rejects(actions.answer(id, ''), /empty/);
    await actions.answer(id, '', { approved: true });
    const second = await h.runner().run();
    assert.deepEqual(
      second.results.map((r) => r.status),
      ['done'],
    );
    assert.equal(await h.ws.read('gen/1.txt'), '1\n', 'the approved command ran');
    assert.match(
      requestText(chatRequests(h.server)[2]),
      /You wanted to run `mkdir -p gen .*`: approved — you may run exactly that command/,
    );
  });
});
