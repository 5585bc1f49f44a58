import type { QueueEntryView } from '../../shared/panelState';
import { h, icon } from '../dom';
import { clock, shortSha } from '../format';
import type { ViewContext } from './context';

const STATE: Record<QueueEntryView['state'], [label: string, glyph: string, tone: string]> = {
  queued: ['queued', 'git-pull-request', 'muted'],
  merging: ['merging', 'loading~spin', 'info'],
  checking: ['checking', 'loading~spin', 'info'],
  waiting: ['waiting', 'watch', 'warning'],
  merged: ['merged', 'git-merge', 'passed'],
  conflict: ['conflict', 'git-compare', 'failed'],
  failed: ['failed', 'error', 'failed'],
};

function entry(ctx: ViewContext, e: QueueEntryView, position: number | undefined): HTMLElement {
  const [label, glyph, tone] = STATE[e.state];
  const select = () => ctx.client.setView({ selectedTaskId: e.taskId });
  const element = h(
    'li',
    { class: `queue-entry queue-${e.state}`, 'data-testid': 'queue-entry', 'data-task': e.taskId, 'data-state': e.state },
    h(
      'div',
      { class: 'queue-line' },
      h('span', { class: `queue-state ${tone}` }, icon(glyph), ` ${label}`),
      position !== undefined ? h('span', { class: 'muted' }, ` #${position}`) : undefined,
      h('a', { href: '#', class: 'queue-task', 'data-focus-key': `queue:${e.taskId}`, title: `Show ${e.taskId}` }, `${e.taskId} · ${e.title}`),
      e.attempts > 1 ? h('span', { class: 'muted' }, ` · attempt ${e.attempts}`) : undefined,
      e.commit && !e.detail?.includes(e.commit.slice(0, 7)) ? h('span', { class: 'muted' }, ` · ${shortSha(e.commit)}`) : undefined,
      h('span', { class: 'muted queue-time' }, clock(e.time)),
    ),
    e.detail ? h('div', { class: 'queue-detail' }, e.detail) : undefined,
    e.proof ? h('div', { class: 'queue-detail muted', 'data-testid': 'queue-proof' }, icon('beaker'), ` ${e.proof}`) : undefined,
    e.gates && e.gates.length > 0
      ? h(
          'ul',
          { class: 'checks', 'aria-label': `Merged check of ${e.taskId}`, 'data-testid': 'queue-gates' },
          ...e.gates.map((g) => h('li', { class: g.passed ? 'passed' : 'failed' }, icon(g.passed ? 'check' : 'close'), ` ${g.name}`, h('span', { class: 'muted' }, ` ${g.summary}`))),
        )
      : undefined,
  );
  element.querySelector('.queue-task')?.addEventListener('click', (event) => {
    event.preventDefault();
    select();
  });
  return element;
}

/** The merge queue: each entry queued / merging / checking / waiting / merged / conflict / failed, with the merged check's gates. */
export function queue(ctx: ViewContext): HTMLElement | null {
  const entries = ctx.state.queue ?? [];
  if (entries.length === 0) return null;
  const pending = entries.filter((e) => e.state === 'queued' || e.state === 'waiting');
  const target = ctx.state.mergeTarget;
  return h(
    'section',
    { class: 'box merge-queue', 'aria-labelledby': 'queue-heading', 'data-testid': 'merge-queue' },
    h('h2', { id: 'queue-heading' }, `Merge queue${target ? ` → ${target}` : ''}`),
    h('ul', { class: 'queue-list' }, ...entries.map((e) => entry(ctx, e, pending.includes(e) ? pending.indexOf(e) + 1 : undefined))),
  );
}
