/**
 * Tasks run as CI jobs in the progress panel and the task tree: the remote badge's look (one
 * table for both), the link's label, stale badges dropped, the panel adopting a task the forge
 * runs though it never ran here, and the host's feeder seeding it from the real task store.
 */
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { EventBus } from '../../../src/core/events';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { REMOTE_STATES, type TaskRemote } from '../../../src/core/tasks/remote';
import { TaskStore } from '../../../src/core/tasks/store';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { parseWebviewMessage } from '../../../src/protocol/protocolSchema';
import { emptyPanelState } from '../../../src/protocol/panelState';
import type { TaskSeed } from '../../../src/protocol/panelInput';
import { currentRemote, REMOTE_LOOK, remoteLinkLabel, remoteLook, remoteWords } from '../../../src/protocol/remoteLook';
import { PanelFeeder, taskSeed } from '../../../src/ui/panel/panelFeeder';
import { PanelModel } from '../../../src/ui/panel/panelModel';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const JOB = 'https://github.example/acme/widgets/actions/runs/1000/job/1001';
const PULL = 'https://github.example/acme/widgets/pull/7';

const seed = (id: string, status: TaskSeed['status'], remote?: TaskSeed['remote']): TaskSeed => ({
  id,
  title: `Task ${id}`,
  status,
  iterations: 0,
  updatedAt: '2026-03-01T10:00:00Z',
  ...(remote ? { remote } : {}),
});
const sync = (tasks: TaskSeed[], adopt = false) => ({ type: 'panel.sync' as const, time: '2026-03-01T10:00:00Z', adopt, tasks });

describe('remote badge: one look for the tree and the panel', () => {
  it('has an icon, a theme colour and words for every remote state the store knows', () => {
    assert.deepEqual(Object.keys(REMOTE_LOOK).sort(), [...REMOTE_STATES].sort());
    for (const state of REMOTE_STATES) {
      const look = remoteLook(state);
      assert.match(look.icon, /^[a-z-]+(~spin)?$/, state);
      assert.match(look.color, /^[a-zA-Z]+\.[a-zA-Z]+$/, state);
      assert.ok(look.words.length > 0, state);
    }
    assert.equal(remoteLook('running').icon, 'sync~spin');
    // a name the codicon font lacks renders as nothing at all
    const font = readFileSync(require.resolve('@vscode/codicons/dist/codicon.css'), 'utf8');
    for (const state of REMOTE_STATES)
      assert.ok(
        font.includes(`.codicon-${remoteLook(state).icon.replace(/~spin$/, '')}:before`),
        `${state}: no codicon ${remoteLook(state).icon}`,
      );
    assert.equal(remoteLook('merged').color, 'testing.iconPassed');
    assert.equal(remoteLook('failed').color, 'testing.iconFailed');
    // a state from a newer store shows as itself rather than breaking the view
    assert.deepEqual(remoteLook('paused-by-forge'), { icon: 'cloud', color: 'charts.blue', words: 'paused-by-forge' });
  });

  it('says the queue position while the merge queue holds the task, and only then', () => {
    assert.equal(remoteWords({ state: 'in-queue', detail: 'position 2, awaiting checks' }), 'in merge queue · position 2, awaiting checks');
    assert.equal(remoteWords({ state: 'in-queue' }), 'in merge queue');
    assert.equal(remoteWords({ state: 'pr-open', detail: 'auto-merge on: waiting for the required checks' }), 'PR open');
    assert.equal(remoteWords({ state: 'failed', detail: 'the job ended failure' }), 'failed on GitHub Actions');
  });

  it('labels the link after where it goes: the pull request, or the job (also for a task sent back that keeps its pull request)', () => {
    assert.equal(remoteLinkLabel({ url: PULL, pr: 7 }), 'Open pull request #7');
    assert.equal(remoteLinkLabel({ url: PULL }), 'Open the pull request');
    assert.equal(remoteLinkLabel({ url: JOB }), 'Open the job on GitHub Actions');
    assert.equal(remoteLinkLabel({ url: JOB, pr: 7 }), 'Open the job on GitHub Actions', 'back in a new job: the link is the job');
  });

  it('drops a stale badge: merged shows only on a done task, failed only while the task still says it ended', () => {
    const failed: TaskRemote = { state: 'failed', url: JOB, detail: 'the job ended failure' };
    const merged: TaskRemote = { state: 'merged', url: PULL, pr: 7 };
    assert.equal(currentRemote('failed', failed), failed);
    assert.equal(currentRemote('needs_help', failed), failed);
    assert.equal(currentRemote('timeout', failed), failed);
    assert.equal(currentRemote('todo', failed), undefined, 'retried here after the job failed');
    assert.equal(currentRemote('in_progress', failed), undefined, 'running here now');
    assert.equal(currentRemote('done', failed), undefined, 'finished here');
    assert.equal(currentRemote('done', merged), merged);
    assert.equal(currentRemote('todo', merged), undefined, 'rolled back after the merge');
    for (const state of ['queued', 'running', 'pr-open', 'in-queue'] as const)
      assert.deepEqual(currentRemote('in_progress', { state, url: JOB }), { state, url: JOB }, state);
    assert.equal(currentRemote('todo', undefined), undefined);
  });
});

