/**
 * The plan review's browser code: shows the proposed tasks as editable cards and sends each
 * change to the host, which keeps the plan and answers with the new state. Edits go on
 * `change` (leaving a field), so a re-render never eats what is being typed.
 */
import './elements';
import type { PlanReviewHostMessage, PlanReviewMessage, PlanReviewState, ReviewEdit, ReviewTask } from '../protocol/planReviewProtocol';
import { button, h, icon } from './dom';

interface Api {
  postMessage(message: PlanReviewMessage): void;
}
declare function acquireVsCodeApi(): Api;

const api = acquireVsCodeApi();
const root = document.getElementById('app') as HTMLElement;
let state: PlanReviewState | undefined;

const send = (message: PlanReviewMessage) => api.postMessage(message);
const edit = (key: string, fields: ReviewEdit) => send({ type: 'edit', key, fields });

window.addEventListener('message', (event: MessageEvent<PlanReviewHostMessage>) => {
  if (event.data?.type !== 'state') return;
  const before = state?.status;
  state = event.data.state;
  render(state);
  // the outcome (saved, discarded) is said at the top
  if (before !== state.status && (state.status === 'accepted' || state.status === 'discarded')) window.scrollTo({ top: 0 });
});
send({ type: 'ready' });

/** Rebuilds the page, keeping keyboard focus (and the caret) on the same field. */
function render(s: PlanReviewState): void {
  const active = document.activeElement as HTMLElement | null;
  const focusKey = active?.getAttribute('data-focus-key');
  const caret =
    active instanceof HTMLInputElement || active instanceof HTMLTextAreaElement ? [active.selectionStart, active.selectionEnd] : undefined;
  root.replaceChildren(page(s));
  document.body.dataset.status = s.status;
  document.body.dataset.tasks = String(s.tasks.length);
  const again = focusKey ? root.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focusKey)}"]`) : null;
  again?.focus();
  if (caret && (again instanceof HTMLInputElement || again instanceof HTMLTextAreaElement) && again.type !== 'number')
    again.setSelectionRange(caret[0], caret[1]);
}

function page(s: PlanReviewState): HTMLElement {
  const reviewing = s.status === 'reviewing';
  return h(
    'div',
    { class: 'review' },
    h(
      'header',
      { class: 'topbar' },
      h(
        'div',
        { class: 'title' },
        h('h1', {}, 'Plan review'),
        h('span', { class: 'muted' }, `${s.document}${s.section ? ` · section "${s.section}"` : ''} · ${s.model}`),
      ),
      h(
        'div',
        { class: 'controls' },
        button('Open Report', () => send({ type: 'openReport' }), { icon: 'file-text', secondary: true, focusKey: 'report' }),
      ),
    ),
    banner(s),
    s.notes ? h('section', { class: 'box notes' }, h('h2', {}, 'Notes from the model'), h('p', {}, s.notes)) : undefined,
    h('ol', { class: 'tasks', 'aria-label': 'Proposed tasks' }, ...s.tasks.map((t, i) => h('li', {}, card(s, t, i, reviewing)))),
    reviewing || s.status === 'saving' ? footer(s) : undefined,
  );
}

/** What the person must know before accepting: what is saved, what stops it, what went wrong. */
function banner(s: PlanReviewState): HTMLElement {
  if (s.status === 'accepted') {
    return h(
      'section',
      { class: 'box done', role: 'status' },
      icon('pass'),
      ` Saved ${s.accepted?.length ?? 0} tasks to .ralph/tasks.json: `,
      (s.accepted ?? []).map((t) => `${t.id} ${t.title}`).join(' · '),
    );
  }
  if (s.status === 'discarded')
    return h(
      'section',
      { class: 'box', role: 'status' },
      `Discarded: nothing was saved. The proposal stays in .ralph/reports/plans/${s.runId}.json (ralph plan --accept can still take it).`,
    );
  const parts: HTMLElement[] = [
    h(
      'p',
      { class: 'muted' },
      `${s.tasks.length} proposed task${s.tasks.length === 1 ? '' : 's'}. Nothing is saved until you accept; edit, reorder, merge or drop them first. The order is the order they run in when nothing else decides.`,
    ),
  ];
  if (s.problems.length > 0)
    parts.push(
      h(
        'div',
        { class: 'problems', role: 'alert' },
        h('strong', {}, 'Cannot be accepted yet'),
        h('ul', {}, ...s.problems.map((p) => h('li', {}, p))),
      ),
    );
  if (s.error) parts.push(h('div', { class: 'problems', role: 'alert' }, s.error));
  return h('section', { class: 'intro' }, ...parts);
}

