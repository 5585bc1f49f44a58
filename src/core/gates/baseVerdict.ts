import { z } from 'zod';
import type { FixItem, GateOutcome } from './types';
import type { FailureJudge, FailureVerdict } from './verdictEvidence';

/**
 * Verdicts against a base: a gate that was already red at the task's base (or on the merge
 * target's tip). A failing test that failed there too, under the same name, is the task's unless
 * the evidence says it is unrelated (`verdictEvidence.ts`); a test that passed there and fails
 * now, or a new failing test, fails the gate as before. Where the runner does not name every
 * failing test, no failure can be told apart, so nothing is forgiven and the verdict says so.
 */

/** How a gate ended on the base: green or not, and each failing test by name. */
export const BaseVerdictSchema = z.object({
  passed: z.boolean(),
  failing: z.array(z.object({ name: z.string(), file: z.string().optional() })),
  /** Failures the output counted without naming them. */
  unnamed: z.number().int().min(0).default(0),
  /** The output gave test counts at all. */
  counted: z.boolean().default(true),
});
export type BaseVerdict = z.infer<typeof BaseVerdictSchema>;

export function baseVerdictOf(outcome: GateOutcome): BaseVerdict {
  const tests = outcome.parsed.tests;
  const failing = (tests?.failures ?? []).map((f) => ({ name: f.name, ...(f.file ? { file: f.file } : {}) }));
  return { passed: outcome.passed, failing, unnamed: Math.max(0, (tests?.failed ?? 0) - failing.length), counted: tests !== undefined };
}

/** Where the base is, as the notes say it: `at the task's base`, `on main before this merge`. */
export interface BaseWhere {
  at: string;
}

export const TASK_BASE: BaseWhere = { at: "at the task's base" };

/**
 * The outcome judged against the base. `enabled` is `gates[].baseline` (default true). Only a
 * failed outcome of a gate that was red on the base changes: each of its failures that failed
 * there too is judged (`verdictEvidence.ts`) — forgiven (`preExisting`) or held against the task,
 * with the evidence either way (`baseFailures`) — and when every failure is forgiven, the gate
 * passes. A failure that is new since the base is the task's, as before.
 */
export async function judgeAgainstBase(
  outcome: GateOutcome,
  base: BaseVerdict | undefined,
  where: BaseWhere,
  options: { enabled?: boolean; judge: FailureJudge },
): Promise<GateOutcome> {
  if (options.enabled === false || outcome.passed || !base || base.passed) return outcome;
  const tests = outcome.parsed.tests;
  const named = tests?.failures ?? [];
  const unnamedNow = tests ? tests.failed - named.length : 0;
  if (!tests || tests.failed === 0 || unnamedNow > 0 || !base.counted || base.unnamed > 0 || outcome.timedOut) {
    // a red gate whose failures cannot all be named here and at the base: nothing is told apart
    const why = !tests || !base.counted ? 'its output gives no test names' : 'its output does not name every failing test';
    const note = `${outcome.name} failed ${where.at} too, but ${why}, so no failure can be told apart from one the task caused: nothing is forgiven. Make the test runner name its failing tests (see "Test names" in docs/how-a-task-ends.md: the reporter to use per runner), or set "baseline": false on the gate to require it all green.`;
    return tests?.failed === 0
      ? outcome
      : {
          ...outcome,
          baselineNote: note,
          fixItems: [...outcome.fixItems, { gate: outcome.name, kind: outcome.kind, level: 'warning', text: note }],
        };
  }
  const before = new Set(base.failing.map((f) => f.name));
  const verdicts: FailureVerdict[] = [];
  for (const f of named) if (before.has(f.name)) verdicts.push(await options.judge(f));
  if (verdicts.length === 0) return outcome;
  const forgiven = verdicts.filter((v) => !v.held);
  const byName = new Map(verdicts.map((v) => [v.name, v]));
  const fixItems = outcome.fixItems.map((item) => {
    const verdict = byName.get(FAILING_TEST.exec(item.text)?.[1] ?? '');
    return verdict ? baseFailureItem(item, verdict, where) : item;
  });
  const judged = { ...outcome, fixItems, baseFailures: verdicts, ...(forgiven.length ? { preExisting: forgiven.map((v) => v.name) } : {}) };
  const held = verdicts.length - forgiven.length;
  const fresh = named.length - verdicts.length;
  const said = [
    forgiven.length ? `${forgiven.length} already failing ${where.at}, unrelated to the task` : '',
    held ? `${held} failing ${where.at} too, held against the task` : '',
  ]
    .filter(Boolean)
    .join('; ');
  if (fresh > 0 || held > 0) return { ...judged, summary: `${outcome.summary} (${said})` };
  return {
    ...judged,
    passed: true,
    // the output tail only served the failures, which are not the task's
    outputTail: undefined,
    summary: `${outcome.summary} — ${said}, not held against the task`,
  };
}

const FAILING_TEST = /^failing test: (.+?)(?:\n|$)/;

/** A failure's feedback with its verdict against the base: a note when forgiven, the evidence when held. */
function baseFailureItem(item: FixItem, verdict: FailureVerdict, where: BaseWhere): FixItem {
  if (!verdict.held)
    return {
      ...item,
      level: 'observation',
      text: item.text.replace(
        /^failing test: /,
        `pre-existing failure (already failing ${where.at}; not held against the task: ${verdict.why}): `,
      ),
    };
  return { ...item, text: `${item.text}\n(it failed ${where.at} too and is yours to fix: ${verdict.why})` };
}
