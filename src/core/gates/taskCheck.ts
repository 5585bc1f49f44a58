import type { GateConfig } from '../config/schema';
import type { Task } from '../tasks/schema';

/**
 * A task's `check`: an executable promise, run as a required gate of that task only. Its
 * verdict is all green or not — failures already there at the base are not forgiven (at the
 * base the check is expected to fail: it is what the task must make true) — and it is
 * protected like every gate: the command lives in the task store, out of the agent's reach,
 * and the scripts and configs it names are part of its definition.
 */
export function checkGate(task: Pick<Task, 'check'>, configured: readonly GateConfig[]): GateConfig | undefined {
  if (!task.check) return undefined;
  const name = configured.some((g) => g.name === 'check') ? 'task check' : 'check';
  return { name, command: task.check, kind: 'custom', required: true, baseline: false };
}

/** The gates a task's iterations run: the configured ones and its own check. */
export function gatesFor(task: Pick<Task, 'check'>, configured: readonly GateConfig[]): GateConfig[] {
  const check = checkGate(task, configured);
  return check ? [...configured, check] : [...configured];
}
