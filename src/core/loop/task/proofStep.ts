import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { errorMessage } from '../../errors';
import { judgeProof, proofFeedback, proofKind, type ProofRecord, type ProofRun } from '../../gates/proof';
import { runGates } from '../../gates/runGates';
import { testFileMatcher } from '../../gates/testFiles';
import { relativeTests } from '../../gates/testLocations';
import type { GateOutcome, GateReport } from '../../gates/types';
import { runGit } from '../../git/gitExec';
import type { Task } from '../../tasks/schema';
import type { Checkpoint } from '../../record/checkpoint';
import type { CompletionDecision } from '../../reports/decision';
import { inScratchWorktree } from './scratchWorktree';
import type { TaskLoopServices } from './types';

type ProofServices = Pick<TaskLoopServices, 'paths' | 'work' | 'config' | 'gates' | 'emit' | 'slot'>;

const HOW_TEST_FILES_ARE_TOLD =
  "(Test files are told apart by the runners' conventions — test/, tests/, __tests__/, *.test.*, *.spec.*, test_*.py, *_test.go — and the project's runner configs; a task can name its own with proofTests.)";

/**
 * The fail-to-pass proof of a task whose COMPLETE the gates accepted: its changed test files
 * are run, by the required `tests` gates, against the task's base code in a scratch worktree
 * (`.ralph/worktrees/_proof-<id>`, removed afterwards); see `gates/proof.ts` for the verdict.
 */
export async function proveFailToPass(
  services: ProofServices,
  task: Task,
  cp: Checkpoint,
  gates: GateReport | undefined,
  stop: AbortSignal,
): Promise<ProofRecord> {
  const work = (services.work ?? services.paths).workspace;
  const base = cp.baseCommit;
  const testsGates = services.config.gates.filter((g) => g.required && g.kind === 'tests');
  if (!base)
    return {
      ...notProven([], 'the task has no base commit to compare with (the repository had no commit when it started)'),
      unprovable: true,
    };
  if (testsGates.length === 0)
    return { ...notProven([], 'no required gate of kind "tests" is configured to run the task\'s tests'), unprovable: true };
  const isTest = await testFileMatcher(work, { task: task.proofTests, config: services.config.proof.testFiles });
  const diff = await runGit(work, ['diff', '--name-status', '--no-renames', base, 'HEAD', '--']);
  if (diff.code !== 0) return notProven([], `could not list the task's changes since ${base.slice(0, 10)}: ${diff.stderr.trim()}`);
  const changes = diff.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'))
    .filter(([, file]) => file && isTest(file) && !file.startsWith('.ralph/'));
  const files = changes.filter(([status]) => !status.startsWith('D')).map(([, file]) => file);
  if (files.length === 0) return judgeProof([], []);

  const inScratch = async (scratch: string) => {
    for (const [status, file] of changes) {
      const target = path.join(scratch, file);
      if (status.startsWith('D')) await fs.rm(target, { force: true });
      else {
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.copyFile(path.join(work, file), target);
      }
    }
    const report = await runGates({
      gates: testsGates,
      runner: services.gates,
      cwd: scratch,
      signal: stop,
      logDir: path.join(services.paths.reportsDir(task.id), 'gates', 'proof'),
      iteration: cp.iteration,
    });
    const verdicts = new Map(cp.integrity?.gates.map((g) => [g.gate, g.verdict]) ?? []);
    const baseNames = new Map(cp.integrity?.gates.map((g) => [g.gate, g.tests?.names?.map((t) => t.name)]) ?? []);
    // locations relative to each run's own root, to compare them with the changed files
    const relative = (o: GateOutcome, root: string): GateOutcome => ({
      ...o,
      parsed: { ...o.parsed, tests: relativeTests(o.parsed.tests, root) },
    });
    const runs: ProofRun[] = report.outcomes.map((o) => {
      const result = gates?.outcomes.find((r) => r.name === o.name);
      return {
        gate: o.name,
        scratch: relative(o, scratch),
        result: result && relative(result, work),
        base: verdicts.get(o.name),
        baseNames: baseNames.get(o.name),
      };
    });
    return judgeProof(files, runs);
  };
  try {
    return await inScratchWorktree(services, `_proof-${task.id}`, base, inScratch, (why) => notProven(files, why));
  } catch (error) {
    return notProven(files, `the proof could not run: ${errorMessage(error)}`);
  }
}

/**
 * After the completion policy: a COMPLETE it accepted (`done`) from a task that needs a
 * fail-to-pass proof is proven first; the proof is announced (`proof` event) and returned for
 * the iteration's record.
 */
export async function proofStep(
  services: ProofServices,
  task: Task,
  cp: Checkpoint,
  iteration: number,
  decision: CompletionDecision,
  gates: GateReport | undefined,
  stop: AbortSignal,
): Promise<{ decision: CompletionDecision; proof?: ProofRecord }> {
  if (decision.kind !== 'finish' || decision.status !== 'done' || proofKind(task, services.config) !== 'fail-to-pass') return { decision };
  // given away with the gates already, unless the task has none
  if (!services.config.loop.holdSlotDuringGates) services.slot?.release();
  const proof = await proveFailToPass(services, task, cp, gates, stop);
  if (stop.aborted)
    return { decision: { kind: 'continue', reason: 'stopped during the fail-to-pass proof', feedback: [], optionalGatesRetried: [] } };
  services.emit({ type: 'proof', taskId: task.id, iteration, ...proof });
  return { decision: withProof(decision, proof, task), proof };
}

/** A COMPLETE the gates accepted, with the proof applied: not proven → another iteration, told why. */
export function withProof(decision: Extract<CompletionDecision, { kind: 'finish' }>, proof: ProofRecord, task: Task): CompletionDecision {
  if (proof.status === 'proven')
    return {
      ...decision,
      notes: [...decision.notes, `fail-to-pass proof: ${proof.reason} (${proof.tests.map((t) => `\`${t.name}\``).join(', ')})`],
    };
  if (proof.unprovable) {
    // no iteration of the agent can change this: a person adds a tests gate or lets the task go without a proof
    const question = `${task.id} needs a fail-to-pass proof (${task.type === 'bugfix' ? 'a bugfix' : `proof "fail-to-pass"`}), but ${proof.reason}. Add a required gate of kind "tests" to .ralph/config.json, or let this task go without a proof: \`ralph task edit ${task.id} --proof none\` (then \`ralph task unblock ${task.id}\`).`;
    return { kind: 'finish', status: 'needs_help', reason: question, notes: [] };
  }
  return {
    kind: 'continue',
    reason: `COMPLETE not accepted: no fail-to-pass proof — ${proof.reason}`,
    feedback: [proofFeedback(proof, HOW_TEST_FILES_ARE_TOLD)],
    optionalGatesRetried: [],
  };
}

function notProven(files: string[], reason: string): ProofRecord {
  return { status: 'not-proven', files, tests: [], passingOnBase: [], reason };
}
