import type { CompletionDecision } from '../../reports/decision';
import type { FixItem, GateReport } from '../../gates/types';
import type { Signal } from '../../signals/types';

export interface CompletionInput {
  /** The decisive signal of the iteration, if the agent gave one. */
  signal: Signal | undefined;
  /** The iteration failed (API error after retries, crash of a tool run). */
  errored: boolean;
  /** The gates run after the iteration; undefined when none are configured or none ran. */
  gates: GateReport | undefined;
  /** Extra iterations each optional gate may still claim (its `maxIterations`, default 2, minus those used). */
  optionalIterationsLeft: (gate: string) => number;
}

/**
 * The one place that decides whether a task is finished after an iteration: the agent's
 * signal AND the gates the orchestrator ran itself.
 *
 * | Signal     | Required gates | Result                                    |
 * | COMPLETE   | all pass       | done                                      |
 * | COMPLETE   | any fail       | next iteration, failures as feedback      |
 * | none       | all pass       | next iteration (the agent must signal)    |
 * | none       | any fail       | next iteration                            |
 * | BLOCKED    | any            | blocked                                   |
 * | NEEDS_HELP | any            | needs_help                                |
 * A critical security finding halts the task whatever the signal. A failing optional gate
 * turns COMPLETE into another iteration only while that gate has extra iterations left.
 * (Max iterations and the task timeout are enforced by the loop around this.)
 */
export function decideCompletion(input: CompletionInput): CompletionDecision {
  const { signal, gates } = input;
  const gateFeedback = gates ? fixItemLines(gates) : [];
  if (gates?.high && !gates.critical) gateFeedback.unshift(HIGH_FIRST);
  if (gates?.critical) {
    const finding = gates.outcomes.flatMap((o) => o.fixItems).find((f) => /^critical/.test(f.text));
    return {
      kind: 'finish',
      status: 'halted',
      reason: `critical security finding: ${finding?.text.split('\n', 1)[0].replace(/^critical security finding:?\s*/, '') ?? 'see the gate report'}`,
      notes: gateFeedback,
    };
  }
  if (signal?.kind === 'BLOCKED') return { kind: 'finish', status: 'blocked', reason: signal.reason, notes: [] };
  if (signal?.kind === 'NEEDS_HELP') return { kind: 'finish', status: 'needs_help', reason: signal.question, notes: [] };

  const requiredFailed = gates ? gates.outcomes.filter((o) => o.required && !o.passed).map((o) => `${o.name} (${o.summary})`) : [];
  const weakened = gates ? gates.outcomes.filter((o) => o.required && (o.integrity?.violations.length ?? 0) > 0).map((o) => o.name) : [];
  if (signal?.kind === 'COMPLETE') {
    if (weakened.length > 0) {
      return continueWith(`COMPLETE not accepted: gates weakened against the task's base: ${weakened.join(', ')}`, [
        `Your COMPLETE was not accepted: the quality gate${weakened.length === 1 ? '' : 's'} ${weakened.join(', ')} ${weakened.length === 1 ? 'was' : 'were'} weakened instead of passed. Gates are judged against the task's base: restore every test, script and config listed as "gate weakened" below, fix the code so the restored gates pass, then signal COMPLETE again.`,
        ...gateFeedback,
      ]);
    }
    if (input.errored) {
      return continueWith('COMPLETE signalled, but the iteration ended with an error', [
        'You signalled COMPLETE, but the iteration ended with an error; verify the work and signal again.',
        ...gateFeedback,
      ]);
    }
    if (requiredFailed.length > 0) {
      return continueWith(`COMPLETE not accepted: required gates failed: ${requiredFailed.join(', ')}`, [
        `Your COMPLETE was not accepted: these required quality gates failed: ${requiredFailed.join(', ')}. Fix the items below, then signal COMPLETE again.`,
        ...gateFeedback,
      ]);
    }
    const retried = (gates?.optionalFailed ?? []).filter((name) => input.optionalIterationsLeft(name) > 0);
    if (retried.length > 0) {
      return {
        kind: 'continue',
        reason: `COMPLETE held back once more for optional gates: ${retried.join(', ')}`,
        feedback: [
          `The required gates pass. Optional gates still fail (${retried.join(', ')}); improve them if you can, then signal COMPLETE again.`,
          ...gateFeedback,
        ],
        optionalGatesRetried: retried,
      };
    }
    const notes = (gates?.optionalFailed ?? []).map((name) => `optional gate ${name} still fails (not blocking)`);
    return { kind: 'finish', status: 'done', reason: signal.summary ?? 'the agent signalled COMPLETE and the required gates pass', notes };
  }
  if (input.errored) return continueWith('the iteration ended with an error', gateFeedback);
  if (requiredFailed.length > 0) return continueWith(`required gates failed: ${requiredFailed.join(', ')}`, gateFeedback);
  return continueWith('no completion signal', [
    gates && gates.outcomes.length > 0
      ? 'The required gates pass, but the previous iteration ended without a completion signal. If the promise is met, call ralph_complete with the evidence.'
      : 'The previous iteration ended without a completion signal. When the promise is met, call ralph_complete.',
    ...gateFeedback,
  ]);
}

/** Seed 003: a high security finding is fixed before anything else. */
const HIGH_FIRST = 'A high-severity security finding is open: fix it first, before any other item below (the model was escalated for it).';

function continueWith(reason: string, feedback: string[]): Extract<CompletionDecision, { kind: 'continue' }> {
  return { kind: 'continue', reason, feedback, optionalGatesRetried: [] };
}

/** The fix items of every gate as feedback lines, most urgent first. */
export function fixItemLines(report: GateReport): string[] {
  const rank: Record<FixItem['level'], number> = { error: 0, warning: 1, observation: 2 };
  return report.outcomes
    .flatMap((o) => o.fixItems.map((f) => ({ ...f, required: o.required })))
    .sort((a, b) => rank[a.level] - rank[b.level] || Number(b.required) - Number(a.required))
    .map((f) => `[${f.gate}${f.required ? '' : ', optional'}] ${f.level === 'observation' ? 'note: ' : ''}${f.text}`);
}
