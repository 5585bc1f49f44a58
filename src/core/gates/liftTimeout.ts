import { runnerCall, type RunnerSetting, type SelectingRunner } from './affectedCommand';
import type { GateOutcome } from './types';

/**
 * A gate run whose every failure is its runner's own timeout runs once more (`rerun.ts`): on a
 * machine busy with parallel agents and their gates that is the load as often as the code. The
 * re-run gets the runner's timeout lifted where Ralph knows the runner's flag for it — four times
 * the timeout that tripped as the failures name it (else the runner's default), so that a slow test under load passes and a
 * test that hangs still fails. A timeout a test sets in its own code wins over the flag with
 * mocha, jest, vitest and node:test; node:test has no default to lift and pytest no timeout of its
 * own, so theirs re-run as they are.
 */

/** Each runner's default timeout in ms and its flag for a new one. */
const RUNNERS: Partial<Record<SelectingRunner, { defaultMs: number; flag(ms: number): string }>> = {
  tap: { defaultMs: 30_000, flag: (ms) => `--timeout=${Math.ceil(ms / 1000)}` },
  mocha: { defaultMs: 2_000, flag: (ms) => `--timeout=${ms}` },
  jest: { defaultMs: 5_000, flag: (ms) => `--testTimeout=${ms}` },
  vitest: { defaultMs: 5_000, flag: (ms) => `--testTimeout=${ms}` },
  ava: { defaultMs: 10_000, flag: (ms) => `--timeout=${Math.ceil(ms / 1000)}s` },
};

const LIFT = 4;
/** A lifted timeout's cap: the gate's own timeout bounds the whole run anyway. */
const MAX_MS = 30 * 60_000;

export interface LiftedTimeout {
  command: string;
  /** The timeout the re-run has, in ms. */
  ms: number;
}

/**
 * The command that runs `command` (the gate's, or a part's narrowed one) again with its runner's
 * timeout lifted, or undefined where the runner or its flag is not known. `gateCommand` is the
 * gate's own command, whose runner the setting tells.
 */
export function liftedTimeout(
  gateCommand: string,
  command: string,
  outcome: GateOutcome,
  setting: RunnerSetting,
): LiftedTimeout | undefined {
  const call = runnerCall(gateCommand, setting);
  if ('why' in call) return undefined;
  const runner = RUNNERS[call.runner];
  if (!runner) return undefined;
  const named = trippedMs(outcome);
  const tripped = named.length > 0 ? Math.max(...named) : runner.defaultMs;
  const ms = Math.min(tripped * LIFT, MAX_MS);
  // a part's narrowed command already has npm's `--`; the gate's own one needs it
  const dashes = call.viaNpm && !/\s--(\s|$)/.test(command) ? ' --' : '';
  return { command: `${command}${dashes} ${runner.flag(ms)}`, ms };
}

/** The timeouts the failures' messages name: tap's `at its timeout (30000 ms)`, mocha's `Timeout of 2000ms`, jest's `Exceeded timeout of 5000 ms`, vitest's `timed out in 5000ms`. */
function trippedMs(outcome: GateOutcome): number[] {
  const found: number[] = [];
  for (const f of outcome.parsed.tests?.failures ?? []) {
    for (const m of (f.message ?? '').matchAll(/(?:timeout of|timed out in|at its timeout \()\s*(\d{1,8}) ?ms\b/gi))
      found.push(Number(m[1]));
  }
  return found;
}
