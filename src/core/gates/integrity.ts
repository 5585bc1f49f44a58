import { z } from 'zod';
import { BaseVerdictSchema } from './baseVerdict';
import type { DefinitionPart, DefinitionState } from './definitions';
import type { TestCounts, TestName } from './parsers/types';
import type { Rename } from './renames';
import { filesCutShort, statusIn } from './wholeFiles';
import type { FixItem, GateOutcome } from './types';

/**
 * Gate integrity: what a required gate checked at the task's base, and the judgement of a
 * later run against it. A gate passes only on the terms it had at the base: its tests still
 * exist, still run and are not skipped, and the files that define it are unchanged — unless
 * the task allows changing that gate, and then the change is reported instead.
 */

/** Past this many tests the names are not kept (the counts still are). */
export const MAX_BASELINE_NAMES = 5000;
/** Sources of tests failing at the base larger than this are not kept. */
const MAX_SOURCE_CHARS = 100_000;
const MAX_LISTED = 10;

const TestNameSchema = z.object({ name: z.string(), status: z.enum(['pass', 'fail', 'skip']), file: z.string().optional() });

export const GateBaselineSchema = z.object({
  gate: z.string(),
  command: z.string(),
  kind: z.string(),
  /** Absent when the gate's output gave no test counts at the base. */
  tests: z
    .object({ total: z.number(), passed: z.number(), failed: z.number(), skipped: z.number(), names: z.array(TestNameSchema).optional() })
    .optional(),
  /** Definition part key → where it is and its state at the base (see `definitions.ts`). */
  definition: z.record(
    z.string(),
    z.object({ file: z.string(), part: z.string().optional(), hash: z.string().nullable(), preview: z.string().optional() }),
  ),
  /** Workspace-relative file → its text at the base, for each file holding a test that failed there. */
  failingSources: z.record(z.string(), z.string()).default({}),
  /** How the gate ended at the base (green or not, its failing tests by name); absent for gates not run there. */
  verdict: BaseVerdictSchema.optional(),
  /** Why it cannot run where the task runs, whatever the agent changes (gates/environmentFault.ts): the task stops. */
  environment: z.string().optional(),
});
export type GateBaseline = z.infer<typeof GateBaselineSchema>;

export const IntegrityBaselineSchema = z.object({
  takenAt: z.string(),
  gates: z.array(GateBaselineSchema),
});
export type IntegrityBaseline = z.infer<typeof IntegrityBaselineSchema>;

/** What a gate's run shows against the base. */
export interface IntegrityJudgement {
  /** How the gate was weakened, one sentence each, naming the test or file. */
  violations: string[];
  /** Tests that passed at the base and are gone now (not renamed): a person may allow it. */
  gone?: string[];
  /** Renamed tests accepted (same file, same body but for renamed identifiers), one sentence each. */
  renamed?: string[];
}

/** The task's permission to change gates: all of them (`true`) or the named ones. */
export type GateChangeAllowance = boolean | readonly string[] | undefined;

export function gateChangesAllowed(allow: GateChangeAllowance, gate: string): boolean {
  return allow === true || (Array.isArray(allow) && allow.includes(gate));
}

/** The baseline entry of a gate from its run at the base. */
export function baselineOf(
  gate: { name: string; command: string; kind: string },
  tests: TestCounts | undefined,
  parts: readonly DefinitionPart[],
  states: Record<string, DefinitionState>,
  failingSources: Record<string, string>,
): GateBaseline {
  const definition: GateBaseline['definition'] = {};
  for (const p of parts) definition[p.key] = { file: p.file, ...(p.part ? { part: p.part } : {}), ...states[p.key] };
  const names = tests?.names && tests.names.length <= MAX_BASELINE_NAMES ? tests.names : undefined;
  const sources = Object.fromEntries(Object.entries(failingSources).filter(([, text]) => text.length <= MAX_SOURCE_CHARS));
  return {
    gate: gate.name,
    command: gate.command,
    kind: gate.kind,
    tests: tests
      ? { total: tests.total, passed: tests.passed, failed: tests.failed, skipped: tests.skipped, ...(names ? { names } : {}) }
      : undefined,
    definition,
    failingSources: sources,
  };
}

