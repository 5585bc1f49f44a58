import type { RemoteView } from '../../protocol/panelState';
import { remoteLinkLabel, remoteLook, remoteWords } from '../../protocol/remoteLook';
import type { PanelClient } from '../client';
import { h, icon } from '../dom';

/**
 * A link to the task's job or pull request that the extension opens (Open on GitHub): the same
 * path as the tree's, so VS Code asks once before it opens an external site. Left to the webview,
 * code-server opens such a link twice (a new tab at once, and again after its own question).
 */
export function remoteLink(
  client: PanelClient,
  taskId: string,
  remote: RemoteView,
  attributes: Record<string, string>,
  ...children: (HTMLElement | string)[]
): HTMLElement {
  const link = h('a', { ...attributes, href: remote.url, 'data-focus-key': `remote-link:${attributes['data-testid'] ?? ''}` }, ...children);
  link.addEventListener('click', (event) => {
    // before the webview host's own handler on the window (it ignores preventDefault alone)
    event.preventDefault();
    event.stopPropagation();
    client.command('openRemote', taskId);
  });
  return link;
}

/**
 * ON GITHUB ACTIONS, in place of the iteration progress of a task that runs (or ran) only as a CI
 * job: nothing of it ran here, so the forge's state, its detail and the link to the job or pull
 * request are what there is to show.
 */
export function remoteBox(client: PanelClient, taskId: string, remote: RemoteView): HTMLElement {
  const look = remoteLook(remote.state);
  const item = (label: string, ...value: (HTMLElement | string)[]) => [h('dt', {}, label), h('dd', {}, ...value)];
  return h(
    'section',
    { class: 'box progress-box remote-box', 'aria-labelledby': 'remote-heading', 'data-testid': 'remote-box' },
    h('h2', { id: 'remote-heading' }, 'On GitHub Actions'),
    h(
      'dl',
      { class: 'facts' },
      item('State', icon(look.icon), remoteWords(remote)),
      ...(remote.detail && remote.state !== 'in-queue' ? [item('Detail', remote.detail)] : []),
      item(
        'Link',
        remoteLink(client, taskId, remote, { 'data-testid': 'remote-link' }, remoteLinkLabel(remote), ' ', icon('link-external')),
      ),
    ),
    h(
      'p',
      { class: 'muted' },
      "The task runs as a job on GitHub Actions: its iterations, gates and cost are in the job's summary and in the pull request's report. It is done when the pull request merges.",
    ),
  );
}
