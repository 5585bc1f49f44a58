import * as assert from 'node:assert/strict';
import type { RalphEvent } from '../../../src/core/events';
import { emptyLine, type ReceiptSummary } from '../../../src/core/spend/receipt';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { emptyPanelState } from '../../../src/protocol/panelState';
import { sampleRun } from '../../fixtures/panelEvents';
import { PanelModel } from '../../../src/ui/panel/panelModel';

describe("the completion card's receipt (panel model)", () => {
  it('formats the receipt of task.finished on the host for the card, and drops it when the task starts again', () => {
    const model = new PanelModel(() => ({}), emptyPanelState());
    for (const event of sampleRun(2, false).events) model.ingest(event);
    const receipt: ReceiptSummary = {
      total: {
        ...emptyLine(),
        calls: 3,
        promptTokens: 3500,
        cachedPromptTokens: 2300,
        completionTokens: 170,
        estimatedUsd: 0.00351,
        unpricedCalls: 1,
        providerUsd: 0.0065,
        providerReportedCalls: 2,
        retries: 1,
      },
      byModel: {},
      byRole: {
        orchestrator: { ...emptyLine(), calls: 2, promptTokens: 2000, completionTokens: 100, estimatedUsd: 0.00351 },
        devo: { ...emptyLine(), calls: 1, unpricedCalls: 1 },
      },
    };
    const finished: RalphEvent = {
      type: 'task.finished',
      taskId: 'T-001',
      status: 'done',
      iterations: 2,
      reason: 'complete',
      receipt,
      runId: 'r',
      seq: 99,
      time: '2026-01-01T11:00:00Z',
    };
    model.ingest(finished);
    const view = model.state.tasks[0].receipt;
    assert.ok(view, 'the card has a receipt');
    assert.equal(view.total.calls, 3);
    assert.equal(view.total.tokens, '3500 in (2300 cached) / 170 out');
    assert.match(view.total.cost, /^\$0\.00\d+ \+ unknown for 1 of 3 calls \(no price\)$/, 'the unpriced call stays unknown, never $0');
    assert.match(view.total.providerCost, /^\$0\.00650 \(provider-reported, 2 of 3 calls\)$/);
    assert.match(view.total.failures ?? '', /^1 retry: usage unknown/);
    assert.deepEqual(
      view.byRole.map((r) => [r.role, r.calls]),
      [
        ['orchestrator', 2],
        ['devo', 1],
      ],
    );
    assert.equal(view.byRole[1].cost, 'unknown (no price in llm.prices)');
    assert.equal(view.byRole[1].providerCost, '—');
    const state = reducePanel(model.state, {
      type: 'task.started',
      taskId: 'T-001',
      title: 'Fix the login bug',
      iteration: 1,
      maxIterations: 5,
      resumed: false,
      runId: 'r2',
      seq: 100,
      time: '2026-01-01T12:00:00Z',
    });
    assert.equal(state.tasks[0].receipt, undefined);
  });
});

describe('the cost of editor models in the panel', () => {
  it("counts an editor model's tokens as included in the editor plan, not unpriced, never $0", () => {
    const model = new PanelModel(
      () => ({}),
      emptyPanelState(),
      () => 'vscode',
    );
    for (const event of sampleRun(1, true).events) model.ingest(event);
    const task = model.state.tasks[0];
    assert.ok(task.tokens > 0);
    assert.equal(task.includedTokens, task.tokens);
    assert.equal(task.unpricedTokens, 0);
    assert.equal(task.costUsd, 0);
  });

  it('prices the same model on an OpenAI-compatible endpoint at its list price, nothing "included"', () => {
    const model = new PanelModel(
      () => ({}),
      emptyPanelState(),
      () => 'openai',
    );
    for (const event of sampleRun(1, true).events) model.ingest(event);
    const task = model.state.tasks[0];
    assert.equal(task.includedTokens, 0);
    assert.equal(task.unpricedTokens, 0);
    assert.ok(task.costUsd > 0);
  });
});
