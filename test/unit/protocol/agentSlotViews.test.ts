/**
 * Issue 34 in the views: a task whose gates run without its agent slot, or that waits for one,
 * is told apart from an agent talking to the model — in the panel's state (host and webview
 * rebuild the same), its tiles' look and heading, the live status of the status bar and tree,
 * and the terminal's lines.
 */
import * as assert from 'node:assert/strict';
import type { AgentSlotState, RalphEventBody } from '../../../src/core/events';
import { formatEvent } from '../../../src/core/eventFormat';
import { agentsHeading, agentTileLook } from '../../../src/protocol/agentTiles';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { runningAgents, stateDigest, type PanelState } from '../../../src/protocol/panelState';
import { reduceLive } from '../../../src/ui/liveReducer';
import type { LiveStatus } from '../../../src/ui/liveStatus';
import { PanelModel } from '../../../src/ui/panel/panelModel';
import { toPanelEvent } from '../../../src/ui/panel/toPanelEvent';
import { EventScript } from '../../fixtures/panelEvents';

const WS = '/home/me/project';

/** Three tasks, two slots: T-1 on its gates (its slot went to T-3), T-2 talking, T-3 talking. */
function threeTasksTwoSlots(): EventScript {
  const s = new EventScript('run-s');
  s.add({ type: 'run.started', workspace: WS, taskIds: [] });
  for (const id of ['T-1', 'T-2']) {
    s.add({ type: 'task.started', taskId: id, title: `Task ${id}`, iteration: 1, maxIterations: 5, resumed: false });
    s.add({ type: 'iteration.started', taskId: id, iteration: 1, maxIterations: 5, model: 'm' });
  }
  s.add({ type: 'agent.slot', taskId: 'T-1', state: 'gates' });
  s.add({ type: 'gate.started', taskId: 'T-1', iteration: 1, gate: 'unit', kind: 'tests', command: 'npm test' });
  s.add({ type: 'task.started', taskId: 'T-3', title: 'Task T-3', iteration: 1, maxIterations: 5, resumed: false });
  s.add({ type: 'iteration.started', taskId: 'T-3', iteration: 1, maxIterations: 5, model: 'm' });
  return s;
}

function panelOf(s: EventScript): PanelModel {
  const model = new PanelModel();
  for (const e of s.events) model.ingest(e);
  return model;
}

const slotOf = (state: PanelState, id: string) => state.tasks.find((t) => t.id === id)?.slot;

