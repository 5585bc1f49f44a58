/** Where Ralph stands, in Markdown for `@ralph /status` and the `ralph_status` tool (no editor API: testable in Node). */
import type { LiveStatus } from '../ui/liveStatus';
import { TASK_STATUSES, type Task } from '../core/tasks/schema';
import { dependenciesDone } from '../core/tasks/select';

/** Most rows the status table lists (the busiest first: running, waiting, then the rest). */
const MAX_ROWS = 25;

const LABEL: Record<string, string> = { todo: 'to do', in_progress: 'in progress', needs_help: 'needs help' };
const ORDER = ['in_progress', 'needs_help', 'blocked', 'review', 'halted', 'todo', 'failed', 'timeout', 'done', 'cancelled'];

const label = (status: string) => LABEL[status] ?? status;
const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\s+/g, ' ').slice(0, 100);

/** The tasks a run would start now: `todo`, every dependency done. */
export function readyTasks(tasks: readonly Task[]): Task[] {
  const byId = new Map(tasks.map((t) => [t.id, t]));
  return tasks.filter((t) => t.status === 'todo' && dependenciesDone(t, byId));
}

export function statusMarkdown(tasks: readonly Task[], live: LiveStatus): string {
  if (tasks.length === 0)
    return 'Ralph has **no tasks** in this workspace yet. Add one with `@ralph /add`, plan a document with `@ralph /plan`, or import GitHub issues (*Ralph: Import GitHub Issues*).';
  const counts = [...TASK_STATUSES, 'review'].map((s) => [s, tasks.filter((t) => t.status === s).length] as const).filter(([, n]) => n > 0);
  const out = [
    `**Ralph Loop** — ${tasks.length} task${tasks.length === 1 ? '' : 's'}: ${counts.map(([s, n]) => `${n} ${label(s)}`).join(', ')}.`,
  ];
  out.push(runLine(tasks, live));
  const waiting = tasks.filter((t) => t.status === 'needs_help' || t.status === 'blocked');
  if (waiting.length > 0)
    out.push(
      `Waiting for you:\n${waiting.map((t) => `- **${t.id}** ${t.status === 'needs_help' ? `asks: ${t.blockedReason ?? '(no question given)'} — answer with \`@ralph /answer ${t.id} …\`` : `is blocked: ${t.blockedReason ?? '(no reason given)'}`}`).join('\n')}`,
    );
  const rows = [...tasks].sort((a, b) => rank(a.status) - rank(b.status) || a.priority - b.priority).slice(0, MAX_ROWS);
  const table = [
    '| Task | Status | Iterations | Title |',
    '| --- | --- | --- | --- |',
    ...rows.map(
      (t) => `| ${t.id} | ${label(t.status)} | ${t.iterations}${t.maxIterations ? `/${t.maxIterations}` : ''} | ${cell(t.title)} |`,
    ),
  ];
  out.push(
    table.join('\n') + (tasks.length > MAX_ROWS ? `\n\n…and ${tasks.length - MAX_ROWS} more (the Ralph Loop view lists them all).` : ''),
  );
  return out.join('\n\n');
}

function runLine(tasks: readonly Task[], live: LiveStatus): string {
  if (live.state === 'idle') {
    const ready = readyTasks(tasks);
    return ready.length > 0
      ? `No run is active. Ready to run: ${ready
          .slice(0, 8)
          .map((t) => `**${t.id}**`)
          .join(', ')}${ready.length > 8 ? ', …' : ''} (\`@ralph /run\`).`
      : 'No run is active, and no task is ready to run.';
  }
  const agents = live.agents?.length
    ? live.agents
    : live.taskId
      ? [{ taskId: live.taskId, title: live.title, iteration: live.iteration, maxIterations: live.maxIterations, progress: live.progress }]
      : [];
  const working = agents.map(
    (a) =>
      `**${a.taskId}**${a.iteration ? ` iteration ${a.iteration}/${a.maxIterations ?? '?'}` : ''}${a.progress !== undefined ? ` · ${a.progress}%` : ''}`,
  );
  const queued = live.queue?.length ? ` Merge queue: ${live.queue.map((q) => `${q.taskId} (${q.state})`).join(', ')}.` : '';
  const attention = live.attention ? ` ⚠ ${live.attention}` : '';
  return `A run is **${live.state}**${working.length ? `: ${working.join(', ')}` : ''}.${queued}${attention}`;
}

function rank(status: string): number {
  const i = ORDER.indexOf(status);
  return i < 0 ? ORDER.length : i;
}
