import { agentModelText } from '../../protocol/agentModel';
import { agentsHeading, agentTileLook } from '../../protocol/agentTiles';
import { runningAgents, type TaskView } from '../../protocol/panelState';
import { h, icon } from '../dom';
import { costText } from '../format';
import type { ViewContext } from './context';
import { bar, signalChip } from './progressBox';

function tile(ctx: ViewContext, task: TaskView, selected: boolean): HTMLElement {
  const cost = costText(task, true);
  const select = () => ctx.client.setView({ selectedTaskId: task.id });
  const look = agentTileLook(task);
  const element = h(
    'li',
    {
      class: `agent-tile tile-${look.state}${selected ? ' selected' : ''}`,
      role: 'button',
      tabindex: 0,
      'aria-pressed': selected ? 'true' : 'false',
      'aria-label': `${task.id} ${task.title}, ${look.label}, iteration ${task.iteration} of ${task.maxIterations ?? 'unknown'}, ${task.progress ?? 0} percent; show its timeline`,
      'data-testid': 'agent-tile',
      'data-task': task.id,
      'data-state': look.state,
      'data-focus-key': `tile:${task.id}`,
    },
    h(
      'div',
      { class: 'tile-title' },
      icon(look.icon, look.state === 'model' ? 'info' : 'muted'),
      h('strong', {}, ` ${task.id}`),
      h('span', { class: 'tile-name' }, ` ${task.title}`),
    ),
    h(
      'div',
      { class: 'tile-progress' },
      bar(task.progress, `Progress of ${task.id}`, 'small'),
      h('span', { class: 'percent' }, task.progress === undefined ? '—' : `${task.progress}%`),
      h('span', { class: 'muted', 'data-testid': 'tile-iteration' }, `iteration ${task.iteration}/${task.maxIterations ?? '?'}`),
    ),
    look.state === 'model' ? undefined : h('div', { class: 'tile-state', 'data-testid': 'tile-state' }, look.label),
    h('div', { class: 'tile-facts' }, signalChip(task.lastSignal), h('span', { class: 'muted' }, ` · ${tileModel(task)} · ${cost}`)),
    task.worktree ? h('div', { class: 'tile-path muted', title: task.worktree }, icon('folder'), ` ${task.worktree}`) : undefined,
  );
  element.addEventListener('click', select);
  element.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' || event.key === ' ') {
      event.preventDefault();
      select();
    }
  });
  return element;
}

/**
 * A tile per running agent: task, iteration n/max, progress, last signal, model, cost, worktree;
 * a task whose gates run without an agent slot (or that waits for one) shows it in words and in
 * a quieter tile. Selecting one shows its task below. Shown when several agents run (or the merge
 * queue is in use).
 */
export function agents(ctx: ViewContext): HTMLElement | null {
  // no run, no agents: in_progress tasks of an interrupted run show in the task picker and cards
  if (ctx.state.run.phase === 'idle') return null;
  const running = runningAgents(ctx.state);
  // one agent alone is the progress box below; tiles once several run or the queue is in play
  if (running.length === 0 || (running.length === 1 && (ctx.state.queue ?? []).length === 0)) return null;
  return h(
    'section',
    { class: 'box agents', 'aria-labelledby': 'agents-heading', 'data-testid': 'agents' },
    h('h2', { id: 'agents-heading' }, agentsHeading(running)),
    h('ul', { class: 'tiles' }, ...running.map((task) => tile(ctx, task, task.id === ctx.task?.id))),
  );
}

/** The agent and model of the tile's iteration (`Claude Code · opus`), or the task's model when no iteration is known. */
function tileModel(task: TaskView): string {
  const row = task.iterations[task.iterations.length - 1];
  return row ? agentModelText(row) : (task.model ?? '—');
}
