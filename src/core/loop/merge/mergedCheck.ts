import type { GateConfig } from '../../config/schema';
import type { RalphEventBody } from '../../events';
import { baseVerdictOf, type BaseVerdict, judgeAgainstBase } from '../../gates/baseVerdict';
import { relativeFailure, relativeTests } from '../../gates/testLocations';
import { runGates } from '../../gates/runGates';
import type { GateOutcome, GateReport, GateRunner } from '../../gates/types';
import type { MergeWorkspace } from '../../git/integrate';
import { RalphError } from '../../errors';
import { type Gates, type MergeWorkspacePool, summarizeOutcome } from './mergeChecks';
import { evidenceJudge, lazily, readTreeEvidence, type VerdictTask } from '../task/taskEvidence';

/**
 * The merge queue's merged check judged against the target's tip, as a task's gates are
 * against its base: a test already failing on the target before the merge does not hold the
 * merge back; a new failure does — so the target never gets redder. In the merge chain the
 * "tip" of a prefix is the prefix before it (what the target will be when this one lands). The tip's verdicts are run
 * only when the merged result is red, and kept for that tip (the next merge onto the same tip
 * reuses them).
 */
export class TipVerdicts {
  /** By tip, the newest last: concurrent checks of a chain judge against several prefixes at once. */
  private readonly cache = new Map<string, Map<string, BaseVerdict>>();

  verdictsAt(tip: string): Map<string, BaseVerdict> {
    let verdicts = this.cache.get(tip);
    if (!verdicts) {
      this.cache.set(tip, (verdicts = new Map()));
      if (this.cache.size > MAX_TIPS) this.cache.delete(this.cache.keys().next().value as string);
    }
    return verdicts;
  }
}

const MAX_TIPS = 16;

/** A check no task asked for: its words name nothing, it declared nothing. */
const NO_TASK: VerdictTask = { title: '', prompt: '', promise: '' };

export interface MergedCheckInput {
  gates: readonly GateConfig[];
  runner: GateRunner;
  workspace: MergeWorkspace;
  target: string;
  /** The target's tip the merge was made on, and the merged commit the merge worktree holds. */
  base: string;
  result: string;
  taskId: string;
  tips: TipVerdicts;
  /** What the merge's task (or the batch's tasks) asked and declared: a failure already red on the tip is forgiven only when unrelated to their change. */
  verdictTask?: VerdictTask;
  signal?: AbortSignal;
  emit?(body: RalphEventBody): void;
}

/**
 * Runs the required gates on the merged result; a red one is compared, before it is announced,
 * with the same gate on the target's tip (run in the merge worktree, then back to the result).
 */
export async function mergedCheck(input: MergedCheckInput): Promise<GateReport> {
  const verdicts = input.tips.verdictsAt(input.base);
  const where = { at: `on ${input.target} before this merge` };
  const task = input.verdictTask ?? NO_TASK;
  const evidence = lazily(() => readTreeEvidence(input.workspace.path, input.base, task));
  const relativeVerdict = (v: BaseVerdict): BaseVerdict => ({
    ...v,
    failing: v.failing.map((f) => relativeFailure(f, input.workspace.path)),
  });
  const judge = async (gate: GateConfig, outcome: GateOutcome): Promise<GateOutcome> => {
    if (outcome.passed || !gate.required || gate.baseline === false || input.signal?.aborted) return outcome;
    let verdict = verdicts.get(gate.name);
    if (!verdict) {
      // landing only moves refs: the worktree may visit the tip and come back to the result
      await input.workspace.checkout(input.base);
      try {
        input.workspace.used();
        const atTip = await runGates({
          gates: [gate],
          runner: input.runner,
          cwd: input.workspace.path,
          signal: input.signal,
          reuse: 'any',
        });
        if (atTip.outcomes[0]) verdicts.set(gate.name, (verdict = baseVerdictOf(atTip.outcomes[0])));
      } finally {
        await input.workspace.checkout(input.result);
        input.workspace.used();
      }
    }
    // the merge's change is what the merged result adds to the tip: the task's work, on today's target
    const tests = relativeTests(outcome.parsed.tests, input.workspace.path);
    return judgeAgainstBase({ ...outcome, parsed: { ...outcome.parsed, tests } }, verdict && relativeVerdict(verdict), where, {
      judge: evidenceJudge(evidence, { gate: gate.knownFailures, task: input.verdictTask?.knownFailures }),
    });
  };
  // a run on the same tree earlier in the run stands for this one, red included: judged against the tip here as it was there
  return runGates({
    gates: input.gates,
    runner: input.runner,
    cwd: input.workspace.path,
    signal: input.signal,
    taskId: input.taskId,
    emit: input.emit,
    judge,
    reuse: 'any',
  });
}

export interface PrefixCheckInput extends Omit<MergedCheckInput, 'workspace' | 'signal'> {
  /** The merge worktrees: the check takes one while it runs. */
  pool: MergeWorkspacePool;
  signal: AbortSignal;
}

/**
 * A prefix's merged check: its required gates on the merged result, in a merge worktree of its
 * own (none taken when there is no gate to run). Throws when stopped; the failing outcomes else.
 */
export async function checkPrefix(input: PrefixCheckInput): Promise<{ gates: Gates; failing: GateOutcome[] }> {
  if (input.gates.length === 0) return { gates: [], failing: [] };
  const report = await input.pool.use(async (workspace) => {
    await workspace.checkout(input.result);
    workspace.used();
    return mergedCheck({ ...input, workspace });
  });
  if (input.signal.aborted) throw new RalphError('stopped during the merged check', 'stopped');
  return {
    gates: report.outcomes.map(summarizeOutcome),
    failing: report.requiredPassed ? [] : report.outcomes.filter((o) => !o.passed),
  };
}
