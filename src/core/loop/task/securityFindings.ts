import { errorMessage } from '../../errors';
import type { SecurityFinding } from '../../gates/parsers/types';
import type { GateOutcome, GateReport } from '../../gates/types';
import type { Task } from '../../tasks/schema';
import { readTextIfExists, writeFileAtomic } from '../../util/atomicWrite';
import { fixTaskId } from './fixTasks';
import type { TaskLoopServices } from './types';

/**
 * Security findings below critical, as seed 003 says: a critical one halts the task (the
 * completion policy) and high ones are fixed first with the model escalated at once (the
 * feedback and the escalation step); here, after each iteration, a medium finding becomes a
 * linked fix task (`<task>-fix-<gate>-medium`, cancelled once the gate reports none) and a low
 * one a line of `.ralph/observations.md` (never blocking; the final report lists them).
 */
export async function handleSecurityFindings(
  services: Pick<TaskLoopServices, 'config' | 'store' | 'emit' | 'paths' | 'clock'>,
  task: Task,
  iteration: number,
  gates: GateReport | undefined,
): Promise<void> {
  if (!gates) return;
  try {
    for (const outcome of gates.outcomes.filter((o) => o.kind === 'security' && o.parsed.security)) {
      const findings = outcome.parsed.security?.findings ?? [];
      await syncMediumTask(
        services,
        task,
        outcome,
        findings.filter((f) => f.severity === 'medium'),
      );
      await logObservations(
        services,
        task,
        iteration,
        outcome.name,
        findings.filter((f) => f.severity === 'low'),
      );
    }
  } catch (error) {
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'security-findings-failed',
      message: `could not record the security findings: ${errorMessage(error)}`,
    });
  }
}

/** The id of the fix task linked to a task's medium findings of one gate. */
export function mediumTaskId(task: Task, gate: string): string {
  return `${fixTaskId(task, gate)}-medium`;
}

async function syncMediumTask(
  services: Pick<TaskLoopServices, 'config' | 'store' | 'emit'>,
  task: Task,
  outcome: GateOutcome,
  medium: SecurityFinding[],
): Promise<void> {
  const id = mediumTaskId(task, outcome.name);
  const current = (await services.store.list()).find((t) => t.id === id);
  if (medium.length === 0) {
    if (current?.status === 'todo')
      await services.store.update(id, {
        status: 'cancelled',
        blockedReason: `resolved: the gate ${outcome.name} reports no medium finding after ${task.id}`,
      });
    return;
  }
  const gate = services.config.gates.find((g) => g.name === outcome.name);
  const prompt = [
    `While working on ${task.id} ("${task.title}"), the security gate "${outcome.name}" reported ${medium.length} medium-severity finding${medium.length === 1 ? '' : 's'}:`,
    medium
      .slice(0, 20)
      .map((f) => `- ${findingText(f)}`)
      .join('\n'),
    'Fix them (upgrade, patch or remove what is affected), without weakening the gate.',
  ].join('\n\n');
  if (!current) {
    await services.store.add({
      id,
      title: `Fix medium security findings (${outcome.name}) found during ${task.id}`,
      prompt,
      promise: `\`${gate?.command ?? outcome.name}\` reports none of these medium findings.`,
      type: 'security',
      proof: 'none',
      priority: task.priority,
      complexity: task.complexity,
    });
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'fix-task',
      message: `added fix task ${id} for ${medium.length} medium security finding${medium.length === 1 ? '' : 's'} of ${outcome.name}`,
    });
  } else if (current.status === 'todo' || current.status === 'cancelled') {
    await services.store.update(id, { prompt, status: 'todo', blockedReason: undefined });
  }
}

/** Serializes the appends of agents running at once (one process holds the run lock). */
let appending: Promise<unknown> = Promise.resolve();

async function logObservations(
  services: Pick<TaskLoopServices, 'paths' | 'clock' | 'emit'>,
  task: Task,
  iteration: number,
  gate: string,
  low: SecurityFinding[],
): Promise<void> {
  if (low.length === 0) return;
  const file = services.paths.observations;
  const write = appending.then(async () => {
    const text = (await readTextIfExists(file)) ?? OBSERVATIONS_HEADER;
    const fresh = low
      .map((f) => `${task.id} (gate ${gate}): low security finding — ${findingText(f)}`)
      .filter((line) => !text.includes(line));
    if (fresh.length === 0) return 0;
    const stamp = new Date(services.clock.now()).toISOString().slice(0, 10);
    await writeFileAtomic(
      file,
      `${text.replace(/\n*$/, '\n')}${fresh.map((line) => `- ${stamp}, iteration ${iteration}: ${line}`).join('\n')}\n`,
    );
    return fresh.length;
  });
  appending = write.catch(() => undefined);
  const added = await write;
  if (added > 0)
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'observation',
      message: `${added} low security finding${added === 1 ? '' : 's'} of ${gate} logged in ${services.paths.relative(file)}`,
    });
}

const OBSERVATIONS_HEADER =
  '# Observations\n\nLow-severity findings Ralph logged while running tasks. They never block a task; each line names the task, the gate and the finding.\n\n';

/** The lines of `.ralph/observations.md` about one task (for its final report). */
export async function observationsOf(services: Pick<TaskLoopServices, 'paths'>, taskId: string): Promise<string[]> {
  const text = (await readTextIfExists(services.paths.observations).catch(() => undefined)) ?? '';
  return text
    .split('\n')
    .filter((line) => line.startsWith('- ') && line.includes(`: ${taskId} (gate `))
    .map((line) => line.slice(2));
}

function findingText(f: SecurityFinding): string {
  const where = [f.package, f.file].filter(Boolean).join(' ');
  return `${f.title}${where ? ` in ${where}` : ''}${f.id ? ` (${f.id})` : ''}`;
}
