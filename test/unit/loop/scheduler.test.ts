import assert from 'node:assert/strict';
import {
  agentEnded,
  atWork,
  EMPTY_SCHEDULE,
  fillSlots,
  mergeEnded,
  readyTasks,
  scheduleFinished,
  type SchedulerState,
  slotGiven,
  slotWanted,
} from '../../../src/core/loop/run/scheduler';
import type { Task } from '../../../src/core/tasks/schema';

function task(id: string, extra: Partial<Task> = {}): Task {
  return {
    id,
    title: id,
    prompt: 'p',
    promise: 'q',
    status: 'todo',
    priority: 100,
    dependsOn: [],
    type: 'feature',
    complexity: 3,
    iterations: 0,
    createdAt: `2026-01-01T00:00:${id.slice(-2)}Z`,
    updatedAt: '',
    ...extra,
  };
}

/** Applies the store's view of a merge: the task becomes done. */
function markDone(tasks: Task[], id: string): Task[] {
  return tasks.map((t) => (t.id === id ? { ...t, status: 'done' } : t));
}

describe('scheduler (pure)', () => {
  it('fills up to maxParallel slots in priority order, then only as slots free up', () => {
    const tasks = [task('T-01', { priority: 5 }), task('T-02', { priority: 1 }), task('T-03'), task('T-04'), task('T-05')];
    const first = fillSlots(EMPTY_SCHEDULE, tasks, 3);
    assert.deepEqual(
      first.start.map((t) => t.id),
      ['T-02', 'T-01', 'T-03'],
    );
    const again = fillSlots(first.state, tasks, 3);
    assert.deepEqual(again.start, [], 'no free slot, nothing starts');
    const freed = agentEnded(first.state, 'T-01', 'blocked');
    const next = fillSlots(freed, tasks, 3);
    assert.deepEqual(
      next.start.map((t) => t.id),
      ['T-04'],
    );
    assert.deepEqual([...next.state.running].sort(), ['T-02', 'T-03', 'T-04']);
    assert.deepEqual(next.state.ended, ['T-01']);
  });

  it('frees the slot on blocked, needs_help, timeout and failure; none of them is picked again in the run', () => {
    const tasks = ['T-01', 'T-02', 'T-03', 'T-04', 'T-05'].map((id) => task(id));
    let { state } = fillSlots(EMPTY_SCHEDULE, tasks, 4);
    for (const [id, end] of [
      ['T-01', 'blocked'],
      ['T-02', 'needs_help'],
      ['T-03', 'timeout'],
      ['T-04', 'failed'],
    ] as const)
      state = agentEnded(state, id, end);
    assert.deepEqual(state.running, []);
    const refill = fillSlots(state, tasks, 4);
    assert.deepEqual(
      refill.start.map((t) => t.id),
      ['T-05'],
    );
    const done = agentEnded(refill.state, 'T-05', 'halted');
    assert.equal(scheduleFinished(done, tasks), true);
  });

  it('a dependency counts as done only once merged: the dependent waits while its dependency is in the queue', () => {
    let tasks = [task('T-01'), task('T-02', { dependsOn: ['T-01'] })];
    let { state, start } = fillSlots(EMPTY_SCHEDULE, tasks, 3);
    assert.deepEqual(
      start.map((t) => t.id),
      ['T-01'],
      'T-02 waits for T-01',
    );
    state = agentEnded(state, 'T-01', 'complete');
    assert.deepEqual(state.merging, ['T-01']);
    assert.deepEqual(fillSlots(state, tasks, 3).start, [], 'COMPLETE alone is not done: T-01 is not merged yet');
    assert.equal(scheduleFinished(state, tasks), false, 'the run waits for the queue');
    state = mergeEnded(state, 'T-01', 'merged');
    tasks = markDone(tasks, 'T-01');
    const after = fillSlots(state, tasks, 3);
    assert.deepEqual(
      after.start.map((t) => t.id),
      ['T-02'],
    );
  });

  it('a task sent back by the queue (conflict, red merged check) gets the next free slot before new work', () => {
    const tasks = [task('T-01'), task('T-02'), task('T-03', { priority: 0 })];
    let state: SchedulerState = { ...EMPTY_SCHEDULE, running: ['T-02'], merging: ['T-01'] };
    state = mergeEnded(state, 'T-01', 'returned');
    const { start, state: filled } = fillSlots(state, tasks, 2);
    assert.deepEqual(
      start.map((t) => t.id),
      ['T-01'],
      'returned before the higher-priority todo',
    );
    assert.deepEqual(filled.returning, []);
  });

  it('an interrupted task (in_progress after a crash) resumes before todo tasks; queued and ended tasks are never started', () => {
    const tasks = [
      task('T-01'),
      task('T-02', { status: 'in_progress', priority: 500 }),
      task('T-03'),
      task('T-04', { status: 'in_progress' }),
    ];
    const state: SchedulerState = { ...EMPTY_SCHEDULE, merging: ['T-04'], ended: ['T-01'] };
    assert.deepEqual(
      readyTasks(tasks, state).map((t) => t.id),
      ['T-02', 'T-03'],
    );
  });

  it('refuses bookkeeping for a task it does not hold', () => {
    assert.throws(() => agentEnded(EMPTY_SCHEDULE, 'T-09', 'complete'), /no agent at work/);
    assert.throws(() => mergeEnded(EMPTY_SCHEDULE, 'T-09', 'merged'), /not in the merge queue/);
  });

  it('maxParallel 1 runs one task at a time', () => {
    const tasks = ['T-01', 'T-02'].map((id) => task(id));
    const { state, start } = fillSlots(EMPTY_SCHEDULE, tasks, 1);
    assert.deepEqual(
      start.map((t) => t.id),
      ['T-01'],
    );
    assert.deepEqual(fillSlots(state, tasks, 1).start, []);
  });

  describe('slots are model conversations (issue 34)', () => {
    const tasks = ['T-01', 'T-02', 'T-03', 'T-04', 'T-05'].map((id) => task(id));

    it('a task on its gates gives its slot to the next ready task, and is never started twice', () => {
      let { state } = fillSlots(EMPTY_SCHEDULE, tasks, 2);
      state = slotGiven(state, 'T-01');
      assert.deepEqual(state.running, ['T-02']);
      assert.deepEqual(state.gating, ['T-01']);
      const next = fillSlots(state, tasks, 2);
      assert.deepEqual(
        next.start.map((t) => t.id),
        ['T-03'],
        'the freed slot goes to the next ready task',
      );
      assert.ok(!readyTasks(tasks, next.state).some((t) => t.id === 'T-01'), 'a task on its gates is at work, not ready');
      assert.deepEqual(atWork(next.state).sort(), ['T-01', 'T-02', 'T-03']);
      assert.equal(slotGiven(next.state, 'T-01'), next.state, 'giving away a slot it does not hold changes nothing');
    });

    it('a task its gates sent back gets the next free slot before any new task, in the order they asked', () => {
      let { state } = fillSlots(EMPTY_SCHEDULE, tasks, 2);
      state = fillSlots(slotGiven(slotGiven(state, 'T-01'), 'T-02'), tasks, 2).state; // T-03 and T-04 talk
      state = slotWanted(slotWanted(state, 'T-02'), 'T-01');
      assert.deepEqual(state.waiting, ['T-02', 'T-01']);
      const none = fillSlots(state, tasks, 2);
      assert.deepEqual([none.start, none.resume], [[], []], 'no free slot: nobody moves');
      state = slotGiven(state, 'T-03');
      const one = fillSlots(state, tasks, 2);
      assert.deepEqual(one.resume, ['T-02'], 'the first to ask gets the one free slot');
      assert.deepEqual(one.start, [], 'and no new task starts while one waits');
      state = agentEnded(one.state, 'T-04', 'blocked');
      const two = fillSlots(state, tasks, 2);
      assert.deepEqual([two.resume, two.start], [['T-01'], []]);
      const three = fillSlots(agentEnded(two.state, 'T-02', 'complete'), tasks, 2);
      assert.deepEqual(
        three.start.map((t) => t.id),
        ['T-05'],
        'with nobody waiting, new tasks start again',
      );
    });

    it('tasks at work (with a slot or on their gates) stay within maxAtWork: beyond it a start would only wait for the gates', () => {
      let { state } = fillSlots(EMPTY_SCHEDULE, tasks, 2, 3);
      state = slotGiven(slotGiven(state, 'T-01'), 'T-02');
      const filled = fillSlots(state, tasks, 2, 3);
      assert.deepEqual(
        filled.start.map((t) => t.id),
        ['T-03'],
        'two slots free, one start: 3 at work',
      );
      state = slotWanted(filled.state, 'T-01');
      const back = fillSlots(state, tasks, 2, 3);
      assert.deepEqual(back.resume, ['T-01'], 'a task sent back is at work already: the bound never holds it back');
    });

    it('an agent ends from any of its states; the run is finished only when none is at work', () => {
      let { state } = fillSlots(EMPTY_SCHEDULE, tasks.slice(0, 3), 3);
      state = slotWanted(slotGiven(slotGiven(state, 'T-01'), 'T-02'), 'T-02');
      assert.equal(scheduleFinished(state, []), false);
      state = agentEnded(state, 'T-01', 'complete'); // on its gates: COMPLETE accepted
      state = agentEnded(state, 'T-02', 'halted'); // stopped while waiting for a slot
      state = agentEnded(state, 'T-03', 'blocked');
      assert.deepEqual([state.running, state.gating, state.waiting], [[], [], []]);
      assert.deepEqual(state.merging, ['T-01']);
      assert.deepEqual(state.ended, ['T-02', 'T-03']);
      assert.equal(scheduleFinished(mergeEnded(state, 'T-01', 'merged'), []), true);
    });
  });
});
