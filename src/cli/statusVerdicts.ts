import { proofLine } from '../core/gates/proof';
import type { CheckpointStore } from '../core/record/checkpoint';
import type { Task } from '../core/tasks/schema';

/** What `ralph status` says about a task's verdicts: its check, pre-existing and flaky tests of its last gate run, its proof. */
export interface TaskVerdicts {
  taskId: string;
  check?: string;
  gates: { gate: string; passed: boolean; summary: string; preExisting?: string[]; flaky?: string[] }[];
  proof?: string;
}

export async function taskVerdicts(tasks: readonly Task[], checkpoints: CheckpointStore): Promise<TaskVerdicts[]> {
  const out: TaskVerdicts[] = [];
  for (const task of tasks.filter((t) => t.iterations > 0 || t.check)) {
    const cp = await checkpoints.load(task.id).catch(() => undefined);
    const last = [...(cp?.history ?? [])].reverse().find((r) => r.gates.length > 0);
    const gates = (last?.gates ?? [])
      .filter((g) => g.preExisting?.length || g.flaky?.length)
      .map((g) => ({
        gate: g.name,
        passed: g.passed,
        summary: g.summary,
        ...(g.preExisting?.length ? { preExisting: g.preExisting } : {}),
        ...(g.flaky?.length ? { flaky: g.flaky } : {}),
      }));
    const proof = cp?.proof ? proofLine(cp.proof) : undefined;
    if (gates.length === 0 && !proof && !task.check) continue;
    out.push({ taskId: task.id, ...(task.check ? { check: task.check } : {}), gates, ...(proof ? { proof } : {}) });
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
    for (const g of v.gates) {
      if (g.preExisting)
        lines.push(
          `  ${v.taskId} ${g.gate}: ${g.preExisting.length} pre-existing failure${g.preExisting.length === 1 ? '' : 's'} (already failing at the task's base, not held against it): ${names(g.preExisting)}`,
        );
      if (g.flaky) lines.push(`  ${v.taskId} ${g.gate}: flaky (failed, then passed on a re-run): ${names(g.flaky)}`);
    }
    if (v.proof) lines.push(`  ${v.taskId} proof: ${v.proof}`);
  }
  return lines;
}
