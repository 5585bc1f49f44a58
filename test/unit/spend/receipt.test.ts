import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseConfig } from '../../../src/core/config/load';
import { createModelClient } from '../../../src/core/llm/factory';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import type { CostReceipt, ReceiptLine } from '../../../src/core/spend/receipt';
import { formatLineCost, formatProviderCost } from '../../../src/core/spend/receiptFormat';
import { type ScriptedServer, type ScriptedUsage, startScriptedServer } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

const PRICES = { 'model-a': { input: 2, output: 8, cachedInput: 0.5 } };
const complete = (usage: ScriptedUsage) => ({
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'checked' } }],
  usage,
});

function close(actual: number, expected: number, what: string): void {
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: ${actual} ≠ ${expected}`);
}

/** The integer fields of a line, exactly; the USD fields to 1e-12. */
function assertLine(actual: ReceiptLine | undefined, expected: Partial<ReceiptLine>, what: string): void {
  assert.ok(actual, `${what}: no line`);
  for (const [key, value] of Object.entries(expected) as [keyof ReceiptLine, number][]) {
    if (key === 'estimatedUsd' || key === 'providerUsd') close(actual[key], value, `${what}.${key}`);
    else assert.equal(actual[key], value, `${what}.${key}`);
  }
}

describe('the cost receipt (RalphRunner against the scripted server)', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('itemizes a task with a delegation by role, model and iteration: cached input, provider-reported cost, a retry, an unpriced model', async () => {
    h = await makeLoopHarness([
      // orchestrator: 800 of 1000 prompt tokens cached; the provider says it cost $0.0025
      {
        toolCalls: [{ name: 'delegate', arguments: { target: 'devo', objective: 'Write hello.txt' } }],
        usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 800, cost: 0.0025 },
      },
      // devo runs on model-b, which has no price: unknown, not $0
      { content: 'Wrote it.', usage: { prompt_tokens: 500, completion_tokens: 50 } },
      // the orchestrator's next call fails once and is retried
      { fault: 'status', status: 500, retryAfterMs: 1 },
      complete({ prompt_tokens: 2000, completion_tokens: 20, cached_tokens: 1500, cost: 0.004 }),
    ]);
    await h.configure({ llm: { prices: PRICES }, agents: { devo: { model: 'model-b' } } });
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    assert.equal(chatRequests(h.server).length, 4);

    const receipt = (await new CheckpointStore(h.paths).load(id))?.receipt as CostReceipt;
    assert.ok(receipt, 'the receipt is saved with the checkpoint');
    // orchestrator: (200×2 + 800×0.5 + 100×8)/1e6 + (500×2 + 1500×0.5 + 20×8)/1e6
    const orchestrator = {
      calls: 2,
      failedCalls: 0,
      retries: 1,
      promptTokens: 3000,
      cachedPromptTokens: 2300,
      completionTokens: 120,
      estimatedUsd: 0.0016 + 0.00191,
      unpricedCalls: 0,
      providerUsd: 0.0065,
      providerReportedCalls: 2,
    };
    assertLine(receipt.byRole.orchestrator, orchestrator, 'orchestrator');
    assertLine(
      receipt.byRole.devo,
      {
        calls: 1,
        retries: 0,
        promptTokens: 500,
        cachedPromptTokens: 0,
        completionTokens: 50,
        estimatedUsd: 0,
        unpricedCalls: 1,
        providerReportedCalls: 0,
      },
      'devo',
    );
    assertLine(receipt.byModel['model-a'], orchestrator, 'model-a');
    assertLine(receipt.byModel['model-b'], { calls: 1, unpricedCalls: 1, estimatedUsd: 0 }, 'model-b');
    const total = {
      calls: 3,
      retries: 1,
      failedCalls: 0,
      promptTokens: 3500,
      cachedPromptTokens: 2300,
      completionTokens: 170,
      estimatedUsd: 0.00351,
      unpricedCalls: 1,
      providerUsd: 0.0065,
      providerReportedCalls: 2,
    };
    assertLine(receipt.total, total, 'total');
    assert.deepEqual(Object.keys(receipt.byIteration), ['1']);
    assertLine(receipt.byIteration['1'], total, 'iteration 1');

    // unknown reads as unknown, the provider's figure is marked as such
    assert.equal(formatLineCost(receipt.byRole.devo), 'unknown (no price in llm.prices)');
    assert.equal(formatLineCost(receipt.total), '$0.00351 + unknown for 1 of 3 calls (no price)');
    assert.equal(formatProviderCost(receipt.total), '$0.00650 (provider-reported, 2 of 3 calls)');

    // the budget counts the provider's figure where it gave one: $0.0025 + $0.004, the unpriced call at 0
    const budget = eventsOf(h.events, 'budget').at(-1)!;
    close(budget.taskCostUsd, 0.0065, 'budget task cost');

    // the final report, the task.finished event and the run's total (run log, summary)
    const report = await fs.readFile(summary.results[0].reportFile!, 'utf8');
    assert.match(report, /## Cost receipt/);
    assert.match(
      report,
      /\| orchestrator \| 2 \| 3000 \| 2300 \| 120 \| \$0\.00\d{3} \| \$0\.00650 \(provider-reported, all calls\) \| 0 \/ 1 \|/,
    );
    assert.match(report, /\| devo \| 1 \| 500 \| 0 \| 50 \| unknown \(no price in llm\.prices\) \| — \| — \|/);
    assert.match(report, /\| #1 \| 3 \| 3500 \| 2300 \| 170 \|/);
    assert.match(report, /1 retry: usage unknown/);
    const finished = eventsOf(h.events, 'task.finished')[0];
    assertLine(finished.receipt?.total, total, 'task.finished receipt');
    assertLine(summary.spend?.total, total, 'run total');
    assertLine(summary.spend?.byTask[id], total, 'run total of the task');
    close(summary.spend!.costUsd, 0.0065, 'run budget cost');
    const logged = (await fs.readFile(summary.logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; spend?: { total: ReceiptLine } });
    assertLine(logged.find((e) => e.type === 'run.finished')?.spend?.total, total, 'run log');
  });

  it('counts a failed call, and keeps the receipt across a resume', async () => {
    h = await makeLoopHarness([
      { content: 'working <ralph>PROGRESS:10</ralph>', usage: { prompt_tokens: 600, completion_tokens: 10 } },
      // the next run resumes at iteration 2: its first call fails for good (400 is not retried)
      { fault: 'status', status: 400, body: { error: { message: 'bad request', type: 'invalid_request_error' } } },
      complete({ prompt_tokens: 100, completion_tokens: 10 }),
    ]);
    await h.configure({ llm: { prices: PRICES }, budget: { taskMaxTokens: 500 } });
    const id = await h.addTask();
    const first = await h.runner().run();
    assert.equal(first.results[0].status, 'halted');
    const saved = (await new CheckpointStore(h.paths).load(id))?.receipt;
    assertLine(saved?.total, { calls: 1, promptTokens: 600, completionTokens: 10 }, 'after the first run');

    await h.configure({ llm: { prices: PRICES }, loop: { maxIterations: 5 } });
    const second = await h.runner().run({ taskId: id });
    assert.equal(second.results[0].status, 'done');
    const receipt = (await new CheckpointStore(h.paths).load(id))?.receipt as CostReceipt;
    assertLine(receipt.byIteration['1'], { calls: 1, promptTokens: 600, failedCalls: 0 }, 'iteration 1 (first run)');
    assertLine(receipt.byIteration['2'], { calls: 0, failedCalls: 1 }, 'iteration 2: the failed call, usage unknown');
    assertLine(receipt.byIteration['3'], { calls: 1, promptTokens: 100 }, 'iteration 3');
    assertLine(
      receipt.total,
      { calls: 2, failedCalls: 1, promptTokens: 700, completionTokens: 20, estimatedUsd: (600 * 2 + 10 * 8 + 100 * 2 + 10 * 8) / 1e6 },
      'total across both runs',
    );
    // the second run's own total counts only what it spent
    assertLine(second.spend?.total, { calls: 1, failedCalls: 1, promptTokens: 100 }, 'second run');
  });
});

describe('usage at the wire boundary', () => {
  let server: ScriptedServer;
  afterEach(async () => server?.close());

  const chat = async (usage: unknown) => {
    server = await startScriptedServer({
      steps: [
        {
          fault: 'raw-chunks',
          chunks: [{ choices: [{ index: 0, delta: { content: 'hi' }, finish_reason: 'stop' }] }, { choices: [], usage }],
        },
      ],
    });
    const client = createModelClient(parseConfig({ llm: { baseUrl: server.url, maxRetries: 0 } }).llm, 'k');
    return client.chat({ model: 'm', messages: [{ role: 'user', content: 'x' }] });
  };

  it('reads cached tokens and a provider-reported cost', async () => {
    const reply = await chat({
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 6 },
      cost: 0.00012,
    });
    assert.deepEqual(reply.usage, {
      promptTokens: 10,
      completionTokens: 2,
      totalTokens: 12,
      cachedPromptTokens: 6,
      providerCostUsd: 0.00012,
    });
    assert.equal(reply.warnings, undefined);
  });

  it('drops unbelievable cached counts and costs with a warning, keeping the token counts', async () => {
    const reply = await chat({
      prompt_tokens: 10,
      completion_tokens: 2,
      total_tokens: 12,
      prompt_tokens_details: { cached_tokens: 11 },
      cost: -1,
    });
    assert.deepEqual(reply.usage, { promptTokens: 10, completionTokens: 2, totalTokens: 12 });
    assert.deepEqual(reply.warnings, [
      'token usage reports 11 cached of 10 prompt tokens; cached tokens unknown',
      "token usage cost = -1 is not a believable USD amount; the provider's cost of this reply is unknown",
    ]);
    const odd = await chat({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: '5' }, cost: '0.1' });
    assert.deepEqual(odd.usage, { promptTokens: 10, completionTokens: 2, totalTokens: 12 });
    assert.equal(odd.warnings?.length, 2);
  });
});
