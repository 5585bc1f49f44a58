import * as assert from 'node:assert/strict';
import type { RalphEvent } from '../../../src/core/events';
import type { PanelInput } from '../../../src/protocol/panelInput';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { emptyPanelState, LIMITS, type PanelState, stateDigest } from '../../../src/protocol/panelState';
import { InputBatcher } from '../../../src/ui/panel/inputBatcher';
import { PanelModel } from '../../../src/ui/panel/panelModel';
import { EventScript, iteration, sampleRun } from '../../fixtures/panelEvents';

function replay(events: readonly RalphEvent[], from: PanelState = emptyPanelState()): PanelState {
  const model = new PanelModel(() => ({}), from);
  for (const event of events) model.ingest(event);
  return model.state;
}

/** What crosses postMessage: JSON. */
const wire = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

describe('progress panel model', () => {
  it('builds the progress box, timeline, delegation card, gates, stream and warning of a run', () => {
    const state = replay(sampleRun(3).events);
    const task = state.tasks.find((t) => t.id === 'T-001')!;
    assert.equal(state.currentTaskId, 'T-001');
    assert.equal(state.run.phase, 'running');
    assert.equal(task.iteration, 4);
    assert.equal(task.maxIterations, 10);
    assert.equal(task.progress, 45);
    assert.equal(task.lastSignal, 'PROGRESS:45');
    assert.equal(task.commits, 3);
    assert.deepEqual(task.tests, { passed: 4, failed: 2, total: 6, failing: ['login accepts + in emails', 'login trims spaces'] });
    assert.equal(task.model, 'gpt-4.1');
    assert.deepEqual(
      task.iterations.map((r) => [r.n, r.signal ?? null, r.escalatedFrom ?? null]),
      [
        [1, 'PROGRESS:15', null],
        [2, 'PROGRESS:30', null],
        [3, 'PROGRESS:45', 'gpt-4.1-mini'],
        [4, null, null],
      ],
    );
    assert.deepEqual(task.iterations[0].gates, { passed: 0, failed: 1, total: 1 });
    assert.equal(task.iterations[1].delegations, 1);
    assert.equal(task.elapsedMs, 91_000 + 92_000 + 93_000);
    const [delegation] = task.delegations;
    assert.equal(delegation.status, 'partial');
    assert.deepEqual(
      delegation.evidence.map((e) => `[${e.tag}] ${e.tool}`),
      ['[OK] read_file', '[ERROR] run_command', '[MISSING] git_commit'],
    );
    assert.match(delegation.envelope!, /\[DELEGATION RESULT — DEVO\]/);
    assert.deepEqual(task.stream, [
      { kind: 'text', text: 'Trying a different approach.' },
      { kind: 'note', level: 'warning', text: 'No commits in 5 iterations: the agent may be stuck.' },
    ]);
    assert.equal(state.warnings.length, 1);
    assert.equal(state.warnings[0].code, 'no-commits');
    assert.equal(state.warnings[0].iteration, 4);
  });

  it('a snapshot at any point plus the inputs after it rebuilds exactly the same state', () => {
    const model = new PanelModel();
    const inputs: PanelInput[] = [];
    const snapshots: PanelState[] = [wire(model.state)];
    model.subscribe(({ input }) => {
      inputs.push(wire(input));
      snapshots.push(wire(model.state));
    });
    for (const event of sampleRun(4).events) model.ingest(event);
    const full = stateDigest(model.state);
    for (let k = 0; k <= inputs.length; k++) {
      let state = snapshots[k];
      for (const input of inputs.slice(k)) state = reducePanel(state, input);
      assert.equal(stateDigest(state), full, `split at ${k}`);
    }
  });

  it('an input that changes nothing keeps the state and uses no sequence number', () => {
    const model = new PanelModel();
    for (const event of sampleRun(1).events) model.ingest(event);
    const seq = model.seq;
    const before = model.state;
    assert.equal(model.apply({ type: 'run.paused', runId: 'x', seq: 1, time: 't' } as PanelInput), true);
    assert.equal(model.apply({ type: 'run.paused', runId: 'x', seq: 2, time: 't' } as PanelInput), false);
    assert.equal(model.seq, seq + 1);
    assert.notEqual(model.state, before);
  });

  it('stays bounded over 1,000 iterations', () => {
    const s = new EventScript();
    s.add({ type: 'task.started', taskId: 'T-9', title: 'long', iteration: 1, maxIterations: 2000, resumed: false });
    for (let n = 1; n <= 1000; n++) iteration(s, 'T-9', n, 2000, { progress: n % 100, delegate: n % 10 === 0 });
    const state = replay(s.events);
    const task = state.tasks[0];
    assert.equal(task.iterations.length, LIMITS.iterations);
    assert.equal(task.iterations.at(-1)!.n, 1000);
    assert.ok(task.delegations.length <= LIMITS.delegations);
    assert.ok(JSON.stringify(state).length < 400_000, `snapshot size ${JSON.stringify(state).length}`);
  });

  it('a Retry (store back to todo, no iterations) starts the task over; an adopted checkpoint brings back its timeline', () => {
    let state = replay(sampleRun(2, false).events);
    state = reducePanel(state, {
      type: 'task.finished',
      taskId: 'T-001',
      status: 'timeout',
      iterations: 2,
      reason: 'max iterations (2) reached',
      runId: 'r',
      seq: 99,
      time: '2026-01-01T11:00:00Z',
    });
    assert.equal(state.tasks[0].finish?.status, 'timeout');
    state = reducePanel(state, {
      type: 'panel.sync',
      time: 't',
      adopt: false,
      tasks: [{ id: 'T-001', title: 'Fix the login bug', status: 'todo', iterations: 0, updatedAt: 't' }],
    });
    assert.equal(state.tasks[0].iterations.length, 0);
    assert.equal(state.tasks[0].finish, undefined);

    const adopted = reducePanel(emptyPanelState(), {
      type: 'panel.sync',
      time: 't',
      adopt: true,
      tasks: [
        {
          id: 'T-002',
          title: 'From the CLI',
          status: 'halted',
          iterations: 2,
          progress: 40,
          updatedAt: 't',
          checkpoint: {
            elapsedMs: 5000,
            commits: 1,
            tokens: 900,
            costUsd: 0.01,
            unpricedTokens: 0,
            history: [
              { n: 1, startedAt: 'a', durationMs: 2000, model: 'm1', outcome: 'continue', tokens: 400, gates: [{ passed: false }] },
              { n: 2, startedAt: 'b', durationMs: 3000, model: 'm2', outcome: 'stopped', progress: 40, tokens: 500, gates: [] },
            ],
          },
        },
      ],
    });
    const task = adopted.tasks[0];
    assert.equal(adopted.currentTaskId, 'T-002');
    assert.deepEqual(
      task.iterations.map((r) => [r.n, r.durationMs, r.escalatedFrom ?? null]),
      [
        [1, 2000, null],
        [2, 3000, 'm1'],
      ],
    );
    assert.deepEqual(task.iterations[0].gates, { passed: 0, failed: 1, total: 1 });
    assert.equal(task.elapsedMs, 5000);
    assert.equal(task.commits, 1);
  });

  it("keeps the run's iteration limit when the store has none, and a resume answers the waiting warnings", () => {
    let state = replay(sampleRun(2).events);
    state = reducePanel(state, {
      type: 'panel.sync',
      time: 't',
      adopt: false,
      tasks: [{ id: 'T-001', title: 'Fix the login bug', status: 'in_progress', iterations: 3, updatedAt: 't' }],
    });
    assert.equal(state.tasks[0].maxIterations, 10);
    assert.equal(state.tasks[0].progress, 30);
    state = reducePanel(state, { type: 'run.paused', runId: 'run-1', seq: 500, time: 't' });
    assert.equal(state.run.phase, 'paused');
    assert.equal(state.warnings[0].resolved, undefined);
    state = reducePanel(state, { type: 'run.resumed', runId: 'run-1', seq: 501, time: 't' });
    assert.equal(state.run.phase, 'running');
    assert.equal(state.warnings[0].resolved, 'continue');
  });

  it('prices model responses with the configured prices', () => {
    const model = new PanelModel(() => ({ 'my-model': { input: 1, output: 2 } }));
    const s = new EventScript();
    s.add({ type: 'task.started', taskId: 'T-1', title: 't', iteration: 1, maxIterations: 5, resumed: false });
    s.add({ type: 'iteration.started', taskId: 'T-1', iteration: 1, maxIterations: 5, model: 'my-model' });
    s.add({
      type: 'model.response',
      taskId: 'T-1',
      iteration: 1,
      model: 'my-model',
      usage: { promptTokens: 1_000_000, completionTokens: 500_000, totalTokens: 1_500_000 },
      toolCalls: 0,
      finishReason: 'stop',
    });
    s.add({
      type: 'model.response',
      taskId: 'T-1',
      iteration: 1,
      model: 'unknown-model',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      toolCalls: 0,
      finishReason: 'stop',
    });
    for (const e of s.events) model.ingest(e);
    const task = model.state.tasks[0];
    assert.equal(task.costUsd, 2);
    assert.equal(task.unpricedTokens, 15);
    assert.equal(task.tokens, 1_500_015);
  });
});

