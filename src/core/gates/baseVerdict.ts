import { z } from 'zod';
import type { FixItem, GateOutcome } from './types';

/**
 * Verdicts against a base: a gate that was already red at the task's base (or on the merge
 * target's tip) fails the task only for what the task broke. A failing test that failed there
 * too, under the same name, is named as pre-existing and forgiven; a test that passed there and
 * fails now, or a new failing test, fails the gate as before. Where the runner does not name
 * every failing test, no failure can be told apart, so nothing is forgiven and the verdict says so.
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
 * failed outcome of a gate that was red on the base changes: its failures that were there are
 * named (`preExisting`) and, when they are all it has, the gate passes.
 */
export function forgivePreExisting(
  outcome: GateOutcome,
  base: BaseVerdict | undefined,
  where: BaseWhere,
  enabled = true,
  taskText = '',
): GateOutcome {
  if (!enabled || outcome.passed || !base || base.passed) return outcome;
  const tests = outcome.parsed.tests;
  const named = tests?.failures ?? [];
  const unnamedNow = tests ? tests.failed - named.length : 0;
  if (!tests || tests.failed === 0 || unnamedNow > 0 || !base.counted || base.unnamed > 0 || outcome.timedOut) {
    // a red gate whose failures cannot all be named here and at the base: nothing is told apart
    const why = !tests || !base.counted ? 'its output gives no test names' : 'its output does not name every failing test';
    const note = `${outcome.name} failed ${where.at} too, but ${why}, so no failure can be told apart from one the task caused: nothing is forgiven. Make the test runner name its failing tests (see "Pre-existing failures" in the README: the reporter to use per runner), or set "baseline": false on the gate to require it all green.`;
    return tests?.failed === 0
      ? outcome
      : {
          ...outcome,
          baselineNote: note,
          fixItems: [...outcome.fixItems, { gate: outcome.name, kind: outcome.kind, level: 'warning', text: note }],
        };
  }
  const before = new Set(base.failing.map((f) => f.name));
  // "not yours unless the task says so": a failure the task names (its test or its file) is the task's to fix
  const pre = named.filter((f) => before.has(f.name) && !namedByTask(f, taskText)).map((f) => f.name);
  if (pre.length === 0) return outcome;
  const fresh = named.length - pre.length;
  const preSet = new Set(pre);
  const fixItems = outcome.fixItems.map((item) => (isFailureOf(item, preSet) ? preExistingItem(item, where) : item));
  const said = `${pre.length} already failing ${where.at}`;
  if (fresh > 0) return { ...outcome, preExisting: pre, fixItems, summary: `${outcome.summary} (${said})` };
  return {
    ...outcome,
    passed: true,
    preExisting: pre,
    // the output tail only served the failures, which are not the task's
    outputTail: undefined,
    summary: `${outcome.summary} — ${said}, not held against the task`,
    fixItems,
  };
}

const FAILING_TEST = /^failing test: (.+?)(?:\n|$)/;

function isFailureOf(item: FixItem, names: ReadonlySet<string>): boolean {
  const m = FAILING_TEST.exec(item.text);
  return m !== null && names.has(m[1]);
}

function preExistingItem(item: FixItem, where: BaseWhere): FixItem {
  return {
    ...item,
    level: 'observation',
    text: item.text.replace(/^failing test: /, `pre-existing failure (already failing ${where.at}; not yours unless the task says so): `),
  };
}

/**
 * Whether the task's own words (title, request, promise, check) name a failing test: its full
 * name, its title (the last part of `suite › test`, `file > test`, `path::test`) word for word
 * or every word of it in any form (`unquotes quoted values` ~ "must unquote quoted values"),
 * or its file.
 */
export function namedByTask(failure: { name: string; file?: string }, taskText: string): boolean {
  const text = taskText.toLowerCase();
  if (!text.trim()) return false;
  const name = failure.name.toLowerCase();
  const title = name
    .split(/ › | > |::/)
    .at(-1)!
    .replace(/\[[^\]]*\]$/, '');
  const file = failure.file?.toLowerCase() ?? /[\w-]+\.[a-z]+(?=::| >)/.exec(name)?.[0] ?? '';
  const base = file.split('/').at(-1) ?? '';
  if (
    text.includes(name) ||
    (title.length >= 4 && text.includes(title)) ||
    (file !== '' && text.includes(file)) ||
    (base.includes('.') && text.includes(base))
  )
    return true;
  // every significant word of the title, in any form (test_parse_header, "parses headers")
  const words = stems(title);
  if (words.length < 2) return false;
  const said = new Set(stems(text));
  return words.every((w) => said.has(w));
}

function stems(text: string): string[] {
  return text
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length >= 4 && !STOP_WORDS.has(w))
    .map((w) => w.replace(/(?:ing|ed|s)$/, '').replace(/e$/, ''));
}

const STOP_WORDS = new Set(['test', 'tests', 'should', 'when', 'with', 'that', 'this', 'from', 'into', 'does', 'have', 'works']);
