import type { StreamEntry } from '../../protocol/panelState';
import { h, icon } from '../dom';
import { duration } from '../format';
import type { ViewContext } from './context';

function agentTag(agent: string | undefined): HTMLElement | string {
  return agent ? h('span', { class: 'agent' }, `[${agent}] `) : '';
}

function entry(e: StreamEntry): HTMLElement {
  switch (e.kind) {
    case 'text':
      return h('div', { class: 'stream-text' }, agentTag(e.agent), h('pre', { class: 'text' }, e.text));
    case 'tool': {
      const state = e.ok === undefined ? 'running' : e.ok ? 'passed' : 'failed';
      return h(
        'div',
        { class: `stream-tool ${state}` },
        agentTag(e.agent),
        icon('tools'),
        h('code', {}, ` ${e.tool}`),
        e.args ? h('span', { class: 'muted args' }, ` ${e.args}`) : '',
        e.ok === undefined
          ? h('span', { class: 'muted' }, ' …')
          : h(
              'div',
              { class: 'tool-result' },
              icon(e.ok ? 'check' : 'close'),
              ` ${e.summary ?? ''}`,
              e.durationMs !== undefined ? h('span', { class: 'muted' }, ` (${duration(e.durationMs)})`) : '',
            ),
      );
    }
    case 'note':
      return h(
        'div',
        { class: `stream-note ${e.level}` },
        icon(e.level === 'error' ? 'error' : e.level === 'warning' ? 'warning' : 'info'),
        ` ${e.text}`,
      );
  }
}

/** The agent's text and tool calls of the running iteration, as they stream in. */
export function stream(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  if (!task || task.stream.length === 0) return null;
  const live = task.status === 'in_progress';
  const list = h(
    'div',
    { class: 'stream-list', tabindex: 0, role: 'log', 'aria-label': 'Agent activity', 'data-testid': 'stream' },
    ...task.stream.map(entry),
  );
  return h(
    'section',
    { class: 'box stream', 'aria-labelledby': 'stream-heading' },
    h(
      'h2',
      { id: 'stream-heading' },
      live
        ? `Live · iteration ${task.streamIteration ?? task.iteration}`
        : `Activity of iteration ${task.streamIteration ?? task.iteration}`,
    ),
    list,
  );
}
