import { proofLine } from '../core/gates/proof';
import type { CheckpointStore } from '../core/record/checkpoint';
import type { Task } from '../core/tasks/schema';

/**
 * What `ralph status` says about a task's verdicts: its check, the failing tests of its last gate
 * run that failed at its base too (held against it or forgiven, with the evidence), flaky tests,
 * its known failures, its proof.
 */
export interface TaskVerdicts {
  taskId: string;
  check?: string;
  gates: {
    gate: string;
    passed: boolean;
    summary: string;
    preExisting?: string[];
    baseFailures?: { name: string; held: boolean; why: string }[];
    flaky?: string[];
  }[];
  knownFailures?: string[];
  proof?: string;
}

export async function taskVerdicts(tasks: readonly Task[], checkpoints: CheckpointStore): Promise<TaskVerdicts[]> {
  const out: TaskVerdicts[] = [];
  for (const task of tasks.filter((t) => t.iterations > 0 || t.check)) {
    const cp = await checkpoints.load(task.id).catch(() => undefined);
    const last = [...(cp?.history ?? [])].reverse().find((r) => r.gates.length > 0);
    const gates = (last?.gates ?? [])
      .filter((g) => g.preExisting?.length || g.flaky?.length || g.baseFailures?.length)
      .map((g) => ({
        gate: g.name,
        passed: g.passed,
        summary: g.summary,
        ...(g.preExisting?.length ? { preExisting: g.preExisting } : {}),
        ...(g.baseFailures?.length ? { baseFailures: g.baseFailures } : {}),
        ...(g.flaky?.length ? { flaky: g.flaky } : {}),
      }));
    const proof = cp?.proof ? proofLine(cp.proof) : undefined;
    const known = task.knownFailures?.length ? { knownFailures: [...task.knownFailures] } : {};
    if (gates.length === 0 && !proof && !task.check && !known.knownFailures) continue;
    out.push({ taskId: task.id, ...(task.check ? { check: task.check } : {}), gates, ...known, ...(proof ? { proof } : {}) });
  }
  return out;
}

export function verdictLines(verdicts: readonly TaskVerdicts[]): string[] {
  const lines: string[] = [];
  const names = (list: string[]) =>
    list
      .slice(0, 5)
      .map((n) => `\`${n}\``)
      .join(', ') + (list.length > 5 ? ` and ${list.length - 5} more` : '');
  for (const v of verdicts) {
    if (v.check) lines.push(`  ${v.taskId} check: ${v.check}`);
    if (v.knownFailures) lines.push(`  ${v.taskId} known failures (a person declared them unrelated): ${names(v.knownFailures)}`);
    for (const g of v.gates) {
      if (g.preExisting)
        lines.push(
          `  ${v.taskId} ${g.gate}: ${g.preExisting.length} pre-existing failure${g.preExisting.length === 1 ? '' : 's'} (already failing at the task's base, not held against it): ${names(g.preExisting)}`,
        );
      for (const b of (g.baseFailures ?? []).slice(0, 10))
        lines.push(
          `  ${v.taskId} ${g.gate}: \`${b.name}\` failed at the base too — ${b.held ? 'held against the task' : 'forgiven'}: ${b.why}`,
        );
      if (g.flaky) lines.push(`  ${v.taskId} ${g.gate}: flaky (failed, then passed on a re-run): ${names(g.flaky)}`);
    }
    if (v.proof) lines.push(`  ${v.taskId} proof: ${v.proof}`);
  }
  return lines;
}
