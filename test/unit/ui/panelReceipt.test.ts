import * as assert from 'node:assert/strict';
import { emptyLine, type ReceiptSummary } from '../../../src/core/safety/receipt';
import { reducePanel } from '../../../src/shared/panelReducer';
import { emptyPanelState } from '../../../src/shared/panelState';
import { sampleRun } from '../../fixtures/panelEvents';
import { PanelModel } from '../../../src/ui/panel/panelModel';

describe('the completion card\'s receipt (panel model)', () => {
  it('keeps the receipt of task.finished for the card, and drops it when the task starts again', () => {
    const model = new PanelModel(() => ({}), emptyPanelState());
    for (const event of sampleRun(2, false).events) model.ingest(event);
    const receipt: ReceiptSummary = {
      total: { ...emptyLine(), calls: 3, promptTokens: 3500, cachedPromptTokens: 2300, completionTokens: 170, estimatedUsd: 0.00351, unpricedCalls: 1, providerUsd: 0.0065, providerReportedCalls: 2, retries: 1 },
      byModel: {},
      byRole: { orchestrator: { ...emptyLine(), calls: 2 }, devo: { ...emptyLine(), calls: 1, unpricedCalls: 1 } },
    };
    let state = reducePanel(model.state, { type: 'task.finished', taskId: 'T-001', status: 'done', iterations: 2, reason: 'complete', receipt, runId: 'r', seq: 99, time: '2026-01-01T11:00:00Z' });
    assert.deepEqual(JSON.parse(JSON.stringify(state.tasks[0].receipt)), receipt);
    state = reducePanel(state, { type: 'task.started', taskId: 'T-001', title: 'Fix the login bug', iteration: 1, maxIterations: 5, resumed: false, runId: 'r2', seq: 1, time: '2026-01-01T12:00:00Z' });
    assert.equal(state.tasks[0].receipt, undefined);
  });
});
