import assert from 'node:assert/strict';
import { GitService } from '../../../src/core/git/gitService';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { PauseGate } from '../../../src/core/loop/person/pauseGate';
import { TaskActions } from '../../../src/core/record/actions';
import type { Step } from '../../fixtures/scriptedServer';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

const write = (path: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });

describe('task actions (retry, unblock, increase, cancel, edit, rollback)', function () {
  this.timeout(30000);
  let h: LoopHarness;
  let actions: TaskActions;
  afterEach(async () => h?.cleanup());

  async function setup(steps: Step[]) {
    h = await makeLoopHarness(steps);
    actions = new TaskActions(h.store, new CheckpointStore(h.paths), new GitService(h.ws.dir));
  }

  it('rolls back the commits of the task, keeping the task store, and resets the task', async () => {
    await setup([
      write('feature.txt', 'v1'),
      { content: '<ralph>PROGRESS:50</ralph>' },
      write('README.md', 'changed'),
      { content: '<ralph>BLOCKED:stuck</ralph>' },
    ]);
    const id = await h.addTask();
    await h.runner().run();
    assert.equal((await h.store.get(id)).status, 'blocked');
    assert.ok(h.ws.exists('feature.txt'));

    const { task, applied } = await actions.rollback(id);
    assert.equal(h.ws.git('rev-parse', 'HEAD'), applied.commit);
    assert.equal(h.ws.exists('feature.txt'), false, 'files the task created are gone');
    assert.equal(await h.ws.read('README.md'), '# sample\n', 'files it changed are restored');
    assert.equal(task.status, 'todo');
    assert.equal(task.iterations, 0);
    assert.equal((await h.store.list()).length, 1, 'the task store survives the reset');
  });

  it('retries a timed-out task from a fresh counter, and increase-max makes it resumable instead', async () => {
    await setup([
      { content: '<ralph>PROGRESS:10</ralph>' },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    const id = await h.addTask({ maxIterations: 1 });
    await h.runner().run();
    assert.equal((await h.store.get(id)).status, 'timeout');

    const raised = await actions.increaseMaxIterations(id, 5, 50);
    assert.equal(raised.maxIterations, 6);
    assert.equal(raised.status, 'halted', 'resumable from its checkpoint');
    const resumed = await h.runner().run({ taskId: id });
    assert.equal(resumed.results[0].status, 'done');
    assert.deepEqual(
      eventsOf(h.events, 'iteration.started').map((e) => e.iteration),
      [1, 2],
      'resumed at iteration 2, not 1',
    );

    await h.store.update(id, { status: 'timeout' });
    const retried = await actions.retry(id);
    assert.equal(retried.status, 'todo');
    assert.equal(retried.iterations, 0);
    assert.equal(await new CheckpointStore(h.paths).load(id), undefined);
  });

  it('refuses transitions that make no sense for the status', async () => {
    await setup([]);
    const id = await h.addTask();
    await assert.rejects(actions.unblock(id), /todo; it cannot be unblocked/);
    await assert.rejects(actions.retry(id), /cannot be retried/);
    await h.store.update(id, { status: 'in_progress' });
    await assert.rejects(actions.edit(id, { prompt: 'x' }), /running/);
    await assert.rejects(actions.increaseMaxIterations(id, 0, 50), /at least 1/);
    await h.store.update(id, { status: 'blocked', blockedReason: 'why' });
    const unblocked = await actions.unblock(id);
    assert.equal(unblocked.status, 'todo');
    assert.equal(unblocked.blockedReason, undefined);
    assert.equal((await actions.cancel(id)).status, 'cancelled');
    assert.deepEqual((await actions.edit(id, { allowGateChanges: ['tests'] })).allowGateChanges, ['tests']);
    assert.deepEqual((await h.store.get(id)).allowGateChanges, ['tests']);
  });

  it('pauses between iterations and resumes', async () => {
    await setup([
      { content: '<ralph>PROGRESS:10</ralph>' },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    await h.addTask();
    const runner = h.runner();
    const gate = new PauseGate();
    assert.equal(gate.isPaused, false);
    let paused = false;
    h.bus.subscribe((event) => {
      if (event.type === 'iteration.finished' && event.iteration === 1) {
        runner.pause();
        paused = true;
        setTimeout(() => {
          assert.equal(h.server.requests.length, 1, 'no model call while paused');
          runner.resume();
        }, 100);
      }
    });
    const summary = await runner.run();
    assert.ok(paused);
    assert.equal(summary.results[0].status, 'done');
    assert.deepEqual(
      h.events.filter((e) => e.type === 'run.paused' || e.type === 'run.resumed').map((e) => e.type),
      ['run.paused', 'run.resumed'],
    );
  });

  it('pauses after the current step of an iteration, before the next model call', async () => {
    await setup([write('a.txt', 'a'), { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] }]);
    await h.addTask();
    const runner = h.runner();
    let requestsWhilePaused = -1;
    h.bus.subscribe((event) => {
      if (event.type === 'tool.result' && event.tool === 'write_file') {
        runner.pause();
        setTimeout(() => {
          requestsWhilePaused = h.server.requests.length;
          runner.resume();
        }, 150);
      }
    });
    const summary = await runner.run();
    assert.equal(requestsWhilePaused, 1, 'the second model call waited for Resume');
    assert.equal(summary.results[0].status, 'done');
    assert.equal(h.server.requests.length, 2);
  });

  it('lets Increase Max Iterations raise the limit of a task that is running', async () => {
    // the second iteration's answer waits for the raise (made as it started): the raise lands while the task runs, whatever the machine's speed
    let raised: Promise<unknown> | undefined;
    await setup([
      { content: '<ralph>PROGRESS:10</ralph>' },
      async () => (await raised, { content: '<ralph>PROGRESS:20</ralph>' }),
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] },
    ]);
    const id = await h.addTask({ maxIterations: 2 });
    h.bus.subscribe((event) => {
      if (event.type === 'iteration.started' && event.iteration === 2) raised = actions.increaseMaxIterations(id, 3, 50);
    });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    assert.equal((await h.store.get(id)).iterations, 3);
  });
});
