import { z } from 'zod';
import type { RalphConfig } from '../config/schema';
import type { ProofKind, Task } from '../tasks/schema';
import type { BaseVerdict } from './baseVerdict';
import type { GateOutcome } from './types';

/**
 * Fail-to-pass proof: a fix is proven when tests the task added or changed fail on the task's
 * base code and pass on the result. The orchestrator runs the result's test files against the
 * base's source (a scratch worktree) and reads which of them fail there.
 */

export const ProofRecordSchema = z.object({
  status: z.enum(['proven', 'not-proven']),
  /** The test files the task added or changed (workspace-relative). */
  files: z.array(z.string()),
  /** The tests that fail on the base code, each with the first line of its failure there. */
  tests: z.array(z.object({ name: z.string(), baseFailure: z.string().optional() })),
  /** Tests of those files that pass on the base code too: they prove nothing. */
  passingOnBase: z.array(z.string()).default([]),
  /** One sentence: what the proof found. */
  reason: z.string(),
  /** The proof cannot be made here whatever the agent does (no tests gate, no base commit): a person must decide. */
  unprovable: z.boolean().optional(),
});
export type ProofRecord = z.infer<typeof ProofRecordSchema>;

/** The proof a task gets: its own `proof`, else its type's in `proof.types`, else fail-to-pass for bugfix only. */
export function proofKind(task: Pick<Task, 'proof' | 'type'>, config: Pick<RalphConfig, 'proof'>): ProofKind {
  return task.proof ?? config.proof.types[task.type] ?? (task.type === 'bugfix' ? 'fail-to-pass' : 'none');
}

export interface ProofRun {
  gate: string;
  /** The gate on the result (the iteration's run: required gates passed). */
  result: GateOutcome | undefined;
  /** The gate on the base's code with the result's test files. */
  scratch: GateOutcome;
  /** How the gate ended at the task's base (its failures there prove nothing). */
  base: BaseVerdict | undefined;
  /** The tests the gate named at the base: a name not among them is a test the task added. */
  baseNames?: readonly string[];
}

const MAX_LISTED = 20;

/** Reads the scratch runs: which tests of the task fail on the base code. */
export function judgeProof(files: readonly string[], runs: readonly ProofRun[]): ProofRecord {
  const changed = new Set(files);
  const tests: ProofRecord['tests'] = [];
  const passingOnBase: string[] = [];
  for (const run of runs) {
    const scratch = run.scratch.parsed.tests;
    const oldFailures = new Set(run.base?.failing.map((f) => f.name) ?? []);
    const failingOnResult = new Set(run.result?.parsed.tests?.failures.map((f) => f.name) ?? []);
    const ofTask = (t: { name: string; file?: string }) => (t.file ? changed.has(t.file) : !oldFailures.has(t.name));
    for (const f of scratch?.failures ?? []) {
      // a failure already there at the base, or one the result still has, says nothing about the fix
      if (
        oldFailures.has(f.name) ||
        failingOnResult.has(f.name) ||
        !ofTask({ name: f.name, file: f.file ?? (changed.has(f.name.replace(/^\.\//, '')) ? f.name.replace(/^\.\//, '') : undefined) })
      )
        continue;
      tests.push({ name: f.name, ...(f.message ? { baseFailure: f.message.split('\n', 1)[0].slice(0, 300) } : {}) });
    }
    if (!scratch && run.scratch.exitCode !== 0 && !run.scratch.timedOut && (run.base?.counted ?? true)) {
      // the runner did not get to count: the result's tests do not even load on the base code
      const first =
        run.scratch.outputTail?.split('\n').find((l) => /error|cannot|not found|undefined|not a function/i.test(l)) ?? run.scratch.summary;
      tests.push({ name: `${run.gate}: the test run`, baseFailure: first.trim().slice(0, 300) });
    }
    // the task's tests: in the files it changed (where the runner says), or not there at the base
    const before = run.baseNames ? new Set(run.baseNames) : undefined;
    const resultNames =
      run.result?.parsed.tests?.names
        ?.filter((t) => (t.file ? changed.has(t.file) : before !== undefined && !before.has(t.name)))
        .map((t) => t.name) ?? [];
    const passed = new Set(scratch?.names?.filter((t) => t.status === 'pass').map((t) => t.name) ?? []);
    passingOnBase.push(...resultNames.filter((name) => passed.has(name)));
  }
  if (files.length === 0) {
    return {
      status: 'not-proven',
      files: [],
      tests: [],
      passingOnBase: [],
      reason: 'no test file was added or changed: a fix must come with a test that fails without it',
    };
  }
  if (tests.length > 0) {
    return {
      status: 'proven',
      files: [...files],
      tests: tests.slice(0, MAX_LISTED),
      passingOnBase: passingOnBase.slice(0, MAX_LISTED),
      reason: `${tests.length} test${tests.length === 1 ? '' : 's'} of the task fail${tests.length === 1 ? 's' : ''} on the base code and pass${tests.length === 1 ? 'es' : ''} on the result`,
    };
  }
  const named =
    passingOnBase.length > 0
      ? `: ${passingOnBase
          .slice(0, MAX_LISTED)
          .map((n) => `\`${n}\``)
          .join(', ')} pass${passingOnBase.length === 1 ? 'es' : ''} without your change`
      : '';
  return {
    status: 'not-proven',
    files: [...files],
    tests: [],
    passingOnBase: passingOnBase.slice(0, MAX_LISTED),
    reason: `the tests in ${files.map((f) => `\`${f}\``).join(', ')} pass on the base code too${named}: they do not prove the fix`,
  };
}

/** The feedback a COMPLETE gets when the proof does not hold. */
export function proofFeedback(proof: ProofRecord, testFilesHelp: string): string {
  const passing = proof.passingOnBase.map((n) => `- \`${n}\` passes without your change: it does not prove the fix`);
  return [
    `Your COMPLETE was not accepted: this task needs a fail-to-pass proof, and ${proof.reason}.`,
    `The orchestrator ran the test files you added or changed against the task's base code (without your fix): a test that proves the fix fails there and passes with it. Write a regression test that reproduces the bug (it must fail on the old code), keep the fix, then signal COMPLETE again. ${testFilesHelp}`,
    ...passing,
  ].join('\n');
}

/** The proof in one line (the merge queue's record, the tree, `ralph status`). */
export function proofLine(proof: ProofRecord): string {
  if (proof.status !== 'proven') return `not proven: ${proof.reason}`;
  const tests = proof.tests.slice(0, 3).map((t) => `${t.name}${t.baseFailure ? ` (on the base: ${t.baseFailure})` : ''}`);
  return `fail-to-pass proven: ${tests.join('; ')}${proof.tests.length > 3 ? `; ${proof.tests.length - 3} more` : ''}`;
}
