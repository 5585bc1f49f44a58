import { WARNING_ACTION_LABEL, type WarningView, warningActions } from '../../protocol/panelState';
import { button, h, icon } from '../dom';
import { clock } from '../format';
import type { ViewContext } from './context';

const TITLES: Record<string, [string, string]> = {
  'no-commits': ['warning', 'No commits lately — the agent may be stuck'],
  'iteration-ratio': ['watch', 'Most of the iteration limit is used'],
  'error-threshold': ['error', 'Error threshold reached — autopilot paused'],
  'model-switch': ['arrow-swap', 'Switched to a fallback model'],
  'model-return': ['check', 'Back on the primary model'],
  'model-probe-failed': ['warning', 'Primary model still failing — staying on the fallback'],
  'spend-rate': ['flame', 'Spend rate alarm — autopilot paused'],
  'security-critical': ['shield', 'Critical security finding — the next task waits for you'],
};

const ACTION_ICON: Record<string, string> = {
  continue: 'debug-continue',
  stop: 'debug-stop',
  increaseMax: 'add',
  reviewErrors: 'output',
  dismiss: 'close',
};

/** An answered warning: one quiet line. */
function answered(w: WarningView): HTMLElement {
  const [, title] = TITLES[w.code] ?? ['warning', 'Warning'];
  return h(
    'div',
    {
      class: 'warning-card resolved',
      role: 'group',
      'aria-label': `Answered warning: ${title}`,
      'data-testid': 'warning',
      'data-warning-code': w.code,
    },
    h(
      'span',
      { class: 'muted', 'data-testid': 'warning-resolved' },
      icon('check'),
      ` ${title} — answered: ${WARNING_ACTION_LABEL[w.resolved!]} · ${clock(w.time)}`,
    ),
  );
}

function card(ctx: ViewContext, w: WarningView): HTMLElement {
  if (w.resolved) return answered(w);
  const [glyph, title] = TITLES[w.code] ?? ['warning', 'Warning'];
  const task = ctx.state.tasks.find((t) => t.id === w.taskId);
  const actions = warningActions(w.code);
  return h(
    'div',
    {
      class: `warning-card${w.resolved ? ' resolved' : ''} warning-${w.code}`,
      role: 'group',
      'aria-label': `Warning: ${title}`,
      'data-testid': 'warning',
      'data-warning-code': w.code,
    },
    h('div', { class: 'warning-title' }, icon(glyph), h('strong', {}, ` ${title}`), h('span', { class: 'muted' }, ` · ${clock(w.time)}`)),
    h('p', {}, w.message),
    task
      ? h(
          'p',
          { class: 'muted' },
          `Task: ${task.id} ${task.title}${w.iteration ? ` · iteration ${w.iteration}/${w.maxIterations ?? '?'}` : ''}`,
        )
      : undefined,
    h(
      'div',
      { class: 'actions' },
      ...actions.map((action, i) =>
        button(WARNING_ACTION_LABEL[action], () => ctx.client.answerWarning(w.id, action), {
          icon: ACTION_ICON[action],
          secondary: i > 0,
          focusKey: `warning:${w.id}:${action}`,
        }),
      ),
    ),
  );
}

/** Warnings with their actions: open ones first, answered ones (recent) after. */
export function warnings(ctx: ViewContext): HTMLElement | null {
  const list = ctx.state.warnings;
  if (list.length === 0) return null;
  const open = list.filter((w) => !w.resolved);
  const answered = list.filter((w) => w.resolved).slice(-3);
  return h(
    'section',
    { class: 'warnings', 'aria-label': 'Warnings', 'aria-live': 'polite' },
    ...[...open].reverse().map((w) => card(ctx, w)),
    ...[...answered].reverse().map((w) => card(ctx, w)),
  );
}
