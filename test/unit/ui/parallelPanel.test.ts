/**
 * The panel and the live status of a parallel run: agent tiles, the merge queue view, the
 * merged check's gate label, kept worktrees, the status bar's `Ralph N agents · M queued`, and
 * the seam between core and webview (the protocol owns its types; the host maps events).
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { reduceLive } from '../../../src/ui/liveReducer';
import type { LiveStatus } from '../../../src/ui/liveStatus';
import type { RalphEventBody } from '../../../src/core/events';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { parseWebviewMessage } from '../../../src/protocol/protocolSchema';
import { emptyPanelState, runningAgents, stateDigest, type PanelState } from '../../../src/protocol/panelState';
import { PanelModel } from '../../../src/ui/panel/panelModel';
import { relativeWorktreePath, toPanelEvent } from '../../../src/ui/panel/toPanelEvent';
import { EventScript } from '../../fixtures/panelEvents';

const WS = '/home/me/project';
const wt = (id: string) => `${WS}/.ralph/worktrees/${id}`;
const usage = { promptTokens: 800, completionTokens: 200, totalTokens: 1000 };

/** Two agents at work, a third task through the queue (its merged check green), a fourth kept after a failure. */
function parallelRun(): EventScript {
  const s = new EventScript('run-p');
  const body = (b: RalphEventBody) => s.add(b, 500);
  body({ type: 'run.started', workspace: WS, taskIds: [] });
  for (const [id, title] of [
    ['T-1', 'Login form'],
    ['T-2', 'Signup API'],
    ['T-3', 'Docs'],
    ['T-4', 'Flaky cache'],
  ]) {
    body({ type: 'worktree', taskId: id, state: 'ready', path: wt(id), branch: `ralph/${id}`, created: true });
    body({ type: 'task.started', taskId: id, title, iteration: 1, maxIterations: 10, resumed: false });
    body({ type: 'iteration.started', taskId: id, iteration: 1, maxIterations: 10, model: 'gpt-4.1-mini' });
  }
  body({ type: 'model.response', taskId: 'T-1', iteration: 1, model: 'gpt-4.1-mini', usage, toolCalls: 0, finishReason: 'stop' });
  body({ type: 'signal', taskId: 'T-1', iteration: 1, signal: { kind: 'PROGRESS', percent: 40 } });
  body({ type: 'signal', taskId: 'T-2', iteration: 1, signal: { kind: 'PROGRESS', percent: 70 } });
  // T-3 completes: its own gates, then the queue
  body({ type: 'gate.started', taskId: 'T-3', iteration: 1, gate: 'unit', kind: 'tests', command: 'npm test' });
  body({
    type: 'gate.finished',
    taskId: 'T-3',
    iteration: 1,
    gate: 'unit',
    kind: 'tests',
    required: true,
    passed: true,
    summary: '4 passed',
    durationMs: 900,
  });
  body({ type: 'signal', taskId: 'T-3', iteration: 1, signal: { kind: 'COMPLETE' } });
  body({ type: 'iteration.finished', taskId: 'T-3', iteration: 1, outcome: 'complete', signal: 'COMPLETE', durationMs: 5000, usage });
  body({ type: 'merge', taskId: 'T-3', state: 'queued', title: 'Docs', target: 'main', attempts: 1 });
  body({ type: 'merge', taskId: 'T-3', state: 'merging', title: 'Docs', target: 'main', attempts: 1 });
  body({ type: 'merge', taskId: 'T-3', state: 'checking', title: 'Docs', target: 'main', attempts: 1 });
  body({ type: 'gate.started', taskId: 'T-3', gate: 'unit', kind: 'tests', command: 'npm test' });
  body({
    type: 'gate.finished',
    taskId: 'T-3',
    gate: 'unit',
    kind: 'tests',
    required: true,
    passed: true,
    summary: '5 passed',
    durationMs: 950,
  });
  // T-4 fails and keeps its worktree
  body({ type: 'task.finished', taskId: 'T-4', status: 'failed', iterations: 1, reason: 'the model API failed' });
  body({ type: 'worktree', taskId: 'T-4', state: 'kept', path: wt('T-4'), branch: 'ralph/T-4' });
  return s;
}

function panelOf(s: EventScript): PanelModel {
  const model = new PanelModel(() => ({ 'gpt-4.1-mini': { input: 1, output: 1 } }));
  for (const e of s.events) model.ingest(e);
  return model;
}