function card(s: PlanReviewState, task: ReviewTask, index: number, editable: boolean): HTMLElement {
  const field = (name: keyof ReviewEdit, value: string, multiline: boolean, label: string, placeholder = '') => {
    const focusKey = `${task.key}:${name}`;
    const input = multiline
      ? (h('textarea', {
          rows: name === 'prompt' ? 3 : 2,
          'aria-label': `${label} of ${task.title}`,
          'data-focus-key': focusKey,
          placeholder,
          disabled: !editable,
        }) as HTMLTextAreaElement)
      : (h('input', {
          type: 'text',
          'aria-label': `${label} of ${task.title}`,
          'data-focus-key': focusKey,
          placeholder,
          disabled: !editable,
        }) as HTMLInputElement);
    input.value = value;
    input.addEventListener('change', () => {
      const text = input.value.trim();
      if (text === value.trim() || (!text && name !== 'check')) return void (input.value = value);
      edit(task.key, { [name]: text });
    });
    return h('label', { class: `field field-${name}` }, h('span', { class: 'label' }, label), input);
  };
  return h(
    'section',
    { class: 'box task', 'data-key': task.key, 'data-type': task.type },
    h(
      'div',
      { class: 'task-head' },
      h('span', { class: 'num' }, String(index + 1)),
      field('title', task.title, false, 'Title'),
      typeField(s, task, editable),
      complexityField(task, editable),
    ),
    field('prompt', task.prompt, true, 'Request'),
    field('promise', task.promise, true, 'Promise'),
    field('check', task.check ?? '', false, 'Check', 'no check command'),
    dependencies(s, task, editable),
    h(
      'div',
      { class: 'meta' },
      h(
        'a',
        {
          href: '#',
          class: 'source',
          'data-focus-key': `${task.key}:source`,
          onclick: (e: Event) => (e.preventDefault(), send({ type: 'openSource', key: task.key })),
        },
        icon('link-external'),
        ` ${task.source}`,
      ),
      ...task.notes.map((n) => h('span', { class: 'note' }, icon('info'), ` ${n}`)),
    ),
    editable ? actions(s, task, index) : undefined,
  );
}

/** The task's type, one of the plan's types. */
function typeField(s: PlanReviewState, task: ReviewTask, editable: boolean): HTMLElement {
  const type = h(
    'select',
    { 'aria-label': `Type of ${task.title}`, 'data-focus-key': `${task.key}:type`, disabled: !editable },
    ...s.types.map((t) => h('option', { value: t }, t)),
  ) as HTMLSelectElement;
  type.value = task.type;
  type.addEventListener('change', () => edit(task.key, { type: type.value }));
  return h('label', { class: 'small' }, h('span', { class: 'label' }, 'Type'), type);
}

/** The task's complexity: a whole number from 1 to 14 is sent, anything else put back. */
function complexityField(task: ReviewTask, editable: boolean): HTMLElement {
  const complexity = h('input', {
    type: 'number',
    min: 1,
    max: 14,
    'aria-label': `Complexity of ${task.title}`,
    'data-focus-key': `${task.key}:complexity`,
    disabled: !editable,
  }) as HTMLInputElement;
  complexity.value = String(task.complexity);
  complexity.addEventListener('change', () => {
    const n = Number(complexity.value);
    if (Number.isInteger(n) && n >= 1 && n <= 14) edit(task.key, { complexity: n });
    else complexity.value = String(task.complexity);
  });
  return h('label', { class: 'small' }, h('span', { class: 'label' }, 'Complexity'), complexity);
}