/** The definition parts a baseline watches, to read them again later. */
export function baselineParts(base: GateBaseline): DefinitionPart[] {
  return Object.entries(base.definition).map(([key, d]) => ({ key, file: d.file, ...(d.part ? { part: d.part } : {}) }));
}

/**
 * What guards a test that failed at the base and passes now: the files that define it — its test
 * file and the test-side files it imports (fixtures, helpers) — at the base and now (`after`
 * undefined: deleted). Lines of the base gone from them mean the test was rewritten to pass.
 */
export type EmptiedGuards = Record<string, { file: string; before: string; after: string | undefined }[]>;

/**
 * Compares a gate's run now with its base. `definition` is the state of the base's definition
 * parts now; `guards` the files of each test that failed at the base and passes now (see
 * `failedAtBaseNowPassing`), read by the caller. `run.completed` is false when the run did not
 * get to report (timeout, stop, a non-zero exit without counts): a missing count is not held
 * against it then.
 */
export function judgeIntegrity(
  base: GateBaseline,
  now: TestCounts | undefined,
  definition: Record<string, DefinitionState>,
  guards: EmptiedGuards,
  run: { completed: boolean } = { completed: true },
  renames: readonly Rename[] = [],
): IntegrityJudgement {
  const violations: string[] = [];
  const tests: IntegrityJudgement = { violations: [] };
  for (const [key, before] of Object.entries(base.definition)) {
    const after = definition[key] ?? { hash: null };
    if (after.hash === before.hash) continue;
    if (before.hash === null)
      violations.push(
        `\`${key}\` was added since the task's base${after.preview !== undefined ? ` (\`${after.preview}\`)` : ''}; it changes what the gate runs — remove it`,
      );
    else if (after.hash === null)
      violations.push(
        `\`${key}\` was removed since the task's base${before.preview !== undefined ? ` (it was \`${before.preview}\`)` : ''} — restore it`,
      );
    else {
      const values = before.preview !== undefined && after.preview !== undefined ? ` (\`${before.preview}\` → \`${after.preview}\`)` : '';
      violations.push(`\`${key}\` changed since the task's base${values} — restore it`);
    }
  }
  // a run that timed out, was stopped or failed without counts already fails, with its own output as the reason
  if (base.tests && (now || run.completed)) Object.assign(tests, testViolations(base.tests, now, guards, renames));
  return { ...tests, violations: [...violations, ...tests.violations] };
}

/** Tests that ran at the base and are not in this run, and tests of this run the base did not have (by name). */
export function goneAndAdded(base: GateBaseline, now: TestCounts | undefined): { gone: TestName[]; added: TestName[] } {
  if (!base.tests?.names || !now?.names) return { gone: [], added: [] };
  const before = new Set(base.tests.names.map((t) => t.name));
  const statusNow = statusIn(now);
  return {
    gone: base.tests.names.filter((t) => t.status !== 'skip' && statusNow(t) === undefined),
    added: now.names.filter((t) => !before.has(t.name)),
  };
}

function testViolations(
  before: NonNullable<GateBaseline['tests']>,
  now: TestCounts | undefined,
  guards: EmptiedGuards,
  renames: readonly Rename[],
): IntegrityJudgement {
  if (!now)
    return {
      violations: [
        `the gate's output gave no test count; at the task's base it ran ${ran(before)} test${ran(before) === 1 ? '' : 's'} — restore the test run`,
      ],
    };
  const out: string[] = [];
  const result: IntegrityJudgement = { violations: out };
  let shortfall = 0;
  if (before.names && now.names) {
    const statusNow = statusIn(now);
    const renamedFrom = new Map(renames.map((r) => [r.from, r]));
    // a test that failed at the base is never taken for renamed: it must still be there, and pass
    const missing = before.names.filter((t) => t.status !== 'skip' && statusNow(t) === undefined);
    const accepted = missing.filter((t) => t.status === 'pass' && renamedFrom.has(t.name));
    // tests of a file that fails as a whole now (a timeout, a crash) did not get to report: that file's failure fails the gate
    const cutShort = filesCutShort(before.names, now.names);
    const unreported = missing.filter((t) => t.file && cutShort.has(t.file));
    const gone = missing.filter((t) => !accepted.includes(t) && !unreported.includes(t));
    shortfall = unreported.length;
    const goneWhilePassing = gone.filter((t) => t.status === 'pass').map((t) => t.name);
    if (goneWhilePassing.length) result.gone = goneWhilePassing;
    if (accepted.length)
      result.renamed = accepted.map((t) => {
        const r = renamedFrom.get(t.name)!;
        return `test \`${r.from}\` renamed to \`${r.to}\` in \`${r.file}\` (the same body but for renamed identifiers): accepted`;
      });
    const skipped = before.names.filter((t) => t.status !== 'skip' && statusNow(t) === 'skip');
    const them = gone.length === 1 ? 'it' : 'them';
    // a rename the orchestrator recognises keeps the test in its file with the same body; anything else is asked about once more
    const ask =
      goneWhilePassing.length > 0
        ? ` (a renamed test is accepted when it stays in its file with the same body but for renamed identifiers; if removing ${them} is really part of the task, keeping this change once more hands the question to a person)`
        : '';
    if (gone.length)
      out.push(
        `test${gone.length === 1 ? '' : 's'} ${listed(gone.map((t) => t.name))} ran at the task's base and ${gone.length === 1 ? 'is' : 'are'} gone now (deleted, renamed or filtered out) — restore ${them}${ask}`,
      );
    if (skipped.length)
      out.push(
        `test${skipped.length === 1 ? '' : 's'} ${listed(skipped.map((t) => t.name))} ${skipped.length === 1 ? 'is' : 'are'} skipped now but ran at the task's base — un-skip ${skipped.length === 1 ? 'it' : 'them'}`,
      );
  } else if (now.skipped > before.skipped) {
    out.push(
      `${now.skipped - before.skipped} more test${now.skipped - before.skipped === 1 ? ' is' : 's are'} skipped than at the task's base (${before.skipped} → ${now.skipped}) — un-skip them`,
    );
  }
  out.push(...emptiedFailures(guards));
  if (ran(now) + shortfall < ran(before))
    out.push(
      `${ran(now)} test${ran(now) === 1 ? '' : 's'} ran, fewer than the ${ran(before)} at the task's base — restore the tests that no longer run`,
    );
  return result;
}

/** The tests that failed at the base, with the file that defines each when the runner reported it. */
function failedAtBase(base: GateBaseline): Map<string, string | undefined> {
  const failed = new Map<string, string | undefined>();
  for (const t of base.tests?.names ?? []) if (t.status === 'fail') failed.set(t.name, t.file);
  for (const f of base.verdict?.failing ?? []) if (!failed.get(f.name)) failed.set(f.name, f.file);
  return failed;
}

/**
 * The tests that failed at the base and pass now. Where the runner names every test, "passes
 * now" is read from the inventory; where it names only its failures (mocha's, jest's and pytest's
 * default output), a test that failed at the base and is no longer among the failures of a run
 * that counted its tests is taken as passing (deleted counts too).
 */
export function failedAtBaseNowPassing(base: GateBaseline, now: TestCounts | undefined): { name: string; file?: string }[] {
  if (!now) return [];
  const statusNow = now.names ? statusIn(now) : undefined;
  const failingNow = new Set(now.failures.map((f) => f.name));
  const out: { name: string; file?: string }[] = [];
  for (const [name, file] of failedAtBase(base)) {
    const passes = statusNow
      ? statusNow({ name, status: 'fail', ...(file ? { file } : {}) }) === 'pass'
      : !failingNow.has(name) && now.failed <= now.failures.length;
    if (passes) out.push({ name, ...(file ? { file } : {}) });
  }
  return out;
}

/**
 * A test that failed at the base and passes now, while a file that defines it lost lines it had
 * then: the test was rewritten to pass (emptied, its assertions or its fixtures' rows deleted,
 * skipped) rather than the code fixed. Tests added beside it are fine; only lines of the base
 * that are gone count. Never the code under test: the guards are test-side files only.
 */
function emptiedFailures(guards: EmptiedGuards): string[] {
  const out: string[] = [];
  for (const [name, files] of Object.entries(guards)) {
    for (const { file, before, after } of files) {
      const removed = removedLines(before, after ?? '');
      if (removed.length === 0) continue;
      const shown = removed
        .slice(0, 3)
        .map((l) => `\`${l.length > 120 ? `${l.slice(0, 120)}…` : l}\``)
        .join(', ');
      const how =
        after === undefined
          ? 'was deleted'
          : `lost lines it had there (${shown}${removed.length > 3 ? `, ${removed.length - 3} more` : ''})`;
      out.push(
        `test \`${name}\` failed at the task's base and passes now, but \`${file}\`, which defines it, ${how} — fix the code under test, not the test, and restore ${after === undefined ? 'it' : 'those lines'}`,
      );
    }
  }
  return out;
}

/** Non-blank lines of `before` (as a multiset, trimmed) that `after` no longer has. */
export function removedLines(before: string, after: string): string[] {
  const left = new Map<string, number>();
  for (const line of after.split(/\r?\n/)) {
    const t = line.trim();
    if (t) left.set(t, (left.get(t) ?? 0) + 1);
  }
  const removed: string[] = [];
  for (const line of before.split(/\r?\n/)) {
    const t = line.trim();
    if (!t) continue;
    const n = left.get(t) ?? 0;
    if (n > 0) left.set(t, n - 1);
    else removed.push(t);
  }
  return removed;
}

/**
 * The outcome with the judgement applied: a weakened gate fails with one error item per
 * violation, unless the task allows changing it — then it keeps its verdict and the changes
 * are recorded as `allowed`, for the reports.
 */
export function applyIntegrity(outcome: GateOutcome, judgement: IntegrityJudgement, allowed: boolean): GateOutcome {
  const renamed = judgement.renamed ?? [];
  if (judgement.violations.length === 0) return renamed.length ? { ...outcome, integrity: { violations: [], allowed: renamed } } : outcome;
  // what changed, without the request to undo it
  if (allowed)
    return {
      ...outcome,
      integrity: { violations: [], allowed: [...renamed, ...judgement.violations.map((v) => v.replace(/ — [^—]*$/, ''))] },
    };
  const items: FixItem[] = judgement.violations.map((text) => ({
    gate: outcome.name,
    kind: outcome.kind,
    level: 'error',
    text: `gate weakened: ${text}`,
  }));
  return {
    ...outcome,
    passed: false,
    summary: `${outcome.summary}; weakened against the task's base (${judgement.violations.length} change${judgement.violations.length === 1 ? '' : 's'})`,
    fixItems: [...items, ...outcome.fixItems],
    integrity: { violations: judgement.violations, allowed: renamed, ...(judgement.gone?.length ? { gone: judgement.gone } : {}) },
  };
}

function ran(t: { total: number; skipped: number }): number {
  return Math.max(0, t.total - t.skipped);
}

function listed(names: string[]): string {
  const shown = names
    .slice(0, MAX_LISTED)
    .map((n) => `\`${n}\``)
    .join(', ');
  return names.length > MAX_LISTED ? `${shown} and ${names.length - MAX_LISTED} more` : shown;
}
