import type { GateView } from '../../protocol/panelState';
import { h, icon } from '../dom';
import { duration } from '../format';
import type { ViewContext } from './context';

/** A failing test: new, failing since the base and held against the task, or pre-existing and forgiven — with the evidence. */
function failingRow(name: string, forgiven: boolean, base: { held: boolean; why: string } | undefined): HTMLElement {
  if (forgiven)
    return h(
      'li',
      { class: 'muted', 'data-testid': 'gate-pre-existing' },
      icon('history'),
      ` ${name} — pre-existing: already failing at the task's base, not held against it${base ? ` (${base.why})` : ''}`,
    );
  if (base?.held)
    return h(
      'li',
      { 'data-testid': 'gate-held' },
      icon('close', 'failed'),
      ` ${name} — failing at the base too, held against the task: ${base.why}`,
    );
  return h('li', {}, icon('close', 'failed'), ` ${name}`);
}

/** What the tag of a part of the suite says on hover. */
function partTitle(part: NonNullable<GateView['part']>): string {
  const files = part.files > 0 ? `${part.files} test file${part.files === 1 ? '' : 's'}` : 'the test files the changes reach';
  const of = part.of !== undefined ? ` of a suite of ${part.of} tests` : '';
  return `A part of the suite ran: ${files}${of}. The whole suite runs and decides when the agent claims COMPLETE.`;
}

function gateRow(gate: GateView): HTMLElement {
  const state = gate.passed === undefined ? 'running' : gate.passed ? 'passed' : 'failed';
  const glyph = gate.passed === undefined ? 'loading~spin' : gate.passed ? 'pass-filled' : 'error';
  const pre = new Set(gate.preExisting ?? []);
  const atBase = new Map((gate.baseFailures ?? []).map((b) => [b.name, b]));
  const failing = gate.tests?.failing ?? [];
  const flaky = gate.flaky ?? [];
  const weakened = gate.integrity?.violations ?? [];
  const allowed = gate.integrity?.allowed ?? [];
  return h(
    'li',
    { class: `gate gate-${state}`, 'data-testid': 'gate' },
    h(
      'div',
      { class: 'gate-line' },
      h('span', { class: state }, icon(glyph)),
      h('strong', {}, ` ${gate.name}`),
      h(
        'span',
        { class: 'muted' },
        ` ${gate.kind}${gate.required ? '' : ' · optional'}${gate.durationMs !== undefined ? ` · ${duration(gate.durationMs)}` : ''}`,
      ),
      gate.tests
        ? h(
            'span',
            { class: 'counts' },
            ` ${gate.tests.passed}/${gate.tests.total} passing${gate.tests.failed ? `, ${gate.tests.failed} failing` : ''}`,
          )
        : '',
      gate.part ? h('span', { class: 'tag', 'data-testid': 'gate-part', title: partTitle(gate.part) }, ' affected tests only') : '',
    ),
    gate.summary ? h('div', { class: 'gate-summary' }, gate.summary) : undefined,
    failing.length > 0
      ? h(
          'ul',
          { class: 'failing', 'aria-label': `Failing tests of ${gate.name}` },
          ...failing.map((f) => failingRow(f, pre.has(f), atBase.get(f))),
        )
      : undefined,
    flaky.length > 0
      ? h(
          'ul',
          { class: 'integrity muted', 'aria-label': `Flaky tests of ${gate.name}`, 'data-testid': 'gate-flaky' },
          ...flaky.map((f) => h('li', {}, icon('sync'), ` Flaky: ${f} failed, then passed on a re-run`)),
        )
      : undefined,
    gate.baselineNote
      ? h('p', { class: 'gate-summary warning', 'data-testid': 'gate-baseline-note' }, icon('info'), ` ${gate.baselineNote}`)
      : undefined,
    weakened.length > 0
      ? h(
          'ul',
          { class: 'integrity failed', 'aria-label': `How ${gate.name} was weakened`, 'data-testid': 'gate-weakened' },
          ...weakened.map((v) => h('li', {}, icon('warning', 'failed'), ` Weakened: ${v}`)),
        )
      : undefined,
    allowed.length > 0
      ? h(
          'ul',
          { class: 'integrity muted', 'aria-label': `Allowed changes to ${gate.name}`, 'data-testid': 'gate-allowed-changes' },
          ...allowed.map((v) => h('li', {}, icon('info'), ` Allowed change: ${v}`)),
        )
      : undefined,
  );
}

/** Which run the task's gates belong to: an iteration's, or the merge queue's re-check of the merged result. */
function gatesLabel(task: ViewContext['task']): string {
  if (task?.gatesMergeTarget) return `Merged check on ${task.gatesMergeTarget}`;
  if (task?.gatesIteration !== undefined) return `After iteration ${task.gatesIteration}`;
  return 'Latest gate run';
}

/** The latest gate results of the task (and of a hand-run of the gates), with counts and failing tests. */
export function gates(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  const taskGates = task?.gates ?? [];
  const handRun = ctx.state.workspaceGates;
  if (taskGates.length === 0 && handRun.length === 0) return null;
  return h(
    'section',
    { class: 'box gates', 'aria-labelledby': 'gates-heading' },
    h('h2', { id: 'gates-heading' }, 'Quality gates'),
    taskGates.length > 0 ? h('p', { class: 'muted', 'data-testid': 'gates-label' }, gatesLabel(task)) : undefined,
    taskGates.length > 0 ? h('ul', { class: 'gate-list' }, ...taskGates.map(gateRow)) : undefined,
    handRun.length > 0 ? h('p', { class: 'muted' }, 'Run Quality Gates (by hand)') : undefined,
    handRun.length > 0 ? h('ul', { class: 'gate-list' }, ...handRun.map(gateRow)) : undefined,
  );
}
