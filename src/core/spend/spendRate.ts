import type { RalphConfig } from '../config/schema';
import { formatUsd } from '../llm/pricing';

/** One priced model call of the run, for the spend-rate alarm. */
export interface SpendSample {
  at: number;
  usd: number;
  taskId: string;
  model: string;
}

export const HOUR_MS = 3_600_000;
/** The "recent" window a spike is measured over. */
export const SPIKE_WINDOW_MS = 5 * 60_000;
/** History the run needs before the recent window for its own rate to be a baseline. */
export const SPIKE_BASELINE_MS = 15 * 60_000;

export interface SpendRateAlarm {
  kind: 'hourly-cap' | 'spike';
  /** The task and model that spent the most in the alarm's window. */
  taskId: string;
  model: string;
  /** USD per hour. */
  rateUsdPerHour: number;
  message: string;
}

/** What the person accepted so far: the alarm then measures from `since` and against `acceptedRate`. */
export interface RateAcknowledgement {
  since: number;
  acceptedRateUsdPerHour: number;
}

type BudgetRates = Pick<RalphConfig['budget'], 'maxCostPerHourUsd' | 'spendSpikeFactor' | 'spendSpikeMinUsdPerHour'>;

/**
 * The spend-rate alarm (docs/how-a-task-ends.md, "Spend-rate alarm"), checked before
 * every model call:
 * - `budget.maxCostPerHourUsd`: the run spent that much within the trailing hour (counted from
 *   the last Continue, so Continue allows another hour's worth);
 * - the spike guard: the last 5 minutes cost at least `spendSpikeFactor` × the run's own rate
 *   over the hour before them (the run needs 15 minutes of spending history first), and at
 *   least `spendSpikeMinUsdPerHour`. After Continue the accepted rate is the new baseline.
 * Pure: `now` comes from the injected clock, so tests move time instead of waiting.
 */
export function spendRateAlarm(
  samples: readonly SpendSample[],
  now: number,
  budget: BudgetRates,
  ack?: RateAcknowledgement,
): SpendRateAlarm | undefined {
  const since = ack?.since ?? -Infinity;
  const cap = budget.maxCostPerHourUsd;
  if (cap !== undefined) {
    const window = samples.filter((s) => s.at > now - HOUR_MS && s.at >= since);
    const spent = sum(window);
    if (spent >= cap) {
      const span = Math.max(SPIKE_WINDOW_MS, now - Math.min(...window.map((s) => s.at)));
      const rate = (spent / Math.min(span, HOUR_MS)) * HOUR_MS;
      const top = biggest(window);
      return {
        kind: 'hourly-cap',
        ...top,
        rateUsdPerHour: rate,
        message: `spend rate ${formatUsd(rate)}/h: ${formatUsd(spent)} spent in the last ${minutes(Math.min(span, HOUR_MS))}, at or over budget.maxCostPerHourUsd ${formatUsd(cap)}/h — most of it by task ${top.taskId} on ${top.model}`,
      };
    }
  }
  const factor = budget.spendSpikeFactor;
  if (factor <= 0 || samples.length === 0) return undefined;
  const first = samples[0].at;
  const recentFrom = now - SPIKE_WINDOW_MS;
  if (recentFrom - first < SPIKE_BASELINE_MS) return undefined;
  const recent = samples.filter((s) => s.at > recentFrom && s.at >= since);
  if (recent.length === 0) return undefined;
  const baselineFrom = Math.max(first, recentFrom - HOUR_MS);
  const trailing = samples.filter((s) => s.at >= baselineFrom && s.at <= recentFrom);
  const trailingRate = (sum(trailing) / (recentFrom - baselineFrom)) * HOUR_MS;
  const baseline = Math.max(trailingRate, ack?.acceptedRateUsdPerHour ?? 0);
  const recentRate = (sum(recent) / SPIKE_WINDOW_MS) * HOUR_MS;
  if (baseline <= 0 || recentRate < budget.spendSpikeMinUsdPerHour || recentRate < factor * baseline) return undefined;
  const top = biggest(recent);
  return {
    kind: 'spike',
    ...top,
    rateUsdPerHour: recentRate,
    message: `spend spike: ${formatUsd(recentRate)}/h over the last 5 min, ${(recentRate / baseline).toFixed(1)}× the run's rate of ${formatUsd(baseline)}/h (budget.spendSpikeFactor ${factor}) — task ${top.taskId} on ${top.model}`,
  };
}

/** Samples older than this can no longer matter to either check. */
export function pruneSamples(samples: SpendSample[], now: number): void {
  const keepFrom = now - HOUR_MS - SPIKE_WINDOW_MS;
  // the first sample is kept: it dates the start of the run's history for the baseline
  let end = 1;
  while (end < samples.length && samples[end].at < keepFrom) end++;
  if (end > 1) samples.splice(1, end - 1);
}

function sum(samples: readonly SpendSample[]): number {
  return samples.reduce((n, s) => n + s.usd, 0);
}

function biggest(samples: readonly SpendSample[]): { taskId: string; model: string } {
  const totals = new Map<string, { taskId: string; model: string; usd: number }>();
  for (const s of samples) {
    const key = `${s.taskId}\u0000${s.model}`;
    const entry = totals.get(key) ?? { taskId: s.taskId, model: s.model, usd: 0 };
    entry.usd += s.usd;
    totals.set(key, entry);
  }
  const top = [...totals.values()].sort((a, b) => b.usd - a.usd)[0];
  return { taskId: top?.taskId ?? '?', model: top?.model ?? '?' };
}

function minutes(ms: number): string {
  const m = Math.max(1, Math.round(ms / 60_000));
  return `${m} min`;
}
