import { agentModelOf } from '../../protocol/agentModel';
import type { TaskView } from '../../protocol/panelState';
import { h, icon } from '../dom';
import { costText, duration, plural, signalKind, tokens } from '../format';
import type { ViewContext } from './context';
import { remoteBox } from './remoteBox';

/** A progress bar with its value for assistive technology. */
export function bar(percent: number | undefined, label: string, size: 'large' | 'small' = 'large'): HTMLElement {
  const value = Math.max(0, Math.min(100, percent ?? 0));
  const fill = h('div', { class: 'bar-fill' });
  // through the CSSOM: the CSP allows no inline style attributes
  fill.style.width = `${value}%`;
  return h(
    'div',
    {
      class: `bar bar-${size}`,
      role: 'progressbar',
      'aria-label': label,
      'aria-valuemin': 0,
      'aria-valuemax': 100,
      'aria-valuenow': value,
    },
    fill,
  );
}

export function signalChip(signal: string | undefined): HTMLElement {
  return h('span', { class: `signal signal-${signalKind(signal)}` }, signal ?? '(no signal)');
}

/** The running iteration's start, for the live duration (ticks without re-rendering). */
export function runningSince(task: TaskView): string | undefined {
  const row = task.iterations[task.iterations.length - 1];
  return task.status === 'in_progress' && row && row.durationMs === undefined ? row.startedAt : undefined;
}

export function liveDuration(baseMs: number, since: string | undefined): HTMLElement {
  const since_ = since ? Date.parse(since) : NaN;
  const now = Number.isNaN(since_) ? baseMs : baseMs + Math.max(0, Date.now() - since_);
  return h('span', { class: 'live-duration', 'data-base': baseMs, 'data-since': since }, duration(now));
}

/** ITERATION PROGRESS: iteration n/max, duration, progress, last signal, tests, commits, agent and model, cost. */
export function progressBox(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  if (!task) return null;
  if (task.remote && task.iterations.length === 0) return remoteBox(ctx.client, task.id, task.remote);
  const row = task.iterations[task.iterations.length - 1];
  const tests = task.tests;
  const escalated = row?.escalatedFrom;
  const cost = costText(task);
  const item = (label: string, ...value: (HTMLElement | string)[]) => [h('dt', {}, label), h('dd', {}, ...value)];
  return h(
    'section',
    { class: 'box progress-box', 'aria-labelledby': 'progress-heading', 'data-testid': 'progress-box' },
    h('h2', { id: 'progress-heading' }, 'Iteration progress'),
    h(
      'dl',
      { class: 'facts' },
      item('Iteration', h('span', { 'data-testid': 'iteration' }, `${task.iteration}/${task.maxIterations ?? '?'}`)),
      item('Duration', liveDuration(task.elapsedMs, runningSince(task))),
      item(
        'Progress',
        bar(task.progress, 'Task progress'),
        h('span', { class: 'percent' }, task.progress === undefined ? '—' : `${task.progress}%`),
      ),
      item('Last signal', signalChip(task.lastSignal)),
      item('Tests', tests ? `${tests.passed}/${tests.total} passing` : 'not run yet'),
      item('Commits', `${plural(task.commits, 'commit')} made for this task`),
      item('Agent', h('span', { 'data-testid': 'agent' }, (row && agentModelOf(row).agent) ?? task.agent ?? '—')),
      item(
        'Model',
        h('span', { 'data-testid': 'model' }, row ? agentModelOf(row).model : (task.model ?? '—')),
        escalated
          ? h('span', { class: 'escalated', title: `escalated from ${escalated}` }, ' ', icon('arrow-up'), ` from ${escalated}`)
          : '',
      ),
      item('Cost', `${cost} · ${tokens(task.tokens)} tokens`),
    ),
  );
}
