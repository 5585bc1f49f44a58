import assert from 'node:assert/strict';
import type { SafeguardAnswer, SafeguardWarning } from '../../../src/core/ports';
import { pruneSamples, type SpendSample, spendRateAlarm } from '../../../src/core/spend/spendRate';
import type { StaticStep } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

const MIN = 60_000;
const BUDGET = { maxCostPerHourUsd: undefined, spendSpikeFactor: 5, spendSpikeMinUsdPerHour: 2 };
const sample = (minute: number, usd: number, taskId = 'T-1', model = 'm'): SpendSample => ({ at: minute * MIN, usd, taskId, model });

describe('the spend-rate alarm (pure)', () => {
  const steady = [sample(0, 0.1), sample(10, 0.1), sample(20, 0.1), sample(30, 0.1)];

  it("a spike of 5× the run's own trailing rate names the task, the model and the rate", () => {
    assert.equal(spendRateAlarm(steady, 31 * MIN, BUDGET), undefined, 'a steady run');
    const alarm = spendRateAlarm([...steady, sample(31, 2, 'T-7', 'big-model')], 31 * MIN, BUDGET);
    assert.equal(alarm?.kind, 'spike');
    assert.equal(alarm?.taskId, 'T-7');
    assert.equal(alarm?.model, 'big-model');
    // last 5 min: $2.10 → $25.20/h; before it: $0.30 over 26 min
    assert.ok(Math.abs(alarm!.rateUsdPerHour - 25.2) < 1e-9);
    assert.match(
      alarm!.message,
      /^spend spike: \$25\.20\/h over the last 5 min, 36\.4× the run's rate of \$0\.692\/h \(budget\.spendSpikeFactor 5\) — task T-7 on big-model$/,
    );
  });

  it('no spike without 15 minutes of history, below the floor, or when turned off', () => {
    assert.equal(spendRateAlarm([sample(0, 0.1), sample(12, 2)], 12 * MIN, BUDGET), undefined, 'too little history for a baseline');
    const small = [sample(0, 0.001), sample(20, 0.001), sample(30, 0.1)];
    assert.equal(spendRateAlarm(small, 30 * MIN, BUDGET), undefined, '$1.20/h is under spendSpikeMinUsdPerHour');
    assert.ok(spendRateAlarm(small, 30 * MIN, { ...BUDGET, spendSpikeMinUsdPerHour: 1 }));
    assert.equal(spendRateAlarm([...steady, sample(31, 2)], 31 * MIN, { ...BUDGET, spendSpikeFactor: 0 }), undefined);
  });

  it('Continue raises the baseline to the accepted rate and measures from the answer', () => {
    const spiking = [...steady, sample(31, 2)];
    const ack = { since: 31 * MIN, acceptedRateUsdPerHour: 25.2 };
    assert.equal(spendRateAlarm([...spiking, sample(32, 2)], 32 * MIN, BUDGET, ack), undefined, 'the same rate again is accepted');
    assert.equal(spendRateAlarm([...spiking, sample(33, 11)], 33 * MIN, BUDGET, ack)?.kind, 'spike', '$132/h is 5× the accepted rate');
  });

  it('budget.maxCostPerHourUsd: the spending of the trailing hour, from the last Continue', () => {
    const budget = { ...BUDGET, spendSpikeFactor: 0, maxCostPerHourUsd: 1 };
    const samples = [sample(0, 0.5), sample(20, 0.4)];
    assert.equal(spendRateAlarm(samples, 20 * MIN, budget), undefined);
    const alarm = spendRateAlarm([...samples, sample(30, 0.1, 'T-2', 'x')], 30 * MIN, budget);
    assert.equal(alarm?.kind, 'hourly-cap');
    assert.equal(alarm?.taskId, 'T-1', 'the task that spent the most in the hour');
    assert.match(
      alarm!.message,
      /^spend rate \$2\.00\/h: \$1\.00 spent in the last 30 min, at or over budget\.maxCostPerHourUsd \$1\.00\/h — most of it by task T-1 on m$/,
    );
    assert.equal(spendRateAlarm([...samples, sample(30, 0.1), sample(70, 0.1)], 70 * MIN, budget), undefined, 'the first hour has passed');
    assert.equal(
      spendRateAlarm([...samples, sample(30, 0.1), sample(31, 0.2)], 31 * MIN, budget, { since: 30.5 * MIN, acceptedRateUsdPerHour: 2 }),
      undefined,
      'after Continue, another dollar may be spent',
    );
  });

  it('prunes samples no check can need, keeping the first (it dates the baseline)', () => {
    const samples = [sample(0, 1), sample(1, 1), sample(2, 1), sample(100, 1)];
    pruneSamples(samples, 100 * MIN);
    assert.deepEqual(
      samples.map((s) => s.at / MIN),
      [0, 100],
    );
  });
});

