import type { GateOutcome } from './types';

/**
 * Flaky tests (`gates[].rerunFailures`): a gate that failed on tests is run again, up to that
 * many times, before its verdict. The last run decides; every test that failed in an earlier
 * run and no longer fails is reported as flaky — never silently green.
 */

/** Whether a failed run is worth running again: it failed on tests (not a timeout, a stop or a broken command). */
export function rerunnable(outcome: GateOutcome): boolean {
  return !outcome.passed && !outcome.timedOut && (outcome.parsed.tests?.failed ?? 0) > 0;
}

/** A runner's timeout in a failure's message: tap's `timeout!`/`timed out`, mocha's `Timeout of 2000ms exceeded`, jest's `Exceeded timeout of`, vitest's `Test timed out in`. */
const TIMEOUT = /\btimed? ?out\b/i;

/**
 * Whether every failure of a failed run is a test its runner stopped at its own timeout. On a
 * machine busy with parallel agents and their gates that is the load as often as the code, so
 * such a run gets one more run before its verdict whatever `rerunFailures` says; a timeout
 * again is a failure like any other.
 */
export function timeoutsOnly(outcome: GateOutcome): boolean {
  const tests = outcome.parsed.tests;
  if (!rerunnable(outcome) || !tests || tests.failures.length < tests.failed) return false;
  return tests.failures.every((f) => f.message !== undefined && TIMEOUT.test(f.message));
}

/** Whether a gate runs again after `done` re-runs ending in `last`: up to `rerunFailures` on failed tests, once on timeouts only. */
export function runAgain(rerunFailures: number | undefined, last: GateOutcome, done: number): boolean {
  return (done < (rerunFailures ?? 0) && rerunnable(last)) || (done === 0 && timeoutsOnly(last));
}

/** The failures of a run by name (`?` stands for each failure its output left unnamed). */
export function failureNames(outcome: GateOutcome): string[] {
  const tests = outcome.parsed.tests;
  if (!tests) return [];
  const named = tests.failures.map((f) => f.name);
  return [...named, ...Array.from({ length: Math.max(0, tests.failed - named.length) }, () => '?')];
}

/**
 * The last run's outcome with what the earlier runs showed: `flaky` names the tests that failed
 * before and pass now (an unnamed failure that went away counts as one unnamed flaky test),
 * and the summary and the notes for the next iteration say so.
 */
export function withFlaky(last: GateOutcome, earlier: readonly GateOutcome[], reruns: number, why = 'gates[].rerunFailures'): GateOutcome {
  const failingNow = new Set(failureNames(last));
  const flaky = [...new Set(earlier.flatMap(failureNames))].filter((name) => !failingNow.has(name));
  if (flaky.length === 0) return { ...last, reruns };
  const shown = flaky.map((n) => (n === '?' ? 'an unnamed test' : `\`${n}\``));
  const note = `flaky: ${shown.join(', ')} failed, then passed when the gate ran again (${reruns} re-run${reruns === 1 ? '' : 's'}, ${why}) — not held against the task, but worth a look`;
  return {
    ...last,
    reruns,
    flaky: flaky.map((n) => (n === '?' ? '(unnamed)' : n)),
    summary: `${last.summary}; ${flaky.length} flaky (passed on a re-run)`,
    fixItems: [...last.fixItems, { gate: last.name, kind: last.kind, level: 'observation', text: note }],
  };
}
