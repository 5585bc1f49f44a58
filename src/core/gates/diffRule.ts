import type { BaseVerdict } from './baseVerdict';
import type { IntegrityJudgement } from './integrity';
import { READABLE } from './readableHint';
import type { TestCodeFinding } from './testCodeChanges';
import type { GateOutcome } from './types';

/**
 * The diff rule's place in a verdict (issue 47): which gates it judges, which files it reads for
 * them, what it says of them. A required `tests` gate whose output gave no test names or counts
 * at the task's base is judged by the task's diff (`testCodeChanges.ts`) besides its exit code;
 * its summary says so wherever the gate is shown, and how to make the output readable.
 */

/** Whether the diff rule judges this gate: a required tests gate whose output was not read at the base. */
export function diffRuleApplies(gate: { kind: string; required: boolean }, base: { tests?: unknown } | undefined): boolean {
  return gate.kind === 'tests' && gate.required && base !== undefined && base.tests === undefined;
}

/**
 * Whether the gate runs `file`: a test file by the runners' conventions and configs (`isTest`), a
 * Rust file (its tests live beside the code), or a file its command or a package.json script
 * names (`node test/checks.js`). What a runner of its own would pick is not known: every test
 * file of the repository counts.
 */
export function gateRunsFile(
  file: string,
  gate: { command: string },
  scripts: Readonly<Record<string, string>>,
  isTest: (file: string) => boolean,
): boolean {
  if (isTest(file) || file.endsWith('.rs')) return true;
  const words = [gate.command, ...Object.values(scripts)].flatMap((t) => t.split(/[\s'"=;&|()]+/));
  return words.some((w) => w.replace(/^\.\//, '') === file);
}

/**
 * The findings as integrity violations: held like a weakened gate (a person may allow them:
 * `allowGateChanges`). Tests removed from a suite that was green at the base passed there: they
 * are `gone`, and an agent that keeps removing them is asked about as on a runner that names its
 * tests; from a red suite any of them may be the failing one, so they are only held.
 */
export function diffRuleJudgement(findings: readonly TestCodeFinding[], greenAtBase = false): IntegrityJudgement {
  const violations = findings.map(
    (f) => `the gate's output could not be read (no test names or counts), so the task's diff decides: it removes test code — ${f.text}`,
  );
  if (!greenAtBase) return { violations };
  const gone = findings.filter((f) => f.what === 'removed' || f.what === 'deleted').flatMap((f) => f.tests.map((t) => `${f.file}: ${t}`));
  return { violations, ...(gone.length ? { gone } : {}) };
}

/**
 * The gate's summary with what the diff rule did: its output was not read, the exit codes at the
 * base and now, what the diff showed (undefined: it could not be read), how to make it readable
 * (`hint`: `readableHint` of the gate's command, the general sentence by default). `passed` is
 * the gate's verdict with the rule's findings held: where the run passed and the diff did not,
 * the summary leads with that verdict and why (`not passed: the task removes test code in …`),
 * never with the run's "passed".
 */
export function diffRuleSummary(
  outcome: Pick<GateOutcome, 'summary' | 'exitCode' | 'passed'>,
  base: BaseVerdict | undefined,
  findings: readonly TestCodeFinding[] | undefined,
  hint: string = READABLE,
): string {
  const summary = outcome.summary.replace(/ \(no test counts found in the output\)/, '');
  const exits = base ? `; ${base.passed ? 'green' : 'red'} at the task's base, exit code ${outcome.exitCode ?? 'none'} now` : '';
  const diff =
    findings === undefined
      ? "the task's diff could not be read"
      : findings.length === 0
        ? 'the task removes no test code'
        : `the task removes test code in ${[...new Set(findings.map((f) => `\`${f.file}\``))].join(', ')}`;
  const ran = /^passed\b\s*/.exec(summary);
  if (outcome.passed || !findings?.length || !ran)
    return `${summary} — output not read (no test names or counts)${exits}; judged by the diff rule: ${diff}. ${hint}`;
  // the run passed and the diff did not: the verdict first, and why; what else the run said (a report not read) after it
  const said = summary.slice(ran[0].length);
  return `not passed: ${diff} (judged by the diff rule: output not read, no test names or counts${said ? ` ${said}` : ''}${exits}). ${hint}`;
}
