import assert from 'node:assert/strict';
import { answerQuestion, awaitingReview, waitingQuestions } from '../../../src/chat/personBridge';
import { pinnedAnswers } from '../../../src/core/tasks/questions';
import { readyTasks, statusMarkdown } from '../../../src/chat/statusText';
import { draftFromText, readTaskDraft } from '../../../src/core/intake/taskDraft';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { TaskActions } from '../../../src/core/record/actions';
import { TaskWorktrees } from '../../../src/core/tasks/taskWorktrees';
import type { Task } from '../../../src/core/tasks/schema';
import { TaskStore } from '../../../src/core/tasks/store';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const now = '2026-11-24T10:00:00.000Z';
const task = (id: string, extra: Partial<Task> = {}): Task => ({
  id,
  title: `Task ${id}`,
  prompt: 'p',
  promise: 'q',
  status: 'todo',
  priority: 100,
  dependsOn: [],
  type: 'feature',
  complexity: 3,
  iterations: 0,
  createdAt: now,
  updatedAt: now,
  ...extra,
});

describe('what @ralph says and does (no editor needed)', function () {
  this.timeout(30000);

  it('status: counts, the run, who waits for the person, and a bounded table', () => {
    const tasks = [
      task('T-1'),
      task('T-2', { dependsOn: ['T-1'] }),
      task('T-3', { status: 'needs_help', blockedReason: 'which port?' }),
      task('T-4', { status: 'blocked', blockedReason: 'no network' }),
      task('T-5', { status: 'done', iterations: 3, title: 'a | pipe' }),
    ];
    const idle = statusMarkdown(tasks, { state: 'idle' });
    assert.match(idle, /^\*\*Ralph Loop\*\* — 5 tasks: 2 to do, 1 done, 1 blocked, 1 needs help\./);
    assert.match(idle, /No run is active\. Ready to run: \*\*T-1\*\* \(`@ralph \/run`\)\./);
    assert.match(idle, /- \*\*T-3\*\* asks: which port\? — answer with `@ralph \/answer T-3 …`\n- \*\*T-4\*\* is blocked: no network/);
    assert.match(idle, /\| T-5 \| done \| 3 \| a \\\| pipe \|/);
    assert.deepEqual(
      readyTasks(tasks).map((t) => t.id),
      ['T-1'],
    );
    const running = statusMarkdown([task('T-1', { status: 'in_progress' })], {
      state: 'running',
      agents: [{ taskId: 'T-1', iteration: 2, maxIterations: 50, progress: 40 }],
      queue: [{ taskId: 'T-9', state: 'checking' }],
      attention: 'spend rate high',
    });
    assert.match(
      running,
      /A run is \*\*running\*\*: \*\*T-1\*\* iteration 2\/50 · 40%\. Merge queue: T-9 \(checking\)\. ⚠ spend rate high/,
    );
    const many = statusMarkdown(
      Array.from({ length: 30 }, (_, i) => task(`T-${i + 1}`)),
      { state: 'idle' },
    );
    assert.match(many, /…and 5 more/);
    assert.match(statusMarkdown([], { state: 'idle' }), /no tasks/);
  });

  it('a drafted task: read from a model reply, never a guessed promise; without a model, the request as typed', () => {
    assert.deepEqual(
      readTaskDraft('Sure!\n```json\n{"title":"Cart","prompt":"Keep the cart","promise":null,"check":"","type":"bugfix"}\n```'),
      { title: 'Cart', prompt: 'Keep the cart', type: 'bugfix' },
    );
    assert.deepEqual(readTaskDraft('{"title":"A","prompt":"B","promise":"tests pass","check":"npm test","type":"weird"}'), {
      title: 'A',
      prompt: 'B',
      promise: 'tests pass',
      check: 'npm test',
    });
    assert.equal(readTaskDraft('no json here'), undefined);
    assert.equal(readTaskDraft('{"title":"","prompt":"x"}'), undefined);
    assert.deepEqual(draftFromText('rename the loader\nand its tests'), {
      title: 'rename the loader',
      prompt: 'rename the loader\nand its tests',
    });
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

    it('answers the open question through the task actions: the answer joins its history (pinned in its next context), the task is ready again', async () => {
      const added = await store.add({ title: 'DB', prompt: 'p', promise: 'q' });
      await store.update(added.id, {
        status: 'needs_help',
        blockedReason: 'Postgres or SQLite?',
        iterations: 2,
        questions: [{ id: 'q1', kind: 'help', question: 'Postgres or SQLite?', askedAt: new Date().toISOString() }],
      });
      assert.deepEqual(
        (await waitingQuestions(store)).map((w) => [w.task.id, w.question]),
        [[added.id, 'Postgres or SQLite?']],
      );
      const answered = await answerQuestion(actions, added.id, '  SQLite  ');
      assert.equal(answered.status, 'todo');
      assert.equal(answered.iterations, 2);
      assert.equal(answered.questions?.at(-1)?.answer, 'SQLite');
      assert.match(pinnedAnswers(answered.questions), /SQLite/);
      await assert.rejects(answerQuestion(actions, added.id, 'again'), /T-001/);
      assert.deepEqual(await waitingQuestions(store), []);
      assert.deepEqual(await awaitingReview(store), []);
    });

    it('lists a task held for review', async () => {
      const added = await store.add({ title: 'DB', prompt: 'p', promise: 'q' });
      await store.update(added.id, { status: 'review' });
      assert.deepEqual(
        (await awaitingReview(store)).map((t) => t.id),
        [added.id],
      );
    });
  });
});
