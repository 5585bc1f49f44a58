import type { GateConfig } from '../config/schema';
import type { RalphEventBody } from '../events';
import { baseVerdictOf, type BaseVerdict, forgivePreExisting } from '../gates/baseVerdict';
import { summarizeGates } from '../gates/evaluate';
import { runGates } from '../gates/runGates';
import type { GateReport, GateRunner } from '../gates/types';
import type { MergeWorkspace } from '../git/integrate';

/**
 * The merge queue's merged check judged against the target's tip, as a task's gates are
 * against its base: a test already failing on the target before the merge does not hold the
 * merge back; a new failure does — so the target never gets redder. The tip's verdicts are run
 * only when the merged result is red, and kept for that tip (the next merge onto the same tip
 * reuses them).
 */
export class TipVerdicts {
  private cache: { tip: string; verdicts: Map<string, BaseVerdict> } | undefined;

  verdictsAt(tip: string): Map<string, BaseVerdict> {
    if (this.cache?.tip !== tip) this.cache = { tip, verdicts: new Map() };
    return this.cache.verdicts;
  }
}

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
  signal?: AbortSignal;
  emit?(body: RalphEventBody): void;
}

/** Runs the required gates on the merged result; a red gate is compared with the same gate on the target's tip. */
export async function mergedCheck(input: MergedCheckInput): Promise<GateReport> {
  const report = await runGates({ gates: input.gates, runner: input.runner, cwd: input.workspace.path, signal: input.signal, taskId: input.taskId, emit: input.emit });
  const red = report.outcomes.filter((o) => o.required && !o.passed && !o.integrity?.violations.length);
  const judged = input.gates.filter((g) => g.baseline !== false && red.some((o) => o.name === g.name));
  if (judged.length === 0 || input.signal?.aborted) return report;
  const verdicts = input.tips.verdictsAt(input.base);
  const missing = judged.filter((g) => !verdicts.has(g.name));
  if (missing.length > 0) {
    // the tip in the same worktree, then back to the merged result (landing only moves refs)
    await input.workspace.checkout(input.base);
    try {
      input.workspace.used();
      const atTip = await runGates({ gates: missing, runner: input.runner, cwd: input.workspace.path, signal: input.signal });
      for (const o of atTip.outcomes) verdicts.set(o.name, baseVerdictOf(o));
    } finally {
      await input.workspace.checkout(input.result);
    }
  }
  const where = { at: `on ${input.target} before this merge` };
  const outcomes = report.outcomes.map((o) => {
    const gate = judged.find((g) => g.name === o.name);
    return gate ? forgivePreExisting(o, verdicts.get(o.name), where) : o;
  });
  return summarizeGates(outcomes);
}
