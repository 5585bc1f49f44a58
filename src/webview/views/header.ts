import { h, button, icon } from '../dom';
import { statusLabel } from '../format';
import type { RemoteView } from '../../protocol/panelState';
import { remoteLinkLabel, remoteLook, remoteWords } from '../../protocol/remoteLook';
import type { PanelClient } from '../client';
import type { ViewContext } from './context';
import { remoteLink } from './remoteBox';

const PHASE_ICON: Record<string, string> = {
  idle: 'circle-large-outline',
  running: 'sync~spin',
  paused: 'debug-pause',
  stopping: 'loading~spin',
};

/** Title, the run's phase, the run controls and the task picker. */
export function header(ctx: ViewContext): HTMLElement {
  const { state, task, client } = ctx;
  const phase = state.run.phase;
  const controls: HTMLElement[] = [];
  if (phase === 'running')
    controls.push(button('Pause', () => client.command('pause'), { icon: 'debug-pause', secondary: true, focusKey: 'pause' }));
  if (phase === 'paused') controls.push(button('Resume', () => client.command('resume'), { icon: 'debug-continue', focusKey: 'resume' }));
  if (phase === 'running' || phase === 'paused')
    controls.push(button('Stop', () => client.command('stop'), { icon: 'debug-stop', secondary: true, focusKey: 'stop' }));
  if (phase === 'idle')
    controls.push(
      button('Start Autopilot', () => client.command('startAutopilot'), { icon: 'run-all', secondary: true, focusKey: 'start' }),
    );
  if (phase === 'idle')
    controls.push(
      button('Select Model', () => client.command('selectModel'), { icon: 'sparkle', secondary: true, focusKey: 'select-model' }),
    );
  controls.push(button('Open Log', () => client.command('showLog'), { icon: 'output', secondary: true, focusKey: 'log' }));

  const picker = state.tasks.length > 1 ? taskPicker(ctx) : undefined;
  return h(
    'header',
    { class: 'topbar' },
    h(
      'div',
      { class: 'title' },
      h('h1', {}, task ? `${task.id} · ${task.title}` : 'Ralph Progress'),
      h(
        'span',
        { class: `phase phase-${phase}`, role: 'status', 'aria-label': `Run ${phase}` },
        icon(PHASE_ICON[phase] ?? 'circle-large-outline'),
        ` ${phase}`,
      ),
      task ? h('span', { class: `badge status-${task.status}` }, statusLabel(task.status)) : undefined,
      task?.remote ? remoteBadge(client, task.id, task.remote) : undefined,
    ),
    h('div', { class: 'controls', role: 'toolbar', 'aria-label': 'Run controls' }, picker, ...controls),
  );
}

function taskPicker(ctx: ViewContext): HTMLElement {
  const { state, client } = ctx;
  const select = h('select', { class: 'task-picker', 'aria-label': 'Task shown', 'data-focus-key': 'task-picker' }) as HTMLSelectElement;
  const follow = h('option', { value: '' }, 'Follow the running task') as HTMLOptionElement;
  select.append(follow);
  for (const task of [...state.tasks].reverse()) {
    select.append(h('option', { value: task.id }, `${task.id} · ${task.title} (${statusLabel(task.status)})`));
  }
  select.value = client.view.selectedTaskId ?? '';
  select.addEventListener('change', () => client.setView({ selectedTaskId: select.value || undefined }));
  return select;
}

/** The forge's state of a task run as a CI job, linking to the job or the pull request. */
export function remoteBadge(client: PanelClient, taskId: string, remote: RemoteView): HTMLElement {
  const { icon: glyph, words } = remoteLook(remote.state);
  const text = remoteWords(remote);
  const attributes = {
    class: `badge remote remote-${remote.state}`,
    title: remote.detail ? `${words}: ${remote.detail}` : words,
    'aria-label': `${text}, ${remoteLinkLabel(remote).toLowerCase()}`,
    'data-testid': 'remote-badge',
  };
  return remoteLink(client, taskId, remote, attributes, icon(glyph), ` ${text}`);
}