describe('progress panel: tasks the forge runs', () => {
  it("the panel's remote link asks the host to open the task on GitHub (checked like every command it sends)", () => {
    assert.deepEqual(parseWebviewMessage({ type: 'command', command: 'openRemote', taskId: 'W-1' }), {
      ok: true,
      message: { type: 'command', command: 'openRemote', taskId: 'W-1' },
    });
    assert.equal(parseWebviewMessage({ type: 'command', command: 'openRemote', taskId: '../W-1' }).ok, false);
    assert.equal(
      parseWebviewMessage({ type: 'command', command: 'openExternal', taskId: 'W-1' }).ok,
      false,
      'no URL or other command from the webview',
    );
  });

  it('adopts a task the forge runs though it never ran here, and follows its badge to the merge', () => {
    let state = reducePanel(emptyPanelState(), sync([seed('T-001', 'todo'), seed('T-002', 'in_progress', { state: 'queued', url: JOB })]));
    assert.deepEqual(
      state.tasks.map((t) => t.id),
      ['T-002'],
      'a plain todo task is not adopted by a live sync; the remote one is',
    );
    assert.equal(state.currentTaskId, 'T-002');
    assert.deepEqual(state.tasks[0].remote, { state: 'queued', url: JOB });
    assert.equal(state.tasks[0].status, 'in_progress');

    const before = state;
    state = reducePanel(state, sync([seed('T-002', 'in_progress', { state: 'queued', url: JOB })]));
    assert.equal(state, before, 'the same badge again changes nothing (no render, no digest change)');

    state = reducePanel(
      state,
      sync([seed('T-002', 'in_progress', { state: 'in-queue', url: PULL, detail: 'position 1, awaiting checks' })]),
    );
    assert.deepEqual(state.tasks[0].remote, { state: 'in-queue', url: PULL, detail: 'position 1, awaiting checks' });
    state = reducePanel(state, sync([seed('T-002', 'done', { state: 'merged', url: PULL, detail: 'merged as 0123456789' })]));
    assert.equal(state.tasks[0].status, 'done');
    assert.equal(state.tasks[0].remote?.state, 'merged');
    // retried here later: the store's task carries no current badge, and the panel drops it
    state = reducePanel(state, sync([seed('T-002', 'todo')]));
    assert.equal(state.tasks[0].remote, undefined);
  });

  it('the feeder seeds the badge from the task store, adopts remote tasks from disk and leaves stale ones out', async () => {
    const ws: TempWorkspace = await makeTempWorkspace();
    const feeders: PanelFeeder[] = [];
    try {
      const paths = new RalphPaths(ws.dir);
      const store = new TaskStore(paths);
      const [remote, local, retried] = [
        await store.add({ title: 'On the forge', prompt: 'p', promise: 'q' }),
        await store.add({ title: 'Never ran', prompt: 'p', promise: 'q' }),
        await store.add({ title: 'Failed there, retried here', prompt: 'p', promise: 'q' }),
      ];
      await store.update(remote.id, {
        status: 'in_progress',
        remote: { state: 'running', url: JOB, runId: 1000, dispatchedAt: '2026-03-01T10:00:00Z', dispatch: 'abcd1234' },
      });
      await store.update(retried.id, { status: 'todo', remote: { state: 'failed', url: JOB, detail: 'the job ended failure' } });

      // a panel opened after a reload: the tasks on disk
      const fromDisk = new PanelModel();
      feeders.push(
        new PanelFeeder({
          model: fromDisk,
          bus: new EventBus(),
          store,
          checkpoints: new CheckpointStore(paths),
          paths,
          prices: () => ({}),
        }),
      );
      await feeders[0].loadFromDisk();
      assert.deepEqual(
        fromDisk.state.tasks.map((t) => [t.id, t.status, t.remote?.state]),
        [[remote.id, 'in_progress', 'running']],
      );
      assert.deepEqual(fromDisk.state.tasks[0].remote, { state: 'running', url: JOB }, 'only what the badge shows crosses to the webview');

      // live: the follower writes the store, the panel follows
      const live = new PanelModel();
      feeders.push(
        new PanelFeeder({ model: live, bus: new EventBus(), store, checkpoints: new CheckpointStore(paths), paths, prices: () => ({}) }),
      );
      await store.update(remote.id, {
        status: 'in_progress',
        remote: { state: 'pr-open', url: PULL, pr: 7, detail: 'auto-merge on: waiting for the required checks' },
      });
      assert.deepEqual(
        live.state.tasks.map((t) => t.id),
        [remote.id],
        `${local.id} and ${retried.id} are not adopted`,
      );
      assert.deepEqual(live.state.tasks[0].remote, {
        state: 'pr-open',
        url: PULL,
        detail: 'auto-merge on: waiting for the required checks',
      });
      await store.update(remote.id, { status: 'done', remote: { state: 'merged', url: PULL, pr: 7 } });
      assert.deepEqual(live.state.tasks[0].remote, { state: 'merged', url: PULL });
      assert.equal(live.state.tasks[0].status, 'done');

      assert.equal(taskSeed(await store.get(retried.id), undefined, {}).remote, undefined, 'a stale badge is not seeded');
    } finally {
      for (const f of feeders) f.dispose();
      await ws.cleanup();
    }
  });
});
