import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { ConfigError, RalphError, TaskNotFoundError } from '../../../src/core/errors';
import { RalphPaths } from '../../../src/core/paths';
import { nextTaskId, TaskStore } from '../../../src/core/tasks/store';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('TaskStore (.ralph/tasks.json)', () => {
  let ws: TempWorkspace;
  let store: TaskStore;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
    store = new TaskStore(new RalphPaths(ws.dir));
  });
  afterEach(async () => ws.cleanup());

  it('adds tasks with generated ids and defaults, and writes a valid versioned file', async () => {
    const a = await store.add({ title: 'A', prompt: 'do a', promise: 'a done' });
    const b = await store.add({
      title: 'B',
      prompt: 'do b',
      promise: 'b done',
      dependsOn: [a.id],
      priority: 1,
      complexity: 9,
      type: 'bugfix',
    });
    assert.equal(a.id, 'T-001');
    assert.equal(b.id, 'T-002');
    assert.equal(a.status, 'todo');
    assert.equal(a.iterations, 0);
    const file = JSON.parse(await ws.read('.ralph/tasks.json'));
    assert.equal(file.version, 1);
    assert.deepEqual(
      file.tasks.map((t: { id: string }) => t.id),
      ['T-001', 'T-002'],
    );
    assert.deepEqual(file.tasks[1].dependsOn, ['T-001']);
    assert.equal(file.tasks[1].type, 'bugfix');
  });

  it('refuses a task without a promise, a duplicate id and an unknown dependency', async () => {
    await assert.rejects(store.add({ title: 'A', prompt: 'p', promise: '  ' }), /promise/);
    await store.add({ id: 'x1', title: 'A', prompt: 'p', promise: 'q' });
    await assert.rejects(store.add({ id: 'x1', title: 'B', prompt: 'p', promise: 'q' }), /already exists/);
    await assert.rejects(
      store.add({ title: 'C', prompt: 'p', promise: 'q', dependsOn: ['nope'] }),
      (e: unknown) => e instanceof RalphError && /nope/.test(e.message),
    );
  });

  it('updates and clears fields, and keeps changes another process made in between', async () => {
    const task = await store.add({ title: 'A', prompt: 'p', promise: 'q' });
    const other = new TaskStore(new RalphPaths(ws.dir)); // e.g. the CLI beside the extension
    await other.add({ title: 'From elsewhere', prompt: 'p', promise: 'q' });
    await store.update(task.id, { status: 'blocked', blockedReason: 'why' });
    let tasks = await store.list();
    assert.equal(tasks.length, 2);
    assert.equal(tasks[0].blockedReason, 'why');
    await store.update(task.id, { status: 'todo', blockedReason: undefined });
    tasks = await store.list();
    assert.equal(tasks[0].blockedReason, undefined);
    await assert.rejects(store.update('missing', { status: 'done' }), TaskNotFoundError);
  });

  it('refuses to delete a task others depend on', async () => {
    const a = await store.add({ title: 'A', prompt: 'p', promise: 'q' });
    await store.add({ title: 'B', prompt: 'p', promise: 'q', dependsOn: [a.id] });
    await assert.rejects(store.remove(a.id), /depend on it/);
  });

  it('names the file and the key when the file is invalid, and never overwrites it', async () => {
    await ws.write(
      '.ralph/tasks.json',
      JSON.stringify({ version: 1, tasks: [{ id: 'a', title: 'A', prompt: 'p', status: 'weird', createdAt: 'x', updatedAt: 'x' }] }),
    );
    await assert.rejects(store.list(), (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /\.ralph\/tasks\.json is invalid/);
      assert.match(error.message, /tasks\.0\.promise/);
      assert.match(error.message, /tasks\.0\.status/);
      return true;
    });
    await assert.rejects(store.add({ title: 'A', prompt: 'p', promise: 'q' }), ConfigError);
    assert.match(await ws.read('.ralph/tasks.json'), /weird/, 'the broken file is left as it was');
  });

  it('reports the line and column of broken JSON', async () => {
    await ws.write('.ralph/tasks.json', '{\n  "version": 1,\n  "tasks": [,]\n}');
    await assert.rejects(store.list(), /tasks\.json: invalid JSON at line 3/);
  });

  it('writes atomically: no temp files are left and concurrent adds are serialized', async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.add({ title: `T${i}`, prompt: 'p', promise: 'q' })));
    const tasks = await store.list();
    assert.equal(new Set(tasks.map((t) => t.id)).size, 20);
    const leftovers = (await fs.readdir(ws.path('.ralph'))).filter((f) => f.endsWith('.tmp'));
    assert.deepEqual(leftovers, []);
  });

  it('numbers ids after the highest one', () => {
    const base = {
      title: 't',
      prompt: 'p',
      promise: 'q',
      status: 'todo' as const,
      priority: 1,
      dependsOn: [],
      type: 'feature' as const,
      complexity: 1,
      iterations: 0,
      createdAt: '',
      updatedAt: '',
    };
    assert.equal(nextTaskId([]), 'T-001');
    assert.equal(
      nextTaskId([
        { ...base, id: 'T-009' },
        { ...base, id: 'custom' },
      ]),
      'T-010',
    );
  });
});