describe('progress panel of a parallel run', () => {
  it('shows a tile per running agent with iteration, progress, signal, model, cost and worktree', () => {
    const state = panelOf(parallelRun()).state;
    const tiles = runningAgents(state);
    assert.deepEqual(
      tiles.map((t) => t.id),
      ['T-1', 'T-2'],
      'T-3 is in the queue, T-4 failed',
    );
    const t1 = tiles[0];
    assert.deepEqual(
      [t1.title, t1.iteration, t1.maxIterations, t1.progress, t1.lastSignal, t1.model, t1.worktree],
      ['Login form', 1, 10, 40, 'PROGRESS:40', 'gpt-4.1-mini', '.ralph/worktrees/T-1'],
    );
    assert.equal(t1.costUsd, (800 + 200) / 1_000_000, 'priced on the host');
    assert.equal(state.tasks.find((t) => t.id === 'T-4')?.worktree, '.ralph/worktrees/T-4', 'a kept worktree stays on the card');
  });

  it('lists the merge queue with states and labels the merged check by its target branch', () => {
    const state = panelOf(parallelRun()).state;
    assert.deepEqual(
      state.queue.map((q) => `${q.taskId}:${q.state}`),
      ['T-3:checking'],
    );
    assert.equal(state.mergeTarget, 'main');
    const t3 = state.tasks.find((t) => t.id === 'T-3')!;
    assert.equal(t3.merge, 'checking');
    assert.equal(t3.gatesMergeTarget, 'main', 'not "after iteration ?"');
    assert.equal(t3.gatesIteration, undefined);
    assert.deepEqual(
      t3.gates.map((g) => `${g.name}:${g.summary}`),
      ['unit:5 passed'],
      'the re-check replaced the iteration gates',
    );
  });

  it('records the merged check gates on the landed entry; a conflict sends it back to a tile and re-queues it last', () => {
    const s = parallelRun();
    s.add({
      type: 'merge',
      taskId: 'T-3',
      state: 'merged',
      title: 'Docs',
      target: 'main',
      attempts: 1,
      commit: 'abcdef1234',
      detail: 'merged into main as abcdef1234',
      gates: [{ name: 'unit', passed: true, summary: '5 passed' }],
    });
    s.add({ type: 'task.finished', taskId: 'T-3', status: 'done', iterations: 1, reason: 'merged into main' });
    s.add({ type: 'worktree', taskId: 'T-3', state: 'removed', path: wt('T-3'), branch: 'ralph/T-3' });
    s.add({ type: 'merge', taskId: 'T-2', state: 'queued', title: 'Signup API', target: 'main', attempts: 1 });
    s.add({ type: 'merge', taskId: 'T-2', state: 'merging', title: 'Signup API', target: 'main', attempts: 1 });
    s.add({
      type: 'merge',
      taskId: 'T-2',
      state: 'conflict',
      title: 'Signup API',
      target: 'main',
      attempts: 1,
      files: ['src/api.ts'],
      detail: 'conflict in src/api.ts',
    });
    let state = panelOf(s).state;
    const merged = state.queue.find((q) => q.taskId === 'T-3')!;
    assert.deepEqual([merged.state, merged.commit, merged.gates?.map((g) => g.passed)], ['merged', 'abcdef1234', [true]]);
    assert.equal(state.tasks.find((t) => t.id === 'T-3')?.worktree, undefined, 'removed once merged');
    const conflict = state.queue.find((q) => q.taskId === 'T-2')!;
    assert.deepEqual([conflict.state, conflict.files], ['conflict', ['src/api.ts']]);
    assert.deepEqual(
      runningAgents(state).map((t) => t.id),
      ['T-1', 'T-2'],
      'sent back: an agent again',
    );

    s.add({ type: 'merge', taskId: 'T-2', state: 'queued', title: 'Signup API', target: 'main', attempts: 2 });
    state = panelOf(s).state;
    assert.deepEqual(
      state.queue.map((q) => `${q.taskId}:${q.state}:${q.attempts}`),
      ['T-3:merged:1', 'T-2:queued:2'],
    );
    assert.equal(state.queue[1].files, undefined, 'a new attempt starts without the old verdict');
    // the next run keeps only what the queue still holds
    const next = reducePanel(state, { type: 'run.started', runId: 'run-q', seq: 1, time: '2026-01-02T00:00:00Z' });
    assert.deepEqual(
      next.queue.map((q) => q.taskId),
      ['T-2'],
    );
  });

  it('a snapshot plus later inputs rebuilds the same parallel state (the webview and the host agree)', () => {
    const model = new PanelModel();
    const snapshots: PanelState[] = [];
    const inputs: unknown[] = [];
    model.subscribe(({ input }) => {
      inputs.push(JSON.parse(JSON.stringify(input)));
      snapshots.push(JSON.parse(JSON.stringify(model.state)));
    });
    for (const e of parallelRun().events) model.ingest(e);
    const full = stateDigest(model.state);
    for (let k = 0; k < inputs.length; k += 7) {
      let state = snapshots[k];
      for (const input of inputs.slice(k + 1)) state = reducePanel(state, input as never);
      assert.equal(stateDigest(state), full, `split at ${k}`);
    }
  });

  it('the host maps core events to protocol events: signals formatted, checkpoints dropped, paths relative', () => {
    const stamp = { runId: 'r', seq: 1, time: 't' };
    assert.deepEqual(
      toPanelEvent({ type: 'signal', taskId: 'T-1', iteration: 2, signal: { kind: 'BLOCKED', reason: 'needs a key' }, ...stamp }, {}),
      {
        type: 'signal',
        taskId: 'T-1',
        iteration: 2,
        kind: 'BLOCKED',
        text: 'BLOCKED:needs a key',
        reason: 'needs a key',
        ...stamp,
      },
    );
    assert.equal(toPanelEvent({ type: 'checkpoint', taskId: 'T-1', iteration: 1, file: 'x', ...stamp }, {}), undefined);
    assert.equal(toPanelEvent({ type: 'budget', costUsd: 1, tokens: 1, taskCostUsd: 1, taskTokens: 1, ...stamp }, {}), undefined);
    assert.equal(relativeWorktreePath('/a/b/.ralph/worktrees/T-9'), '.ralph/worktrees/T-9');
    assert.equal(relativeWorktreePath('/elsewhere/x'), '/elsewhere/x');
    // an unknown event type from a newer core is not passed on blindly
    assert.equal(toPanelEvent({ type: 'something.new', ...stamp } as never, {}), undefined);
  });

  it('src/protocol and src/webview import nothing from the core or the extension but the warning policy, a leaf (the webview bundle carries no other core code)', async () => {
    const root = path.resolve(__dirname, '../../../../src');
    const offenders: string[] = [];
    for (const dir of ['protocol', 'webview']) {
      for (const file of await walk(path.join(root, dir))) {
        const text = await fs.readFile(file, 'utf8');
        for (const match of text.matchAll(/from '([^']+)'/g)) {
          const target = path.resolve(path.dirname(file), match[1]);
          const inside =
            ['protocol', 'webview'].some((d) => target.startsWith(path.join(root, d))) || target === path.join(root, 'core/warningPolicy');
          if (match[1].startsWith('.') && !inside) offenders.push(`${path.relative(root, file)} → ${match[1]}`);
          if (match[1] === 'vscode') offenders.push(`${path.relative(root, file)} → vscode`);
        }
      }
    }
    assert.deepEqual(offenders, []);
    // the one core file they read imports nothing itself
    assert.doesNotMatch(await fs.readFile(path.join(root, 'core/warningPolicy.ts'), 'utf8'), /^import /m);
  });

  it('the panel may ask for Clean Up Worktree on a task (checked like every command it sends)', () => {
    assert.equal(parseWebviewMessage({ type: 'command', command: 'cleanUpWorktree', taskId: 'T-4' }).ok, true);
    assert.equal(parseWebviewMessage({ type: 'command', command: 'cleanUpWorktree', taskId: '../T-4' }).ok, false);
  });

  it('an empty state has an empty queue and no tiles', () => {
    assert.deepEqual(emptyPanelState().queue, []);
    assert.deepEqual(runningAgents(emptyPanelState()), []);
  });
});

