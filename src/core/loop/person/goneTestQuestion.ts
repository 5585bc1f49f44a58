import { gateChangesAllowed } from '../../gates/integrity';
import type { GateReport } from '../../gates/types';
import type { Task } from '../../tasks/schema';
import type { IterationRecord } from '../../record/checkpoint';
import type { CompletionDecision } from '../../reports/decision';

/**
 * A test that passed at the task's base and is gone now (not a rename the orchestrator
 * recognises) is fed back once. When the next iteration still leaves the same test out, the
 * agent means it: another iteration would only loop until the limit, so the task asks a person,
 * with the exact question and the command that allows the change for this task.
 */
export function goneTestsQuestion(
  task: Task,
  gates: GateReport | undefined,
  previous: IterationRecord | undefined,
): Extract<CompletionDecision, { kind: 'finish' }> | undefined {
  if (!gates || !previous) return undefined;
  for (const outcome of gates.outcomes) {
    const gone = outcome.integrity?.gone ?? [];
    if (!outcome.required || gone.length === 0 || gateChangesAllowed(task.allowGateChanges, outcome.name)) continue;
    const before = new Set(previous.gates.find((g) => g.name === outcome.name)?.integrity?.gone ?? []);
    const kept = gone.filter((name) => before.has(name));
    if (kept.length === 0) continue;
    const one = kept.length === 1;
    const names =
      kept
        .slice(0, 10)
        .map((n) => `\`${n}\``)
        .join(', ') + (kept.length > 10 ? ` and ${kept.length - 10} more` : '');
    const question =
      `${one ? 'Test' : 'Tests'} ${names} of the gate "${outcome.name}" passed at the task's base and ${one ? 'is' : 'are'} gone now; the agent was told to restore ${one ? 'it' : 'them'} and kept the change (not a rename: no test with the same body is in its place). ` +
      `Is removing ${one ? 'it' : 'them'} part of ${task.id}? To allow it for this task: \`ralph task edit ${task.id} --allow-gate-changes ${outcome.name}\`, then \`ralph task unblock ${task.id}\` (in the editor: Edit Task). If not, unblock the task and say in its request that ${one ? 'the test stays' : 'the tests stay'}.`;
    return { kind: 'finish', status: 'needs_help', reason: question, notes: [] };
  }
  return undefined;
}
