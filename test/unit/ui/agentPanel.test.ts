/**
 * The panel and the status bar name the agent and model of each iteration (issue 46), through the
 * host's own conversion (`toPanelEvent`), the protocol's reducer and the status bar's live status.
 */
import * as assert from 'node:assert/strict';
import type { RalphEvent } from '../../../src/core/events';
import { ZERO_USAGE } from '../../../src/core/llm/types';
import { agentModelOf, agentModelText } from '../../../src/protocol/agentModel';
import { emptyPanelState, type PanelState } from '../../../src/protocol/panelState';
import { iterationAgentWords } from '../../../src/ui/iterationAgent';
import { reduceLive } from '../../../src/ui/liveReducer';
import type { LiveStatus } from '../../../src/ui/liveStatus';
import { PanelModel } from '../../../src/ui/panel/panelModel';
import { EventScript } from '../../fixtures/panelEvents';

function replay(events: readonly RalphEvent[], from: PanelState = emptyPanelState()): PanelState {
  const model = new PanelModel(() => ({}), from);
  for (const event of events) model.ingest(event);
  return model.state;
}

/** A task that fails twice on the built-in agent's cheap model, escalates, and runs on Claude Code's default model. */
function ladderRun(): EventScript {
  const s = new EventScript();
  s.add({ type: 'run.started', workspace: '/w', taskIds: ['T-1'] });
  s.add({ type: 'task.started', taskId: 'T-1', title: 'Fix add', iteration: 1, maxIterations: 5, resumed: false });
  for (const n of [1, 2]) {
    s.add({ type: 'iteration.started', taskId: 'T-1', iteration: n, maxIterations: 5, model: 'gpt-4.1-mini', agent: 'builtin' });
    s.add({ type: 'iteration.finished', taskId: 'T-1', iteration: n, outcome: 'continue', durationMs: 1000, usage: ZERO_USAGE });
  }
  s.add({
    type: 'escalation',
    taskId: 'T-1',
    iteration: 2,
    from: 'gpt-4.1-mini',
    to: 'Claude Code: its default model',
    reason: '2 consecutive failed iterations',
    toAgent: 'claude-code',
  });
  s.add({
    type: 'iteration.started',
    taskId: 'T-1',
    iteration: 3,
    maxIterations: 5,
    model: 'Claude Code: its default model',
    agent: 'claude-code',
  });
  s.add({ type: 'agent.session', taskId: 'T-1', iteration: 3, agent: 'claude-code', sessionId: 'sess-1', model: 'claude-sonnet-4-5' });
  return s;
}

describe('the agent and model of each iteration, in the panel and the status bar', () => {
  it('the view model names the agent apart from its model, per iteration and for the task, across an escalation', () => {
    const state = replay(ladderRun().events);
    const task = state.tasks.find((t) => t.id === 'T-1')!;
    assert.deepEqual(
      task.iterations.map((r) => [r.n, r.agent, r.model, r.sessionModel ?? null, r.escalatedFrom ?? null]),
      [
        [1, 'Built-in agent', 'gpt-4.1-mini', null, null],
        [2, 'Built-in agent', 'gpt-4.1-mini', null, null],
        [3, 'Claude Code', 'Claude Code: its default model', 'claude-sonnet-4-5', 'gpt-4.1-mini'],
      ],
    );
    assert.equal(task.agent, 'Claude Code');
    // the words the progress box, the timeline and the tiles show
    assert.deepEqual(agentModelOf(task.iterations[0]), { agent: 'Built-in agent', model: 'gpt-4.1-mini' });
    assert.deepEqual(
      agentModelOf(task.iterations[2]),
      { agent: 'Claude Code', model: 'claude-sonnet-4-5' },
      "the session's model for the CLI's default",
    );
    assert.deepEqual(task.iterations.map(agentModelText), [
      'Built-in agent · gpt-4.1-mini',
      'Built-in agent · gpt-4.1-mini',
      'Claude Code · claude-sonnet-4-5',
    ]);
    // until the next iteration starts, the stream's note names the agent and model the task moved to
    const events = ladderRun().events;
    const atEscalation = replay(events.slice(0, events.findIndex((e) => e.type === 'escalation') + 1)).tasks[0];
    assert.ok(
      atEscalation.stream.some((e) => e.kind === 'note' && /escalated gpt-4\.1-mini → Claude Code: its default model/.test(e.text)),
      JSON.stringify(atEscalation.stream),
    );
  });

  it('a named model stays as named; a run logged before the agent was told shows the model alone', () => {
    assert.equal(agentModelText({ agent: 'Codex', model: 'Codex: gpt-5-codex', sessionModel: 'gpt-5-codex-2026' }), 'Codex · gpt-5-codex');
    assert.equal(agentModelText({ model: 'gpt-4.1' }), 'gpt-4.1');
    const old = new EventScript();
    old.add({ type: 'iteration.started', taskId: 'T-9', iteration: 1, maxIterations: 3, model: 'Claude Code: sonnet' });
    const task = replay(old.events).tasks.find((t) => t.id === 'T-9')!;
    assert.equal(task.iterations[0].agent, undefined);
    assert.equal(agentModelText(task.iterations[0]), 'Claude Code: sonnet');
  });

  it('the status bar follows the iteration at work: the built-in agent in the tooltip, the CLI beside the state', () => {
    let live: LiveStatus = { state: 'running' };
    const seen: (ReturnType<typeof iterationAgentWords> | undefined)[] = [];
    for (const event of ladderRun().events) {
      live = reduceLive(live, event);
      if (event.type === 'iteration.started') seen.push(iterationAgentWords(live));
    }
    assert.deepEqual(seen, [
      { full: 'Built-in agent: gpt-4.1-mini' },
      { full: 'Built-in agent: gpt-4.1-mini' },
      { short: 'Claude Code', full: 'Claude Code: its default model' },
    ]);
    assert.equal(iterationAgentWords({ ...live, state: 'idle' }), undefined, 'no run, no iteration');
    const two = reduceLive(live, {
      ...ladderRun().events[0],
      type: 'iteration.started',
      taskId: 'T-2',
      iteration: 1,
      maxIterations: 5,
      model: 'Codex: gpt-5',
      agent: 'codex',
    } as RalphEvent);
    assert.equal(iterationAgentWords(two), undefined, 'several agents: each in the panel');
  });
});
