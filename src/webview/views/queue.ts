import { chainLine } from '../../protocol/mergeChainText';
import type { QueueEntryView } from '../../protocol/panelState';
import { button, h, icon } from '../dom';
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
  review: ['ready for review', 'git-pull-request-draft', 'warning'],
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
      h(
        'a',
        { href: '#', class: 'queue-task', 'data-focus-key': `queue:${e.taskId}`, title: `Show ${e.taskId}` },
        `${e.taskId} · ${e.title}`,
      ),
      e.attempts > 1 ? h('span', { class: 'muted' }, ` · attempt ${e.attempts}`) : undefined,
      e.commit && !e.detail?.includes(e.commit.slice(0, 7)) ? h('span', { class: 'muted' }, ` · ${shortSha(e.commit)}`) : undefined,
      h('span', { class: 'muted queue-time' }, clock(e.time)),
    ),
    e.chain
      ? h(
          'div',
          { class: 'queue-detail muted queue-chain', 'data-testid': 'queue-chain' },
          icon('list-ordered'),
          ` ${chainLine(e, ctx.state.mergeTarget ?? 'target')}`,
        )
      : undefined,
    e.detail ? h('div', { class: 'queue-detail' }, e.detail) : undefined,
    e.proof ? h('div', { class: 'queue-detail muted', 'data-testid': 'queue-proof' }, icon('beaker'), ` ${e.proof}`) : undefined,
    e.gates && e.gates.length > 0
      ? h(
          'ul',
          { class: 'checks', 'aria-label': `Merged check of ${e.taskId}`, 'data-testid': 'queue-gates' },
          ...e.gates.map((g) =>
            h(
              'li',
              { class: g.passed ? 'passed' : 'failed' },
              icon(g.passed ? 'check' : 'close'),
              ` ${g.name}`,
              h('span', { class: 'muted' }, ` ${g.summary}`),
            ),
          ),
        )
      : undefined,
    e.state === 'waiting' && e.files?.length
      ? h('p', { class: 'queue-files warning', 'data-testid': 'waiting-files' }, icon('file'), ` In the way: ${e.files.join(', ')}`)
      : undefined,
    waysOn(ctx, e),
  );
  element.querySelector('.queue-task')?.addEventListener('click', (event) => {
    event.preventDefault();
    select();
  });
  return element;
}

/** The person's ways on at an entry: a held result (review), or a merge that waits on their files. */
function waysOn(ctx: ViewContext, e: QueueEntryView): HTMLElement | undefined {
  const act = (label: string, command: Parameters<ViewContext['client']['command']>[0], glyph: string, secondary = true) =>
    button(label, () => ctx.client.command(command, e.taskId), { icon: glyph, secondary, focusKey: `queue:${e.taskId}:${command}` });
  if (e.state === 'review') {
    return h(
      'div',
      { class: 'actions queue-actions', 'data-testid': 'review-actions' },
      act('Show Changes', 'showChanges', 'diff-multiple', false),
      act('Approve', 'approveTask', 'check'),
      act('Request Changes…', 'requestChanges', 'comment-discussion'),
      act('Reject', 'rejectTask', 'trash'),
    );
  }
  if (e.state === 'waiting') {
    return h(
      'div',
      { class: 'actions queue-actions', 'data-testid': 'waiting-actions' },
      act('Open Files', 'openWaitingFiles', 'go-to-file', false),
      act('Retry Now', 'retryMerge', 'refresh'),
      act('Keep on Its Branch', 'keepOnBranch', 'git-branch'),
    );
  }
  return undefined;
}

/** Tasks waiting for review that this window's queue does not hold (held by an earlier run, or the CLI's). */
function heldElsewhere(ctx: ViewContext): QueueEntryView[] {
  return ctx.state.tasks
    .filter((t) => t.status === 'review' && !ctx.state.queue.some((q) => q.taskId === t.id && q.state === 'review'))
    .map((t) => ({
      taskId: t.id,
      title: t.title,
      state: 'review' as const,
      time: t.reviewHold?.heldAt ?? t.updatedAt,
      attempts: 1,
      detail: t.blockedReason ?? t.reviewHold?.reason,
      ...(t.reviewHold?.gates.length ? { gates: t.reviewHold.gates } : {}),
    }));
}

/** The merge queue: each entry queued / merging / checking / waiting / merged / conflict / failed / ready for review, with the merged check's gates. */
export function queue(ctx: ViewContext): HTMLElement | null {
  const entries = [
    ...(ctx.state.queue ?? []).filter((e) => e.state !== 'review' || ctx.state.tasks.find((t) => t.id === e.taskId)?.status === 'review'),
    ...heldElsewhere(ctx),
  ];
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
