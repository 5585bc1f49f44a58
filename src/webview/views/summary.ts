import { button, h, icon } from '../dom';
import type { ViewContext } from './context';

/**
 * One summary when a run ends: done / needs you / failed, with a way to the first question
 * and to the review list. Shown until the next run starts.
 */
export function runSummary(ctx: ViewContext): HTMLElement | null {
  const { run } = ctx.state;
  const o = run.outcome;
  if (!o || run.phase !== 'idle') return null;
  const needs = o.questions.length + o.reviews.length;
  const first = o.questions[0];
  const count = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  return h(
    'section',
    { class: 'box run-summary', 'aria-labelledby': 'summary-heading', 'data-testid': 'run-summary' },
    h('h2', { id: 'summary-heading' }, 'Run finished'),
    h(
      'ul',
      { class: 'summary-counts' },
      h(
        'li',
        { class: 'passed' },
        icon('pass-filled'),
        ` ${count(o.done.length, 'task')} done${o.done.length ? `: ${o.done.join(', ')}` : ''}`,
      ),
      h(
        'li',
        { class: needs > 0 ? 'warning' : 'muted' },
        icon('person'),
        ` ${needs} need${needs === 1 ? 's' : ''} you${needs ? ` — ${[o.questions.length ? count(o.questions.length, 'question') : '', o.reviews.length ? `${o.reviews.length} to review` : ''].filter(Boolean).join(', ')}` : ''}`,
      ),
      h(
        'li',
        { class: o.failed.length ? 'failed' : 'muted' },
        icon('error'),
        ` ${o.failed.length} failed, timed out or halted${o.failed.length ? `: ${o.failed.map((f) => `${f.taskId} (${f.status.replace('_', ' ')})`).join(', ')}` : ''}`,
      ),
    ),
    first ? h('p', {}, h('strong', {}, `${first.taskId} asks: `), first.question) : undefined,
    h(
      'div',
      { class: 'actions' },
      first
        ? button('Answer First Question', () => ctx.client.setView({ selectedTaskId: first.taskId }), {
            icon: 'reply',
            focusKey: 'summary:answer',
          })
        : undefined,
      o.reviews.length
        ? button('Show Review List', () => ctx.client.command('showReviews'), {
            icon: 'git-pull-request-draft',
            secondary: first !== undefined,
            focusKey: 'summary:reviews',
          })
        : undefined,
    ),
  );
}
