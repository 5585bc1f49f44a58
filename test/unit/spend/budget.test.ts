import assert from 'node:assert/strict';
import { parseConfig } from '../../../src/core/config/load';
import { estimateCostUsd, formatUsd, priceOf } from '../../../src/core/llm/pricing';
import { BudgetExceededError, SpendMeter } from '../../../src/core/spend/budget';
import { RECEIPT_ITERATIONS } from '../../../src/core/spend/receipt';
import { formatLineCost } from '../../../src/core/spend/receiptFormat';

describe('cost arithmetic', () => {
  it('prices tokens per 1M with configured prices first, then the built-in table', () => {
    const prices = { 'my-model': { input: 3, output: 15 } };
    assert.equal(estimateCostUsd('my-model', { promptTokens: 1_000_000, completionTokens: 200_000 }, prices), 6);
    assert.equal(estimateCostUsd('gpt-4.1-mini', { promptTokens: 500_000, completionTokens: 250_000 }, {}), 0.6);
    assert.deepEqual(priceOf('openai/gpt-4.1', {}), { input: 2, output: 8, cachedInput: 0.5 });
    assert.equal(estimateCostUsd('llama3', { promptTokens: 1, completionTokens: 1 }, {}), undefined);
    assert.equal(formatUsd(0.0042), '$0.00420', 'below a dollar: three significant digits');
    assert.equal(formatUsd(0.0692), '$0.0692', 'a provider-reported $0.0692 is not $0.07');
    assert.equal(formatUsd(1.5), '$1.50');
    assert.equal(formatUsd(undefined), '—');
  });

  it('meters calls per model and refuses the call after a cap is reached', () => {
    const meter = new SpendMeter(
      parseConfig({ budget: { maxCostUsd: 0.01, taskMaxTokens: 5000 }, llm: { prices: { m: { input: 1, output: 1 } } } }),
    );
    meter.beginTask('T-1', { m: { calls: 1, promptTokens: 1000, completionTokens: 1000 } });
    assert.equal(meter.taskTotals.tokens, 2000);
    meter.check();
    meter.record('m', { promptTokens: 2000, completionTokens: 1000 });
    assert.equal(meter.runTotals.byModel.m.calls, 1);
    assert.equal(meter.taskTotals.byModel.m.calls, 2);
    assert.throws(
      () => meter.check(),
      (e: unknown) => e instanceof BudgetExceededError && /task T-1 token budget/.test(e.message),
    );
    meter.beginTask('T-2');
    meter.check();
    meter.record('m', { promptTokens: 4000, completionTokens: 4000 });
    assert.throws(() => meter.check(), /run budget reached/);
  });

  it("keeps the receipt: included (editor plan) and unpriced calls are not $0, the provider's cost counts against the budget, iterations beyond the last 50 are folded", () => {
    const config = parseConfig({ llm: { prices: { m: { input: 1, output: 1, cachedInput: 0.5 } } } });
    const meter = new SpendMeter(config, undefined, { included: (model) => model.startsWith('editor:') });
    meter.beginTask('T-1');
    meter.beginIteration(1, 60);
    meter.record('m', { promptTokens: 1000, completionTokens: 0, cachedPromptTokens: 1000 }, 'council');
    meter.record('editor:gpt', { promptTokens: 10, completionTokens: 10 }, 'scout');
    meter.record('local', { promptTokens: 10, completionTokens: 10, providerCostUsd: 0.25 }, 'compaction');
    const r = meter.taskReceipt;
    assert.equal(r.byRole.council.estimatedUsd, 0.0005);
    assert.equal(formatLineCost(r.byRole.scout), 'included (editor plan)');
    assert.equal(formatLineCost(r.byRole.compaction), 'unknown (no price in llm.prices)');
    assert.equal(formatLineCost(r.total), '$0.000500 + unknown for 1 of 3 calls (no price) + included for 1 call');
    assert.equal(meter.taskTotals.costUsd, 0.2505);
    for (let n = 2; n <= 55; n++) {
      meter.beginIteration(n, 60);
      meter.recordFailure('m', 'orchestrator', 'retry');
    }
    const folded = meter.taskReceipt;
    assert.equal(Object.keys(folded.byIteration).length, RECEIPT_ITERATIONS);
    assert.equal(folded.byIteration['1'], undefined);
    assert.equal(folded.earlierIterations?.calls, 3);
    assert.equal(folded.earlierIterations?.retries, 4);
    assert.equal(folded.total.retries, 54);
  });

  it('asks once for agents that hit the spend-rate alarm together; a prompt that fails counts as Stop', async () => {
    const config = parseConfig({ budget: { maxCostPerHourUsd: 1 } });
    let now = 0;
    const meter = new SpendMeter(config, undefined, { clock: { now: () => now } });
    const other = meter.share();
    meter.beginTask('T-1');
    other.beginTask('T-2');
    meter.record('m', { promptTokens: 1, completionTokens: 1, providerCostUsd: 0.6 });
    now = 60_000;
    other.record('m', { promptTokens: 1, completionTokens: 1, providerCostUsd: 0.6 });
    let asked = 0;
    meter.onRateAlarm(async () => {
      asked++;
      throw new Error('the prompt went away');
    });
    const results = await Promise.allSettled([meter.guardRate(), other.guardRate()]);
    assert.equal(asked, 1);
    for (const r of results)
      assert.ok(
        r.status === 'rejected' &&
          r.reason instanceof BudgetExceededError &&
          /stopped at the spend-rate alarm: spend rate/.test(r.reason.message),
      );
    assert.ok(meter.runCapReached(), 'the run stops like at a run cap');
  });
});
