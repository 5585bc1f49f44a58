import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { answerQuestion, awaitingReview, waitingQuestions } from '../../../src/chat/personBridge';
import { readyTasks, statusMarkdown } from '../../../src/chat/statusText';
import { draftFromText, readTaskDraft } from '../../../src/core/intake/taskDraft';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { CheckpointStore } from '../../../src/core/loop/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { TaskActions } from '../../../src/core/tasks/actions';
import { TaskWorktrees } from '../../../src/core/tasks/taskWorktrees';
import type { Task } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const now = '2026-11-24T10:00:00.000Z';
const task = (id: string, extra: Partial<Task> = {}): Task => ({ id, title: `Task ${id}`, prompt: 'p', promise: 'q', status: 'todo', priority: 100, dependsOn: [], type: 'feature', complexity: 3, iterations: 0, createdAt: now, updatedAt: now, ...extra });

describe('what @ralph says and does (no editor needed)', function () {
  this.timeout(30000);

  it('status: counts, the run, who waits for the person, and a bounded table', () => {
    const tasks = [task('T-1'), task('T-2', { dependsOn: ['T-1'] }), task('T-3', { status: 'needs_help', blockedReason: 'which port?' }), task('T-4', { status: 'blocked', blockedReason: 'no network' }), task('T-5', { status: 'done', iterations: 3, title: 'a | pipe' })];
    const idle = statusMarkdown(tasks, { state: 'idle' });
    assert.match(idle, /^\*\*Ralph Loop\*\* — 5 tasks: 2 to do, 1 done, 1 blocked, 1 needs help\./);
    assert.match(idle, /No run is active\. Ready to run: \*\*T-1\*\* \(`@ralph \/run`\)\./);
    assert.match(idle, /- \*\*T-3\*\* asks: which port\? — answer with `@ralph \/answer T-3 …`\n- \*\*T-4\*\* is blocked: no network/);
    assert.match(idle, /\| T-5 \| done \| 3 \| a \\\| pipe \|/);
    assert.deepEqual(readyTasks(tasks).map((t) => t.id), ['T-1']);
    const running = statusMarkdown([task('T-1', { status: 'in_progress' })], { state: 'running', agents: [{ taskId: 'T-1', iteration: 2, maxIterations: 50, progress: 40 }], queue: [{ taskId: 'T-9', state: 'checking' }], attention: 'spend rate high' });
    assert.match(running, /A run is \*\*running\*\*: \*\*T-1\*\* iteration 2\/50 · 40%\. Merge queue: T-9 \(checking\)\. ⚠ spend rate high/);
    const many = statusMarkdown(Array.from({ length: 30 }, (_, i) => task(`T-${i + 1}`)), { state: 'idle' });
    assert.match(many, /…and 5 more/);
    assert.match(statusMarkdown([], { state: 'idle' }), /no tasks/);
  });

  it('a drafted task: read from a model reply, never a guessed promise; without a model, the request as typed', () => {
    assert.deepEqual(readTaskDraft('Sure!\n```json\n{"title":"Cart","prompt":"Keep the cart","promise":null,"check":"","type":"bugfix"}\n```'), { title: 'Cart', prompt: 'Keep the cart', type: 'bugfix' });
    assert.deepEqual(readTaskDraft('{"title":"A","prompt":"B","promise":"tests pass","check":"npm test","type":"weird"}'), { title: 'A', prompt: 'B', promise: 'tests pass', check: 'npm test' });
    assert.equal(readTaskDraft('no json here'), undefined);
    assert.equal(readTaskDraft('{"title":"","prompt":"x"}'), undefined);
    assert.deepEqual(draftFromText('rename the loader\nand its tests'), { title: 'rename the loader', prompt: 'rename the loader\nand its tests' });
    assert.equal(draftFromText('x'.repeat(100)).title.length, 78);
  });

  describe('answering a waiting question', () => {
    let ws: TempWorkspace;
    let store: TaskStore;
    let paths: RalphPaths;
    let actions: TaskActions;

    beforeEach(async () => {
      ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# x\n' } });
      paths = new RalphPaths(ws.dir);
      store = new TaskStore(paths);
      actions = new TaskActions(store, new CheckpointStore(paths), { root: ws.dir }, [], new TaskWorktrees(ws.dir));
    });
    afterEach(async () => ws.cleanup());

    it('writes the question and answer into the notes the next iteration reads, and unblocks the task', async () => {
      const added = await store.add({ title: 'DB', prompt: 'p', promise: 'q' });
      await store.update(added.id, { status: 'needs_help', blockedReason: 'Postgres or SQLite?', iterations: 2 });
      assert.deepEqual((await waitingQuestions(store)).map((w) => [w.task.id, w.question]), [[added.id, 'Postgres or SQLite?']]);
      const answered = await answerQuestion(paths, store, actions, added.id, '  SQLite  ');
      assert.equal(answered.status, 'todo');
      assert.equal(answered.iterations, 2);
      assert.match(await fs.readFile(paths.progress(added.id), 'utf8'), /^# Progress notes — T-001: DB[\s\S]*## Answer from the person \(.*\)\n\n\*\*Question:\*\* Postgres or SQLite\?\n\n\*\*Answer:\*\* SQLite\n$/);
      await assert.rejects(answerQuestion(paths, store, actions, added.id, 'again'), /T-001 is todo; it asked nothing that waits for an answer/);
      assert.deepEqual(await awaitingReview(store), []);
    });

    it('a parallel task keeps its notes in its worktree: the answer goes there', async () => {
      const added = await store.add({ title: 'DB', prompt: 'p', promise: 'q' });
      const worktree = await new WorktreeManager(ws.dir).create(added.id, 'main');
      await store.update(added.id, { status: 'needs_help', blockedReason: 'Which port?' });
      await answerQuestion(paths, store, actions, added.id, '8080');
      assert.match(await fs.readFile(new RalphPaths(worktree.path).progress(added.id), 'utf8'), /\*\*Answer:\*\* 8080/);
      assert.equal(ws.exists(`.ralph/progress/${added.id}.md`), false, 'not in the workspace, where the agent would never read it');
    });
  });
});