describe('live status of a parallel run (status bar and tree)', () => {
  function live(events: RalphEventBody[]): LiveStatus {
    const s = new EventScript();
    let status: LiveStatus = { state: 'running' };
    for (const body of events) status = reduceLive(status, s.add(body));
    return status;
  }
  const started = (id: string): RalphEventBody[] => [
    { type: 'worktree', taskId: id, state: 'ready', path: wt(id), branch: `ralph/${id}` },
    { type: 'task.started', taskId: id, title: `Task ${id}`, iteration: 1, maxIterations: 5, resumed: false },
    { type: 'worktree', taskId: id, state: 'ready', path: wt(id), branch: `ralph/${id}` },
  ];

  it('counts agents and the merge queue; the queued task is no longer an agent', () => {
    const status = live([
      { type: 'run.started', workspace: WS, taskIds: [] },
      ...started('T-1'),
      ...started('T-2'),
      ...started('T-3'),
      ...started('T-4'),
      { type: 'signal', taskId: 'T-2', iteration: 1, signal: { kind: 'PROGRESS', percent: 60 } },
      { type: 'merge', taskId: 'T-4', state: 'queued' },
    ]);
    assert.deepEqual(
      status.agents?.map((a) => a.taskId),
      ['T-1', 'T-2', 'T-3'],
    );
    assert.equal(status.agents?.[1].progress, 60);
    assert.equal(status.agents?.[0].worktree, wt('T-1'));
    assert.deepEqual(status.queue, [{ taskId: 'T-4', state: 'queued' }]);
  });

  it('a task checked ahead of its own gates stays an agent until its loop accepts COMPLETE; taken back, it is still one', () => {
    const ahead = live([
      ...started('T-1'),
      ...started('T-2'),
      { type: 'merge', taskId: 'T-1', state: 'queued', provisional: true },
      { type: 'merge', taskId: 'T-1', state: 'checking', provisional: true, chain: { place: 1, ahead: [] } },
      { type: 'merge', taskId: 'T-2', state: 'checking', provisional: true, chain: { place: 2, ahead: ['T-1'] } },
    ]);
    assert.deepEqual(
      ahead.agents?.map((a) => a.taskId),
      ['T-1', 'T-2'],
    );
    assert.deepEqual(ahead.queue ?? [], []);
    const s = new EventScript('run-2');
    let next = ahead;
    for (const body of [
      { type: 'merge', taskId: 'T-1', state: 'checking', chain: { place: 1, ahead: [] } },
      { type: 'merge', taskId: 'T-2', state: 'failed', detail: 'taken back: its loop did not accept COMPLETE' },
    ] as RalphEventBody[])
      next = reduceLive(next, s.add(body));
    assert.deepEqual(
      next.agents?.map((a) => a.taskId),
      ['T-2'],
    );
    assert.deepEqual(next.queue, [{ taskId: 'T-1', state: 'checking' }]);
  });

  it('follows the queue to the end: merging, merged and done leave no trace; a conflict brings the agent back', () => {
    const status = live([
      ...started('T-1'),
      ...started('T-2'),
      { type: 'merge', taskId: 'T-1', state: 'queued' },
      { type: 'merge', taskId: 'T-1', state: 'merging' },
      { type: 'merge', taskId: 'T-2', state: 'queued' },
      { type: 'merge', taskId: 'T-1', state: 'checking' },
    ]);
    assert.deepEqual(
      status.queue?.map((q) => `${q.taskId}:${q.state}`),
      ['T-1:checking', 'T-2:queued'],
      'the order of the queue is kept',
    );
    assert.deepEqual(status.agents, []);
    const after = [
      { type: 'merge', taskId: 'T-1', state: 'merged' },
      { type: 'task.finished', taskId: 'T-1', status: 'done', iterations: 1, reason: 'merged' },
      { type: 'merge', taskId: 'T-2', state: 'merging' },
      { type: 'merge', taskId: 'T-2', state: 'conflict' },
      { type: 'task.started', taskId: 'T-2', title: 'Task T-2', iteration: 2, maxIterations: 5, resumed: true },
    ] as RalphEventBody[];
    const s = new EventScript('run-2');
    let end = status;
    for (const body of after) end = reduceLive(end, s.add(body));
    assert.deepEqual(end.queue, []);
    assert.deepEqual(
      end.agents?.map((a) => `${a.taskId}@${a.iteration}`),
      ['T-2@2'],
    );
    assert.equal(end.taskId, 'T-2', 'the single-agent fields follow the last agent');
  });

  it('a semi-auto hold (task-ended) asks for attention', () => {
    const status = live([...started('T-1'), { type: 'warning', taskId: 'T-1', code: 'task-ended', message: 'T-1 ended blocked' }]);
    assert.equal(status.attention, 'T-1 ended blocked');
  });
});

async function walk(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await walk(full)));
    else if (entry.name.endsWith('.ts')) out.push(full);
  }
  return out;
}