describe('the spend-rate alarm in a run (RalphRunner against the scripted server, injected clock)', function () {
  this.timeout(30000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  /** A reply at minute `minute` of the fake clock, for which the provider reports `usd`. */
  function at(clock: { t: number }, minute: number, usd: number, done = false) {
    return (): StaticStep => {
      clock.t = minute * MIN;
      const usage = { prompt_tokens: 100, completion_tokens: 10, cost: usd };
      return done
        ? { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'checked' } }], usage }
        : { content: 'working <ralph>PROGRESS:10</ralph>', usage };
    };
  }

  async function spikeRun(answer: SafeguardAnswer['action']) {
    const clock = { t: 0 };
    const steps = [at(clock, 0, 0.1), at(clock, 10, 0.1), at(clock, 20, 0.1), at(clock, 30, 0.1), at(clock, 31, 2)];
    h = await makeLoopHarness([...steps, at(clock, 32, 0.01, true)]);
    await h.configure({ loop: { maxIterations: 10, taskTimeoutMinutes: 600 }, safeguards: { noCommitWarnIterations: 50 } });
    const id = await h.addTask();
    const asked: SafeguardWarning[] = [];
    const runner = h.runner({
      clock: { now: () => clock.t },
      safeguards: {
        decide: async (warning) => {
          asked.push(warning);
          // the autopilot is paused while the question is open
          assert.equal(runner.paused, true);
          return { action: answer } as SafeguardAnswer;
        },
      },
    });
    const summary = await runner.run();
    return { id, summary, asked };
  }

  it('a spike pauses the autopilot with a warning naming the task, the model and the rate; Stop halts the task and the run', async () => {
    const { id, summary, asked } = await spikeRun('stop');
    assert.equal(asked.length, 1);
    assert.equal(asked[0].code, 'spend-rate');
    assert.equal(asked[0].taskId, id);
    assert.equal(asked[0].iteration, 6);
    // the model that spent the spike (the ladder may have escalated by then)
    const spender = chatRequests(h.server)[4].model;
    assert.match(
      asked[0].message,
      new RegExp(
        `^spend spike: \\$25\\.20/h over the last 5 min, 36\\.4× the run's rate of \\$0\\.692/h \\(budget\\.spendSpikeFactor 5\\) — task ${id} on ${spender}$`,
      ),
    );
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'spend-rate');
    assert.equal(warning?.message, asked[0].message);
    const order = h.events
      .filter(
        (e) =>
          e.type === 'run.paused' ||
          e.type === 'run.resumed' ||
          e.type === 'warning.answered' ||
          (e.type === 'warning' && e.code === 'spend-rate'),
      )
      .map((e) => e.type);
    assert.deepEqual(order, ['run.paused', 'warning', 'warning.answered', 'run.resumed']);
    const calls = chatRequests(h.server);
    assert.equal(calls.length, 6, 'after Stop only the bounded wind-down turn for the progress notes');
    assert.equal(calls[5].body?.max_completion_tokens, 1500, 'the wind-down turn is capped');
    assert.deepEqual(
      calls[5].body?.tools?.map((t) => t.function.name),
      ['write_file', 'edit_file'],
    );
    assert.equal(summary.results[0].status, 'halted');
    assert.match(summary.results[0].reason, /stopped at the spend-rate alarm: spend spike/);
    assert.match(summary.reason, /spend-rate alarm/);
    assert.equal((await h.store.get(id)).status, 'halted');
  });

  it('Continue lets the run go on without asking again at the same rate', async () => {
    const { summary, asked } = await spikeRun('continue');
    assert.equal(asked.length, 1);
    assert.equal(summary.results[0].status, 'done');
    assert.equal(chatRequests(h.server).length, 6);
    assert.deepEqual(
      eventsOf(h.events, 'warning.answered').map((e) => `${e.code}:${e.action}`),
      ['spend-rate:continue'],
    );
  });

  it('unattended (no one to ask), budget.maxCostPerHourUsd stops the run at the cap', async () => {
    const clock = { t: 0 };
    h = await makeLoopHarness([at(clock, 0, 0.6), at(clock, 5, 0.6), at(clock, 6, 0.6)]);
    await h.configure({ loop: { maxIterations: 10, taskTimeoutMinutes: 600 }, budget: { maxCostPerHourUsd: 1 } });
    const id = await h.addTask();
    const summary = await h.runner({ clock: { now: () => clock.t } }).run();
    const calls = chatRequests(h.server);
    assert.equal(calls.length, 3, 'two calls, then only the bounded wind-down turn');
    assert.equal(calls[2].body?.max_completion_tokens, 1500);
    assert.equal(summary.results[0].status, 'halted');
    assert.match(
      summary.results[0].reason,
      new RegExp(
        `spend rate \\$14\\.40/h: \\$1\\.20 spent in the last 5 min, at or over budget\\.maxCostPerHourUsd \\$1\\.00/h — most of it by task ${id} on model-a`,
      ),
    );
    assert.deepEqual(
      eventsOf(h.events, 'warning.answered').map((e) => `${e.code}:${e.action}`),
      ['spend-rate:stop'],
    );
  });
});
