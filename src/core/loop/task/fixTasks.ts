import { errorMessage } from '../../errors';
import type { GateReport } from '../../gates/types';
import type { Task } from '../../tasks/schema';
import type { TaskLoopServices } from './types';

const MAX_ITEMS = 15;

/** The id of the fix task linked to `task` for `gate`: stable, so one gate has one fix task. */
export function fixTaskId(task: Task, gate: string): string {
  const slug =
    gate
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 24) || 'gate';
  return `${task.id}-fix-${slug}`;
}

/**
 * `loop.fixTasks`: every required gate a task's iteration failed is also kept in the store as a
 * linked fix task (`<task>-fix-<gate>`, prompt = the current fix items), so the failures stay
 * visible and schedulable after the task itself stops. When a later iteration passes the gate,
 * its still-open fix task is cancelled as resolved by the parent.
 */
export async function syncFixTasks(
  services: Pick<TaskLoopServices, 'config' | 'store' | 'emit'>,
  task: Task,
  gates: GateReport | undefined,
): Promise<void> {
  if (!services.config.loop.fixTasks || !gates) return;
  try {
    const existing = new Map((await services.store.list()).map((t) => [t.id, t]));
    for (const outcome of gates.outcomes.filter((o) => o.required)) {
      const id = fixTaskId(task, outcome.name);
      const current = existing.get(id);
      if (outcome.passed) {
        if (current?.status === 'todo') await services.store.update(id, { status: 'cancelled', blockedReason: `resolved by ${task.id}` });
        continue;
      }
      const items = outcome.fixItems.slice(0, MAX_ITEMS).map((f) => `- ${f.text}`);
      const gate = services.config.gates.find((g) => g.name === outcome.name);
      const prompt = [
        `While working on ${task.id} ("${task.title}"), the required quality gate "${outcome.name}" failed: ${outcome.summary}.`,
        items.length ? `Fix these items:\n${items.join('\n')}` : '',
      ]
        .filter(Boolean)
        .join('\n\n');
      if (!current) {
        await services.store.add({
          id,
          title: `Fix ${outcome.name} for ${task.id}`,
          prompt,
          promise: `\`${gate?.command ?? outcome.name}\` passes (the "${outcome.name}" gate).`,
          type: 'bugfix',
          // its proof is the gate: the tests that fail are already there, a fix makes them pass without a new one
          proof: 'none',
          priority: task.priority,
          complexity: task.complexity,
        });
        services.emit({
          type: 'warning',
          taskId: task.id,
          code: 'fix-task',
          message: `added fix task ${id} for the failing gate ${outcome.name}`,
        });
      } else if (current.status === 'todo' || current.status === 'cancelled') {
        await services.store.update(id, { prompt, status: 'todo', blockedReason: undefined });
      }
    }
  } catch (error) {
    services.emit({
      type: 'warning',
      taskId: task.id,
      code: 'fix-task-failed',
      message: `could not update the linked fix tasks: ${errorMessage(error)}`,
    });
  }
}
