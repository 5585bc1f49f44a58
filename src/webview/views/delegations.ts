import type { DelegationView } from '../../protocol/panelState';
import { h, icon } from '../dom';
import { duration, tokens } from '../format';
import type { ViewContext } from './context';

const STATUS_ICON: Record<DelegationView['status'], string> = {
  running: 'loading~spin',
  success: 'pass-filled',
  partial: 'warning',
  failed: 'error',
  escalated: 'arrow-up',
};

const TAG_CLASS = { OK: 'passed', ERROR: 'failed', PENDING: 'info', MISSING: 'warning' } as const;

/** A collapsible whose open state survives re-renders. */
export function collapsible(
  ctx: ViewContext,
  key: string,
  heading: string,
  description: string,
  defaultOpen: boolean,
  ...body: (HTMLElement | undefined)[]
): HTMLElement {
  const open = ctx.client.view.open[key] ?? defaultOpen;
  const element = h('vscode-collapsible', { heading, description, open, 'data-focus-key': key }, ...body);
  element.addEventListener('vsc-collapsible-toggle', (event) =>
    ctx.client.setOpen(key, Boolean((event as CustomEvent<{ open: boolean }>).detail?.open)),
  );
  return element;
}

function card(ctx: ViewContext, d: DelegationView): HTMLElement {
  const target = d.target.toUpperCase();
  const status = d.status === 'running' ? 'RUNNING' : d.status.toUpperCase();
  const facts = [
    `model ${d.model}`,
    d.durationMs !== undefined ? duration(d.durationMs) : 'running',
    d.tokens !== undefined ? `${tokens(d.tokens)} tokens` : undefined,
    `iteration ${d.iteration}`,
  ].filter(Boolean);
  const evidence =
    d.evidence.length > 0
      ? h(
          'ul',
          { class: 'evidence', 'aria-label': 'Evidence' },
          ...d.evidence.map((e) =>
            h(
              'li',
              {},
              h('span', { class: `tag ${TAG_CLASS[e.tag]}` }, `[${e.tag}]`),
              ` ${e.tool}: ${e.summary}`,
              e.externalId ? h('span', { class: 'muted' }, ` id=${e.externalId}`) : '',
            ),
          ),
        )
      : h('p', { class: 'muted' }, d.status === 'running' ? 'Working…' : 'No tool calls.');
  const body = h(
    'div',
    { class: 'delegation-body' },
    h('p', {}, h('strong', {}, 'Objective: '), d.objective),
    d.expectedOutcome ? h('p', {}, h('strong', {}, 'Expected outcome: '), d.expectedOutcome) : undefined,
    h('p', { class: 'muted' }, facts.join(' · ')),
    evidence,
    d.escalation ? h('p', { class: 'warning' }, icon('arrow-up'), ` Escalated: ${d.escalation}`) : undefined,
    d.summary ? h('div', {}, h('strong', {}, 'Agent response'), h('pre', { class: 'text' }, d.summary)) : undefined,
    d.envelope
      ? collapsible(
          ctx,
          `envelope:${d.id}`,
          'Verification envelope',
          'as the orchestrator read it',
          false,
          h('pre', { class: 'text' }, d.envelope),
        )
      : undefined,
  );
  const element = collapsible(
    ctx,
    `delegation:${d.id}`,
    target,
    d.objective,
    d.status === 'running' || d.status === 'failed' || d.status === 'escalated',
    body,
  );
  element.classList.add('delegation', `delegation-${d.status}`);
  element.setAttribute('data-testid', 'delegation-card');
  element.append(
    h('span', { slot: 'decorations', class: `delegation-status delegation-${d.status}` }, icon(STATUS_ICON[d.status]), ` ${status}`),
  );
  return element;
}

/** Delegation envelopes, newest first, coloured by status. */
export function delegations(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  if (!task || task.delegations.length === 0) return null;
  return h(
    'section',
    { class: 'box delegations', 'aria-labelledby': 'delegations-heading' },
    h('h2', { id: 'delegations-heading' }, `Delegations (${task.delegations.length})`),
    ...[...task.delegations].reverse().map((d) => card(ctx, d)),
  );
}
