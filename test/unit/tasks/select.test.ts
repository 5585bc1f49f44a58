import assert from 'node:assert/strict';
import type { Task } from '../../../src/core/tasks/schema';
import { pendingDependencies, selectNextTask } from '../../../src/core/tasks/select';

function task(id: string, fields: Partial<Task> = {}): Task {
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
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '',
    ...fields,
  };
}

describe('selectNextTask', () => {
  it('picks the todo task with the lowest priority number whose dependencies are done', () => {
    const tasks = [
      task('a', { priority: 5 }),
      task('b', { priority: 1, dependsOn: ['c'] }),
      task('c', { priority: 3, status: 'blocked' }),
      task('d', { priority: 2 }),
    ];
    assert.equal(selectNextTask(tasks)?.id, 'd');
    assert.deepEqual(pendingDependencies(tasks[1], tasks), ['c']);
  });

  it('prefers an interrupted in_progress task so a restarted run resumes it', () => {
    const tasks = [task('a', { priority: 1 }), task('b', { priority: 9, status: 'in_progress' })];
    assert.equal(selectNextTask(tasks)?.id, 'b');
  });

  it('breaks priority ties by age, skips excluded tasks and returns undefined when nothing is ready', () => {
    const tasks = [task('new', { createdAt: '2026-02-01T00:00:00.000Z' }), task('old', { createdAt: '2026-01-01T00:00:00.000Z' })];
    assert.equal(selectNextTask(tasks)?.id, 'old');
    assert.equal(selectNextTask(tasks, new Set(['old']))?.id, 'new');
    assert.equal(selectNextTask([task('x', { status: 'done' }), task('y', { dependsOn: ['z'] })]), undefined);
  });

  it('runs a dependent only once its dependency is done', () => {
    const tasks = [task('a', { status: 'done' }), task('b', { dependsOn: ['a'] })];
    assert.equal(selectNextTask(tasks)?.id, 'b');
  });
});
