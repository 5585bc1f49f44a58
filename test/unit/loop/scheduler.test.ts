import assert from 'node:assert/strict';
import {
  agentEnded,
  EMPTY_SCHEDULE,
  fillSlots,
  mergeEnded,
  readyTasks,
  scheduleFinished,
  type SchedulerState,
} from '../../../src/core/loop/scheduler';
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
    assert.throws(() => agentEnded(EMPTY_SCHEDULE, 'T-09', 'complete'), /no agent slot/);
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
});
