import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { RalphPaths } from '../../../src/core/paths';
import type { Task, TaskFile } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import * as storeFile from '../../../src/core/tasks/storeFile';
import { readTextIfExists } from '../../../src/core/util/atomicWrite';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** Runs a script in another Node process (the CLI beside the extension, say), in `cwd`. */
function otherProcess(script: string, cwd: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(process.execPath, ['-e', script], { cwd }, (error, _stdout, stderr) =>
      error ? reject(new Error(`${error.message}\n${stderr}`)) : resolve(),
    ),
  );
}

const storeModule = JSON.stringify(path.resolve(__dirname, '../../../src/core/tasks/store.js'));
const pathsModule = JSON.stringify(path.resolve(__dirname, '../../../src/core/paths.js'));

/** Counts the store's reads of the file's bytes (the signature-only path makes none). */
function countReads(): { count: () => number; restore: () => void } {
  const original = storeFile.readWithSig;
  let reads = 0;
  (storeFile as { readWithSig: typeof original }).readWithSig = async (file) => {
    reads++;
    return original(file);
  };
  return { count: () => reads, restore: () => ((storeFile as { readWithSig: typeof original }).readWithSig = original) };
}

describe('TaskStore: the kept version and other writers', () => {
  let ws: TempWorkspace;
  let paths: RalphPaths;
  let store: TaskStore;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
    paths = new RalphPaths(ws.dir);
    store = new TaskStore(paths);
  });
  afterEach(async () => ws.cleanup());

  it('writes the file byte for byte as JSON.stringify(file, null, 2) plus a newline, before and after one task changes', async () => {
    await store.add({
      title: 'Émoji ✓ 🚀',
      prompt: 'line one\nline two\t"quoted" \\ back',
      promise: 'done',
      dependsOn: [],
      allowGateChanges: ['tests'],
    });
    await store.add({ title: 'B', prompt: 'b', promise: 'b', dependsOn: ['T-001'], maxIterations: 7 });
    await store.add({ title: 'C', prompt: 'c', promise: 'c' });
    const check = async () => {
      const text = await ws.read('.ralph/tasks.json');
      assert.equal(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    };
    await check();
    await store.update('T-002', { progress: 40, lastSignal: 'PROGRESS:40', blockedReason: 'why\nnot' });
    await check();
    await store.update('T-002', { blockedReason: undefined });
    await check();
    await store.remove('T-003');
    await check();
    assert.deepEqual(
      (await store.list()).map((t) => t.id),
      ['T-001', 'T-002'],
    );

    // a `$schema` key and an empty list are kept as written
    await fs.writeFile(paths.tasks, `${JSON.stringify({ $schema: './schema.json', version: 1, tasks: [] }, null, 2)}\n`);
    await store.add({ title: 'D', prompt: 'd', promise: 'd' });
    await check();
    const file = JSON.parse(await ws.read('.ralph/tasks.json')) as TaskFile;
    assert.equal(file.$schema, './schema.json');
  });

  it('the serialiser matches JSON.stringify on many shapes, and reuses an unchanged task', () => {
    const writer = new storeFile.TaskFileWriter();
    const task = (i: number): Task => ({
      id: `T-${i}`,
      title: `t ${i} ☃`,
      prompt: `p\n${i}`,
      promise: 'q',
      status: 'todo',
      priority: i,
      dependsOn: i > 1 ? [`T-${i - 1}`] : [],
      type: 'feature',
      complexity: 3,
      iterations: i,
      createdAt: 'a',
      updatedAt: 'b',
    });
    const tasks = [1, 2, 3].map(task);
    for (const file of [
      { version: 1 as const, tasks: [] },
      { version: 1 as const, tasks },
      { $schema: 'x', version: 1 as const, tasks: tasks.slice(0, 1) },
      { $schema: '\u0000ralph-tasks\u0000', version: 1 as const, tasks },
    ]) {
      assert.equal(writer.serialize(file).toString('utf8'), `${JSON.stringify(file, null, 2)}\n`);
    }
    const changed = [tasks[0], { ...tasks[1], title: 'changed' }, tasks[2]];
    assert.equal(
      writer.serialize({ version: 1, tasks: changed }).toString('utf8'),
      `${JSON.stringify({ version: 1, tasks: changed }, null, 2)}\n`,
    );
  });

  it('hands out frozen tasks and a new array each time: a caller cannot change what the store keeps', async () => {
    await store.add({ title: 'A', prompt: 'p', promise: 'q', dependsOn: [] });
    const list = await store.list();
    assert.throws(() => {
      (list[0] as { title: string }).title = 'changed in place';
    }, TypeError);
    assert.throws(() => (list[0].dependsOn as string[]).push('x'), TypeError);
    list.pop();
    assert.equal((await store.list()).length, 1);
    assert.equal((await store.get('T-001')).title, 'A');
  });

  it('sees an edit another process made in place with the same size and its modification time put back', async () => {
    await store.add({ title: 'AAAA', prompt: 'p', promise: 'q' });
    await store.add({ title: 'other', prompt: 'p', promise: 'q' });
    assert.equal((await store.get('T-001')).title, 'AAAA');
    await otherProcess(
      `const fs = require('fs'); const f = '.ralph/tasks.json'; const st = fs.statSync(f);
       fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('"AAAA"', '"BBBB"'));
       fs.utimesSync(f, st.atime, st.mtime);`,
      ws.dir,
    );
    assert.equal((await store.get('T-001')).title, 'BBBB');
    // and a write of this store keeps it
    await store.update('T-002', { priority: 5 });
    const file = JSON.parse(await ws.read('.ralph/tasks.json')) as TaskFile;
    assert.deepEqual(
      file.tasks.map((t) => [t.title, t.priority]),
      [
        ['BBBB', 100],
        ['other', 5],
      ],
    );
  });

  it('skips reading an unchanged file only once its version is old enough to prove it; any later write, even in place with the same size and time, is read', async function () {
    this.timeout(20_000);
    await store.add({ title: 'AAAA', prompt: 'p', promise: 'q' });
    const reads = countReads();
    try {
      // right after a write the signature proves nothing (same timestamp tick): the bytes are read and compared
      await store.list();
      assert.equal(reads.count(), 1);
      await new Promise((resolve) => setTimeout(resolve, storeFile.RACY_MS + 200));
      await store.list(); // read and found unchanged: from now on the signature suffices
      assert.equal(reads.count(), 2);
      await store.list();
      await store.get('T-001');
      assert.equal(reads.count(), 2, 'an unchanged, settled file is not read again');

      await otherProcess(
        `const fs = require('fs'); const f = '.ralph/tasks.json'; const st = fs.statSync(f);
         fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace('"AAAA"', '"CCCC"'));
         fs.utimesSync(f, st.atime, st.mtime);`,
        ws.dir,
      );
      assert.equal((await store.get('T-001')).title, 'CCCC');
      assert.equal(reads.count(), 3);
    } finally {
      reads.restore();
    }
  });

  it('another process adding and updating through its own store while this one updates: nothing is lost', async function () {
    this.timeout(60_000);
    await store.add({ title: 'mine', prompt: 'p', promise: 'q' });
    await store.add({ title: 'theirs', prompt: 'p', promise: 'q' });
    await store.list(); // this store keeps a version from before the other process's writes
    const theirs = otherProcess(
      `const { TaskStore } = require(${storeModule}); const { RalphPaths } = require(${pathsModule});
       (async () => { const s = new TaskStore(new RalphPaths(process.cwd()));
         for (let i = 1; i <= 15; i++) { await s.update('T-002', { progress: i }); await s.add({ title: 'added ' + i, prompt: 'p', promise: 'q' }); }
       })().catch((e) => { console.error(e); process.exit(1); });`,
      ws.dir,
    );
    for (let i = 1; i <= 15; i++) await store.update('T-001', { priority: i });
    await theirs;
    const tasks = await store.list();
    assert.equal(tasks.length, 17);
    assert.equal(tasks.find((t) => t.id === 'T-001')?.priority, 15);
    assert.equal(tasks.find((t) => t.id === 'T-002')?.progress, 15);
    assert.equal(new Set(tasks.map((t) => t.id)).size, 17);
    // a fresh reader agrees with the kept version
    assert.deepEqual(await new TaskStore(paths).list(), tasks);
  });

  it('after another writer changed one task, the others stay the same objects (and are written as they were)', async () => {
    await store.add({ title: 'A', prompt: 'p', promise: 'q' });
    await store.add({ title: 'B', prompt: 'p', promise: 'q', dependsOn: ['T-001'] });
    await store.add({ title: 'C', prompt: 'p', promise: 'q' });
    const before = await store.list();
    const other = new TaskStore(paths);
    await other.update('T-002', { title: 'B2' });
    const after = await store.list();
    assert.equal(after[0], before[0]);
    assert.notEqual(after[1], before[1]);
    assert.equal(after[1].title, 'B2');
    assert.equal(after[2], before[2]);
    // a different key order is a different serialisation: not taken for the same task
    const file = JSON.parse(await ws.read('.ralph/tasks.json')) as TaskFile;
    const { id, ...rest } = file.tasks[2];
    file.tasks[2] = { ...rest, id } as Task;
    await fs.writeFile(paths.tasks, `${JSON.stringify(file, null, 2)}\n`);
    await store.update('T-001', { priority: 3 });
    const text = await ws.read('.ralph/tasks.json');
    assert.equal(text, `${JSON.stringify(JSON.parse(text), null, 2)}\n`);
    assert.deepEqual(
      (await store.list()).map((t) => [t.id, t.priority]),
      [
        ['T-001', 3],
        ['T-002', 100],
        ['T-003', 100],
      ],
    );
  });

  it('a FIFO in place of a file read in place does not hang the process: it is read off the thread, as before', async function () {
    if (process.platform === 'win32') this.skip();
    const fifo = path.join(ws.dir, 'notes.fifo');
    execFileSync('mkfifo', [fifo]);
    const reading = readTextIfExists(fifo);
    // this process still runs: it can be the writer the read waits for
    const writer = await fs.open(fifo, 'w');
    await writer.write('written through the fifo');
    await writer.close();
    assert.equal(await reading, 'written through the fifo');
  });

  it('a file deleted and written again by someone else is read again; invalid content is still refused', async () => {
    await store.add({ title: 'A', prompt: 'p', promise: 'q' });
    await fs.rm(paths.tasks);
    assert.deepEqual(await store.list(), []);
    const at = new Date().toISOString();
    await fs.writeFile(
      paths.tasks,
      JSON.stringify({ version: 1, tasks: [{ id: 'X-1', title: 'x', prompt: 'p', promise: 'q', createdAt: at, updatedAt: at }] }),
    );
    assert.deepEqual(
      (await store.list()).map((t) => t.id),
      ['X-1'],
    );
    await fs.writeFile(paths.tasks, JSON.stringify({ version: 1, tasks: [{ id: 'X-1' }] }));
    await assert.rejects(store.list(), /tasks\.json is invalid/);
    await assert.rejects(store.update('X-1', { priority: 1 }), /tasks\.json is invalid/);
  });
});
