import { agentModelText } from '../../protocol/agentModel';
import type { IterationView, TaskView } from '../../protocol/panelState';
import { h, icon } from '../dom';
import { clock, duration, shortSha } from '../format';
import type { ViewContext } from './context';
import { bar, liveDuration, signalChip } from './progressBox';

const OUTCOME_ICON: Record<string, [string, string]> = {
  complete: ['pass-filled', 'passed'],
  continue: ['arrow-right', 'muted'],
  blocked: ['circle-slash', 'warning'],
  needs_help: ['question', 'info'],
  error: ['error', 'failed'],
  stopped: ['debug-stop', 'warning'],
};

function gatesCell(row: IterationView): HTMLElement | string {
  if (!row.gates || row.gates.total === 0) return h('span', { class: 'muted' }, '—');
  const ok = row.gates.failed === 0;
  return h('span', { class: ok ? 'passed' : 'failed' }, icon(ok ? 'check' : 'close'), ` ${row.gates.passed}/${row.gates.total}`);
}

function marks(row: IterationView): HTMLElement {
  const parts: (HTMLElement | string)[] = [];
  if (row.escalatedFrom)
    parts.push(
      h('span', { class: 'mark escalation', title: `escalated from ${row.escalatedFrom} to ${row.model}` }, icon('arrow-up'), ' escalated'),
    );
  if (row.delegations > 0)
    parts.push(h('span', { class: 'mark', title: `${row.delegations} delegation(s)` }, icon('organization'), ` ${row.delegations}`));
  if (row.compactions > 0)
    parts.push(h('span', { class: 'mark', title: `${row.compactions} compaction(s)` }, icon('fold'), ` ${row.compactions}`));
  if (row.commit) parts.push(h('span', { class: 'mark', title: `commit ${row.commit}` }, icon('git-commit'), ` ${shortSha(row.commit)}`));
  if (row.error) parts.push(h('span', { class: 'mark failed', title: row.error }, icon('warning'), ' error'));
  return h('span', { class: 'marks' }, ...parts);
}

function rowOf(task: TaskView, row: IterationView, current: boolean): HTMLElement {
  const outcome = row.outcome ? OUTCOME_ICON[row.outcome] : undefined;
  return h(
    'tr',
    { class: current ? 'current' : '', 'aria-current': current ? 'true' : undefined, 'data-testid': 'timeline-row' },
    h('th', { scope: 'row' }, `#${row.n}`),
    h('td', { class: 'bar-cell' }, bar(row.progress, `Progress after iteration ${row.n}`, 'small')),
    h('td', {}, clock(row.startedAt)),
    h(
      'td',
      {},
      row.durationMs === undefined
        ? current && task.status === 'in_progress'
          ? liveDuration(0, row.startedAt)
          : '—'
        : duration(row.durationMs),
    ),
    h('td', { 'data-testid': 'timeline-agent' }, agentModelText(row)),
    h('td', {}, signalChip(row.signal)),
    h('td', {}, gatesCell(row)),
    h(
      'td',
      {},
      outcome
        ? h('span', { class: outcome[1], title: row.outcome }, icon(outcome[0]), ` ${row.outcome}`)
        : h('span', { class: 'muted' }, current ? 'running' : '—'),
    ),
    h('td', {}, marks(row), current ? h('span', { class: 'current-mark' }, ' ← current') : ''),
  );
}

/** ITERATION TIMELINE: one row per iteration, totals underneath. */
export function timeline(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  if (!task || task.iterations.length === 0) return null;
  const last = task.iterations[task.iterations.length - 1];
  const rows = task.iterations.map((row) => rowOf(task, row, row === last && task.status === 'in_progress'));
  return h(
    'section',
    { class: 'box timeline', 'aria-labelledby': 'timeline-heading', 'data-testid': 'timeline' },
    h('h2', { id: 'timeline-heading' }, 'Iteration timeline'),
    h(
      'div',
      { class: 'table-scroll' },
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['#', 'Progress', 'Started', 'Duration', 'Agent · model', 'Signal', 'Gates', 'Outcome', 'Notes'].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        h('tbody', {}, ...rows),
      ),
    ),
    h(
      'p',
      { class: 'totals' },
      `Total: ${task.iterations.length} iteration${task.iterations.length === 1 ? '' : 's'} │ `,
      liveDuration(task.elapsedMs, task.status === 'in_progress' && last.durationMs === undefined ? last.startedAt : undefined),
      ` elapsed │ ${task.progress ?? 0}% complete`,
    ),
  );
}