describe('agent slots in the views (issue 34)', () => {
  it('the host passes agent.slot to the panel as it is', () => {
    const stamp = { runId: 'r', seq: 3, time: 't' };
    for (const state of ['model', 'gates', 'waiting'] as AgentSlotState[])
      assert.deepEqual(toPanelEvent({ type: 'agent.slot', taskId: 'T-1', state, ...stamp }, {}), {
        type: 'agent.slot',
        taskId: 'T-1',
        state,
        ...stamp,
      });
  });

  it('a task on its gates keeps its tile, told apart from the agents talking to the model', () => {
    const state = panelOf(threeTasksTwoSlots()).state;
    const tiles = runningAgents(state);
    assert.deepEqual(
      tiles.map((t) => [t.id, t.slot]),
      [
        ['T-1', 'gates'],
        ['T-2', undefined],
        ['T-3', undefined],
      ],
    );
    assert.deepEqual(
      tiles.map((t) => agentTileLook(t).state),
      ['gates', 'model', 'model'],
    );
    assert.match(agentTileLook(tiles[0]).label, /gates running/);
    assert.equal(agentTileLook(tiles[0]).icon, 'beaker');
    assert.equal(agentTileLook(tiles[1]).icon, 'sync~spin');
    assert.equal(agentsHeading(tiles), 'Agents (2 talking to the model · 1 on gates)');
  });

  it('sent back by its gates it waits, then talks again; its next iteration clears the mark', () => {
    const s = threeTasksTwoSlots();
    s.add({ type: 'agent.slot', taskId: 'T-1', state: 'waiting' });
    let state = panelOf(s).state;
    assert.equal(slotOf(state, 'T-1'), 'waiting');
    assert.equal(agentTileLook(runningAgents(state)[0]).state, 'waiting');
    assert.equal(agentsHeading(runningAgents(state)), 'Agents (2 talking to the model · 1 waiting for a slot)');
    s.add({ type: 'agent.slot', taskId: 'T-1', state: 'model' });
    state = panelOf(s).state;
    assert.equal(slotOf(state, 'T-1'), undefined);
    assert.ok(!('slot' in state.tasks.find((t) => t.id === 'T-1')!), 'no undefined key is kept');
    s.add({ type: 'agent.slot', taskId: 'T-1', state: 'gates' });
    s.add({ type: 'iteration.started', taskId: 'T-1', iteration: 2, maxIterations: 5, model: 'm' });
    assert.equal(slotOf(panelOf(s).state, 'T-1'), undefined, 'a new iteration is a conversation: it holds a slot');
    assert.equal(agentsHeading(runningAgents(panelOf(s).state)), 'Agents (3 running)');
  });

  it('its work in the queue, its end, or the run’s end drop the mark; a check made ahead keeps it', () => {
    const s = threeTasksTwoSlots();
    s.add({ type: 'merge', taskId: 'T-1', state: 'queued', title: 'Task T-1', target: 'main', attempts: 1, provisional: true });
    assert.equal(slotOf(panelOf(s).state, 'T-1'), 'gates', 'checked ahead of its gates: still on them');
    s.add({ type: 'merge', taskId: 'T-1', state: 'queued', title: 'Task T-1', target: 'main', attempts: 1 });
    assert.equal(slotOf(panelOf(s).state, 'T-1'), undefined);
    s.add({ type: 'agent.slot', taskId: 'T-2', state: 'gates' });
    s.add({ type: 'task.finished', taskId: 'T-2', status: 'failed', iterations: 1, reason: 'red' });
    assert.equal(slotOf(panelOf(s).state, 'T-2'), undefined);
    s.add({ type: 'agent.slot', taskId: 'T-3', state: 'gates' });
    s.add({ type: 'run.finished', results: [], reason: 'stopped by the user' });
    assert.ok(!panelOf(s).state.tasks.some((t) => t.slot), 'a finished run leaves no task on its gates');
  });

  it('a snapshot plus later inputs rebuilds the same state (the webview and the host agree)', () => {
    const model = new PanelModel();
    const snapshots: PanelState[] = [];
    const inputs: unknown[] = [];
    model.subscribe(({ input }) => {
      inputs.push(JSON.parse(JSON.stringify(input)));
      snapshots.push(JSON.parse(JSON.stringify(model.state)));
    });
    const s = threeTasksTwoSlots();
    s.add({ type: 'agent.slot', taskId: 'T-1', state: 'waiting' });
    s.add({ type: 'agent.slot', taskId: 'T-2', state: 'gates' });
    s.add({ type: 'agent.slot', taskId: 'T-1', state: 'model' });
    for (const e of s.events) model.ingest(e);
    const full = stateDigest(model.state);
    for (let k = 0; k < inputs.length; k += 2) {
      let state = snapshots[k];
      for (const input of inputs.slice(k + 1)) state = reducePanel(state, input as never);
      assert.equal(stateDigest(state), full, `split at ${k}`);
    }
  });

  it('the live status counts talking agents apart from tasks on their gates, and keeps its focus', () => {
    const s = new EventScript('run-l');
    let live: LiveStatus = { state: 'running' };
    const apply = (body: RalphEventBody) => (live = reduceLive(live, s.add(body)));
    apply({ type: 'run.started', workspace: WS, taskIds: [] });
    for (const id of ['T-1', 'T-2', 'T-3'])
      apply({ type: 'task.started', taskId: id, title: id, iteration: 1, maxIterations: 5, resumed: false });
    const focus = live.taskId;
    apply({ type: 'agent.slot', taskId: 'T-1', state: 'gates' });
    apply({ type: 'agent.slot', taskId: 'T-2', state: 'waiting' });
    assert.deepEqual(
      live.agents?.map((a) => [a.taskId, a.slot]),
      [
        ['T-1', 'gates'],
        ['T-2', 'waiting'],
        ['T-3', undefined],
      ],
    );
    assert.equal(live.taskId, focus, 'a slot moving does not move the focus');
    const same = live;
    apply({ type: 'agent.slot', taskId: 'T-9', state: 'gates' });
    assert.equal(live, same, 'a task that is no agent here changes nothing');
    apply({ type: 'agent.slot', taskId: 'T-2', state: 'model' });
    apply({ type: 'iteration.started', taskId: 'T-1', iteration: 2, maxIterations: 5, model: 'm' });
    assert.deepEqual(
      live.agents?.map((a) => a.slot),
      [undefined, undefined, undefined],
    );
  });

  it('the terminal says each move in one line, prefixed with its task in a parallel run', () => {
    const s = new EventScript('run-t');
    const line = (state: AgentSlotState) => formatEvent(s.add({ type: 'agent.slot', taskId: 'T-1', state }), { taskPrefix: true });
    assert.equal(line('gates'), '[T-1] ⇣ its gates run: its agent slot goes to the next task meanwhile');
    assert.equal(line('waiting'), '[T-1] … sent back by its gates: waits for a free agent slot (before any new task)');
    assert.equal(line('model'), '[T-1] ⇡ has an agent slot again');
  });
});
