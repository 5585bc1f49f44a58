import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/core/config/load';
import { estimateCostUsd, formatUsd, priceOf } from '../../../src/core/llm/pricing';
import { BudgetExceededError, SpendMeter } from '../../../src/core/safety/budget';

describe('cost arithmetic', () => {
  it('prices tokens per 1M with configured prices first, then the built-in table', () => {
    const prices = { 'my-model': { input: 3, output: 15 } };
    assert.equal(estimateCostUsd('my-model', { promptTokens: 1_000_000, completionTokens: 200_000 }, prices), 6);
    assert.equal(estimateCostUsd('gpt-4.1-mini', { promptTokens: 500_000, completionTokens: 250_000 }, {}), 0.6);
    assert.deepEqual(priceOf('openai/gpt-4.1', {}), { input: 2, output: 8, cachedInput: 0.5 });
    assert.equal(estimateCostUsd('llama3', { promptTokens: 1, completionTokens: 1 }, {}), undefined);
    assert.equal(formatUsd(0.0042), '$0.0042');
    assert.equal(formatUsd(1.5), '$1.50');
    assert.equal(formatUsd(undefined), '—');
  });

  it('meters calls per model and refuses the call after a cap is reached', () => {
    const meter = new SpendMeter(parseConfig({ budget: { maxCostUsd: 0.01, taskMaxTokens: 5000 }, llm: { prices: { m: { input: 1, output: 1 } } } }));
    meter.beginTask('T-1', { m: { calls: 1, promptTokens: 1000, completionTokens: 1000 } });
    assert.equal(meter.taskTotals.tokens, 2000);
    meter.check();
    meter.record('m', { promptTokens: 2000, completionTokens: 1000 });
    assert.equal(meter.runTotals.byModel.m.calls, 1);
    assert.equal(meter.taskTotals.byModel.m.calls, 2);
    assert.throws(() => meter.check(), (e: unknown) => e instanceof BudgetExceededError && /task T-1 token budget/.test(e.message));
    meter.beginTask('T-2');
    meter.check();
    meter.record('m', { promptTokens: 4000, completionTokens: 4000 });
    assert.throws(() => meter.check(), /run budget reached/);
  });
});