/** "Runs after": a checkbox per other task of the plan; dependencies on existing tasks as removable chips. */
function dependencies(s: PlanReviewState, task: ReviewTask, editable: boolean): HTMLElement {
  const set = (deps: string[]) => edit(task.key, { dependsOn: deps });
  const boxes = s.tasks
    .filter((t) => t.key !== task.key)
    .map((other) => {
      const box = h('input', {
        type: 'checkbox',
        'data-focus-key': `${task.key}:after:${other.key}`,
        disabled: !editable,
        'aria-label': `${task.title} runs after ${other.title}`,
      }) as HTMLInputElement;
      box.checked = task.dependsOn.includes(other.key);
      box.addEventListener('change', () =>
        set(box.checked ? [...task.dependsOn, other.key] : task.dependsOn.filter((d) => d !== other.key)),
      );
      return h('label', { class: 'dep' }, box, ` ${other.title}`);
    });
  const outside = task.dependsOn.filter((d) => !s.tasks.some((t) => t.key === d));
  const chips = outside.map((id) =>
    h(
      'span',
      { class: 'chip' },
      `${id} ${s.existing.find((e) => e.id === id)?.title ?? '(not in the store)'}`,
      editable
        ? button('', () => set(task.dependsOn.filter((d) => d !== id)), { icon: 'close', secondary: true, label: `No longer after ${id}` })
        : undefined,
    ),
  );
  return h(
    'fieldset',
    { class: 'deps' },
    h('legend', {}, 'Runs after'),
    ...(boxes.length || chips.length ? [...boxes, ...chips] : [h('span', { class: 'muted' }, 'nothing')]),
  );
}

function actions(s: PlanReviewState, task: ReviewTask, index: number): HTMLElement {
  const merge = h(
    'select',
    { 'aria-label': `Merge ${task.title} into another task`, 'data-focus-key': `${task.key}:merge` },
    h('option', { value: '' }, 'Merge into…'),
    ...s.tasks.filter((t) => t.key !== task.key).map((t) => h('option', { value: t.key }, t.title)),
  ) as HTMLSelectElement;
  merge.addEventListener('change', () => merge.value && send({ type: 'merge', into: merge.value, other: task.key }));
  return h(
    'div',
    { class: 'task-actions' },
    index > 0
      ? button('Up', () => send({ type: 'move', key: task.key, to: index - 1 }), {
          icon: 'arrow-up',
          secondary: true,
          label: `Move ${task.title} up`,
          focusKey: `${task.key}:up`,
        })
      : undefined,
    index < s.tasks.length - 1
      ? button('Down', () => send({ type: 'move', key: task.key, to: index + 1 }), {
          icon: 'arrow-down',
          secondary: true,
          label: `Move ${task.title} down`,
          focusKey: `${task.key}:down`,
        })
      : undefined,
    s.tasks.length > 1 ? merge : undefined,
    button('Drop', () => send({ type: 'drop', key: task.key }), {
      icon: 'trash',
      secondary: true,
      label: `Drop ${task.title}`,
      focusKey: `${task.key}:drop`,
    }),
  );
}

function footer(s: PlanReviewState): HTMLElement {
  const blocked = s.problems.length > 0 || s.tasks.length === 0 || s.status === 'saving';
  const accept = button(
    s.status === 'saving' ? 'Saving…' : `Accept ${s.tasks.length} task${s.tasks.length === 1 ? '' : 's'}`,
    () => !blocked && send({ type: 'accept' }),
    { icon: 'check', focusKey: 'accept' },
  );
  if (blocked) accept.setAttribute('disabled', '');
  return h(
    'footer',
    { class: 'actions' },
    accept,
    button('Discard', () => send({ type: 'discard' }), { icon: 'close', secondary: true, focusKey: 'discard' }),
  );
}
