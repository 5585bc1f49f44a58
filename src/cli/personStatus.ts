import type { RunOutcome } from '../core/events';
import { landCommand, waitsToLand } from '../core/loop/run/autopilotPerson';
import { runOutcomeLine } from '../core/loop/run/runSummary';
import { openQuestion } from '../core/tasks/questions';
import type { Task } from '../core/tasks/schema';

/** What waits for the person in the store: open questions, reviews and landings in the way of their files, each with the command that answers it. */
export function personLines(tasks: readonly Task[]): string[] {
  const lines: string[] = [];
  const asking = tasks.filter((t) => t.status === 'needs_help' || t.status === 'blocked');
  const reviews = tasks.filter((t) => t.status === 'review');
  const landing = tasks.filter(waitsToLand);
  if (asking.length + reviews.length + landing.length === 0) return lines;
  const counts = [
    asking.length ? `${asking.length} question${asking.length === 1 ? '' : 's'}` : '',
    reviews.length ? `${reviews.length} to review` : '',
    landing.length ? `${landing.length} waiting to land` : '',
  ];
  lines.push(`needs you: ${counts.filter(Boolean).join(', ')}`);
  for (const task of asking) {
    const q = openQuestion(task.questions);
    const how =
      q?.kind === 'command' ? `ralph task answer ${task.id} --approve | --refuse ["<text>"]` : `ralph task answer ${task.id} "<text>"`;
    lines.push(
      `  ${task.id} ${task.status === 'blocked' ? 'is blocked' : 'asks'}: ${q?.question ?? task.blockedReason ?? '(no question recorded)'}\n    → ${how}`,
    );
  }
  for (const task of reviews)
    lines.push(
      `  ${task.id} waits for review: ${task.blockedReason ?? task.title}\n    → ralph review diff ${task.id} · ralph review approve ${task.id} · ralph review changes ${task.id} "<text>" · ralph review reject ${task.id}`,
    );
  for (const task of landing) lines.push(`  ${task.id} ${task.blockedReason}\n    → ${landCommand(task.id)}`);
  return lines;
}

/** The end of `ralph run`: done / needs you / failed, and where to go on. */
export function runOutcomeText(outcome: RunOutcome, tasks: readonly Task[]): string {
  const lines = [`run summary: ${runOutcomeLine(outcome)}`];
  const involved = new Set([
    ...outcome.questions.map((q) => q.taskId),
    ...outcome.reviews,
    ...(outcome.landing ?? []).map((l) => l.taskId),
  ]);
  lines.push(...personLines(tasks.filter((t) => involved.has(t.id))).slice(1));
  for (const f of outcome.failed) lines.push(`  ${f.taskId} ${f.status}: ${f.reason}`);
  return lines.join('\n');
}
