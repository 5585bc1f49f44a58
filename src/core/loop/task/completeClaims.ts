import type { GateOutcome, GateReport } from '../../gates/types';
import type { IterationRecord } from '../../record/checkpoint';
import type { CompletionDecision } from '../../reports/decision';
import type { Signal } from '../../signals/types';
import type { Task } from '../../tasks/schema';
import { changedNothing } from './taskEvidence';

/**
 * Two rules of a COMPLETE that the gates' verdicts alone do not make (issue 33):
 * - no change, no done: a COMPLETE while a required test fails, from a task that changed
 *   nothing, is refused whatever else holds (a forgiven failure, a person's known failure);
 * - a failing test that failed at the base too and is held against the task (the evidence does
 *   not show it unrelated) is fed back; when the agent claims COMPLETE again with it still red,
 *   the run asks the person once — part of this task, or unrelated — and the task waits
 *   (`needs_help`), never `done`.
 */

/** Names of the failing tests of the required gates. */
export function requiredFailures(gates: GateReport | undefined): string[] {
  return (gates?.outcomes ?? []).filter((o) => o.required).flatMap((o) => o.parsed.tests?.failures.map((f) => f.name) ?? []);
}

/** A COMPLETE from a task that changed nothing, while required tests fail: refused, told why. */
export function refuseUnchanged(decision: CompletionDecision, gates: GateReport | undefined): CompletionDecision {
  const failing = requiredFailures(gates);
  const shown = failing
    .slice(0, 5)
    .map((n) => `\`${n}\``)
    .join(', ');
  const more = failing.length > 5 ? ` and ${failing.length - 5} more` : '';
  const reason = `COMPLETE not accepted: the task changed nothing while required tests fail (${shown}${more})`;
  const feedback = [
    `Your COMPLETE was not accepted: you have changed no file of the workspace since the task's base, and these required tests fail: ${shown}${more}. A task is done only by a change that makes them pass (or, where a person says a failure is unrelated, by the change the task asks for). Read the failures below, change the code, then signal COMPLETE again.`,
  ];
  const rest = decision.kind === 'continue' ? decision.feedback : decision.notes;
  return { kind: 'continue', reason, feedback: [...feedback, ...rest], optionalGatesRetried: [] };
}

/** The held failures of a report's failing required gates, when they are all that fails them. */
export function heldOnly(gates: GateReport | undefined): { gate: string; name: string; why: string }[] {
  const failing = (gates?.outcomes ?? []).filter((o) => o.required && !o.passed);
  if (failing.length === 0 || !failing.every(onlyHeld)) return [];
  return failing.flatMap((o) => (o.baseFailures ?? []).filter((v) => v.held).map((v) => ({ gate: o.name, name: v.name, why: v.why })));
}

/** A gate that fails for held base failures alone: every failure failed at the base too (held or forgiven), no weakening, every failure named. */
function onlyHeld(o: GateOutcome): boolean {
  const tests = o.parsed.tests;
  if (!tests || (o.integrity?.violations.length ?? 0) > 0 || tests.failed !== tests.failures.length || tests.failed === 0) return false;
  const atBase = new Set((o.baseFailures ?? []).map((v) => v.name));
  return tests.failures.every((f) => atBase.has(f.name)) && (o.baseFailures ?? []).some((v) => v.held);
}

/**
 * The second COMPLETE in a row with the same held failures still red: the question for the
 * person, once per set of tests (an answered one is not asked again; the agent is told instead).
 */
export function heldFailuresQuestion(
  task: Pick<Task, 'id' | 'questions'>,
  signal: Signal | undefined,
  gates: GateReport | undefined,
  previous: IterationRecord | undefined,
): Extract<CompletionDecision, { kind: 'finish' }> | undefined {
  if (signal?.kind !== 'COMPLETE' || previous?.signal !== 'COMPLETE') return undefined;
  const held = heldOnly(gates);
  if (held.length === 0) return undefined;
  const before = new Set(previous.gates.flatMap((g) => (g.baseFailures ?? []).filter((v) => v.held).map((v) => v.name)));
  if (!held.every((h) => before.has(h.name))) return undefined;
  const asked = (task.questions ?? []).filter((q) => q.kind === 'verdict').flatMap((q) => q.tests ?? []);
  if (held.every((h) => asked.includes(h.name))) return undefined;
  const one = held.length === 1;
  const listed = held
    .slice(0, 10)
    .map((h) => `\`${h.name}\` (${h.why})`)
    .join('; ');
  const more = held.length > 10 ? `; and ${held.length - 10} more` : '';
  const question =
    `${task.id} claims COMPLETE again, but ${one ? 'this test still fails' : 'these tests still fail'}; ${one ? 'it' : 'they'} failed at the task's base too, and nothing shows ${one ? 'it is' : 'they are'} unrelated to the task: ${listed}${more}. ` +
    `Is ${one ? 'it' : 'this'} part of ${task.id}? "Part of this task": the agent goes on until ${one ? 'it passes' : 'they pass'} (\`ralph task answer ${task.id} --part-of-task\`). "Unrelated: land without it": ${one ? 'it becomes a known failure' : 'they become known failures'} of this task and the task may finish with ${one ? 'it' : 'them'} red (\`ralph task answer ${task.id} --unrelated\`). In the editor: Answer… on the task.`;
  return {
    kind: 'finish',
    status: 'needs_help',
    reason: question,
    notes: [],
    question: { kind: 'verdict', question, tests: held.map((h) => h.name) },
  };
}

/**
 * The completion policy's decision with the two rules applied: a COMPLETE from a task that
 * changed nothing is refused while required tests fail; a second COMPLETE with only held
 * failures left asks the person.
 */
export async function withClaimRules(
  decided: CompletionDecision,
  input: {
    task: Pick<Task, 'id' | 'questions'>;
    signal: Signal | undefined;
    gates: GateReport | undefined;
    previous: IterationRecord | undefined;
    root: string;
    base: string | undefined;
  },
): Promise<CompletionDecision> {
  if (input.signal?.kind !== 'COMPLETE') return decided;
  if (requiredFailures(input.gates).length > 0 && (await changedNothing(input.root, input.base)))
    return refuseUnchanged(decided, input.gates);
  if (decided.kind !== 'continue') return decided;
  return heldFailuresQuestion(input.task, input.signal, input.gates, input.previous) ?? decided;
}