describe('progress panel batching', () => {
  /** A webview stand-in: applies what the batcher sends with the same reducer. */
  function fakeWebview(model: PanelModel) {
    const view = { state: emptyPanelState(), seq: -1, messages: 0, snapshots: 0, gaps: 0 };
    const batcher = new InputBatcher(
      {
        inputs: (batch) => {
          view.messages++;
          const copy = wire(batch);
          if (copy.fromSeq !== view.seq + 1) view.gaps++;
          for (const input of copy.inputs) view.state = reducePanel(view.state, input);
          view.seq = copy.toSeq;
        },
        snapshot: () => {
          view.snapshots++;
          view.state = wire(model.state);
          view.seq = model.seq;
          batcher.reset(model.seq);
        },
      },
      { delayMs: 5 },
    );
    view.state = wire(model.state);
    view.seq = model.seq;
    batcher.reset(model.seq);
    model.subscribe(({ seq, input }) => batcher.push(seq, input));
    return { view, batcher };
  }

  it('a burst of 1,000 events reaches the view in a few messages, ending in the same state (counted, not timed)', () => {
    const model = new PanelModel();
    const { view, batcher } = fakeWebview(model);
    const s = new EventScript();
    s.add({ type: 'task.started', taskId: 'T-1', title: 'burst', iteration: 1, maxIterations: 100, resumed: false });
    s.add({ type: 'iteration.started', taskId: 'T-1', iteration: 1, maxIterations: 100, model: 'm' });
    while (s.events.length < 1000) {
      const i = s.events.length;
      if (i % 3 === 0)
        s.add({ type: 'tool.call', taskId: 'T-1', iteration: 1, callId: `c${i}`, tool: 'search', args: `{"query":"${i}"}` }, 1);
      else s.add({ type: 'model.delta', taskId: 'T-1', iteration: 1, text: `token${i} ` }, 1);
    }
    for (const event of s.events) model.ingest(event);
    batcher.flush();
    assert.equal(view.seq, model.seq);
    assert.equal(stateDigest(view.state), stateDigest(model.state));
    assert.equal(view.gaps, 0);
    assert.ok(view.messages <= 2, `${view.messages} messages`);
  });

  it('joins adjacent streamed text and still ends in the same state', () => {
    const model = new PanelModel();
    const { view, batcher } = fakeWebview(model);
    for (const event of sampleRun(3).events) model.ingest(event);
    batcher.flush();
    assert.equal(stateDigest(view.state), stateDigest(model.state));
  });

  it('sends a snapshot instead when the view falls too far behind', () => {
    const model = new PanelModel();
    const sent: string[] = [];
    const batcher = new InputBatcher(
      { inputs: (b) => sent.push(`inputs ${b.fromSeq}-${b.toSeq}`), snapshot: () => (sent.push('snapshot'), batcher.reset(model.seq)) },
      { delayMs: 1000, maxPending: 50 },
    );
    model.subscribe(({ seq, input }) => batcher.push(seq, input));
    const s = new EventScript();
    s.add({ type: 'task.started', taskId: 'T-1', title: 'x', iteration: 1, maxIterations: 9, resumed: false });
    for (let i = 0; i < 100; i++) s.add({ type: 'tool.call', taskId: 'T-1', iteration: 1, callId: `c${i}`, tool: 't', args: '' });
    for (const event of s.events) model.ingest(event);
    batcher.flush();
    assert.deepEqual(sent, ['snapshot']);
    batcher.dispose();
  });

  it('shows on the gate card how a gate was weakened, or the changes the task was allowed to make', () => {
    const s = new EventScript();
    s.add({ type: 'task.started', taskId: 'T-001', title: 'Fix add', iteration: 1, maxIterations: 5, resumed: false });
    const weakened = "`package.json scripts.test` changed since the task's base (`node --test` → `exit 0`) — restore it";
    s.add({ type: 'gate.started', taskId: 'T-001', iteration: 1, gate: 'tests', kind: 'tests', command: 'npm test' });
    s.add({
      type: 'gate.finished',
      taskId: 'T-001',
      iteration: 1,
      gate: 'tests',
      kind: 'tests',
      required: true,
      passed: false,
      summary: "passed; weakened against the task's base (1 change)",
      durationMs: 10,
      integrity: { violations: [weakened], allowed: [] },
    });
    let gate = replay(s.events).tasks.find((t) => t.id === 'T-001')!.gates[0];
    assert.equal(gate.passed, false);
    assert.deepEqual(gate.integrity, { violations: [weakened], allowed: [] });
    s.add({ type: 'gate.started', taskId: 'T-001', iteration: 2, gate: 'tests', kind: 'tests', command: 'npm test' });
    s.add({
      type: 'gate.finished',
      taskId: 'T-001',
      iteration: 2,
      gate: 'tests',
      kind: 'tests',
      required: true,
      passed: true,
      summary: '2/2 tests passing',
      durationMs: 10,
      integrity: { violations: [], allowed: ['allowed change'] },
    });
    gate = replay(s.events).tasks.find((t) => t.id === 'T-001')!.gates[0];
    assert.deepEqual(gate.integrity, { violations: [], allowed: ['allowed change'] }, 'the latest run replaces the earlier verdict');
    s.add({
      type: 'gate.finished',
      taskId: 'T-001',
      iteration: 3,
      gate: 'tests',
      kind: 'tests',
      required: true,
      passed: true,
      summary: '2/2 tests passing',
      durationMs: 10,
    });
    assert.equal(replay(s.events).tasks.find((t) => t.id === 'T-001')!.gates[0].integrity, undefined);
  });

  it('names pre-existing and flaky tests on the gate card, and the check and proof on the completion card', () => {
    const s = new EventScript();
    s.add({ type: 'task.started', taskId: 'T-001', title: 'Collapse spaces', iteration: 1, maxIterations: 5, resumed: false });
    s.add({ type: 'gate.started', taskId: 'T-001', iteration: 1, gate: 'tests', kind: 'tests', command: 'npm test' });
    s.add({
      type: 'gate.finished',
      taskId: 'T-001',
      iteration: 1,
      gate: 'tests',
      kind: 'tests',
      required: true,
      passed: true,
      summary: "3/4 tests passing, 1 failing — 1 already failing at the task's base, not held against the task",
      durationMs: 10,
      tests: { passed: 3, failed: 1, total: 4, failing: ['release date is in the future'] },
      preExisting: ['release date is in the future'],
      flaky: ['talks to the slow service'],
    });
    s.add({
      type: 'task.finished',
      taskId: 'T-001',
      status: 'done',
      iterations: 1,
      reason: 'slugs collapse spaces',
      proof: 'fail-to-pass proven: collapses runs of spaces (on the base: expected a-b)',
    });
    const state = wire(replay(s.events));
    const task = state.tasks.find((t) => t.id === 'T-001')!;
    assert.deepEqual(task.gates[0].preExisting, ['release date is in the future']);
    assert.deepEqual(task.gates[0].flaky, ['talks to the slow service']);
    assert.match(task.proof ?? '', /^fail-to-pass proven: collapses runs of spaces/);
  });
});
