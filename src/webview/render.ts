/**
 * Renders the panel as a column of sections. Each section is rebuilt only when the parts of
 * the state it reads changed (the reducer keeps unchanged parts identical), keyboard focus
 * follows a rebuilt section, and the live stream stays scrolled to its end.
 */
import { button, h, swap } from './dom';
import type { PanelClient } from './client';
import { duration } from './format';
import { agents } from './views/agents';
import { delegations } from './views/delegations';
import { queue } from './views/queue';
import { gates } from './views/gates';
import { header } from './views/header';
import { type ViewContext, shownTask } from './views/context';
import { errors, finishCard, report } from './views/cards';
import { runSummary } from './views/summary';
import { progressBox } from './views/progressBox';
import { stream } from './views/stream';
import { timeline } from './views/timeline';
import { warnings } from './views/warnings';

interface Section {
  key: string;
  deps(ctx: ViewContext): unknown[];
  build(ctx: ViewContext): HTMLElement | null;
}

const SECTIONS: Section[] = [
  {
    key: 'header',
    deps: (c) => [
      c.state.run.phase,
      c.state.tasks.map((t) => `${t.id}\u0000${t.status}\u0000${t.title}`).join('\u0001'),
      c.task?.id,
      c.client.view.selectedTaskId,
      c.task?.remote,
    ],
    build: header,
  },
  { key: 'agents', deps: (c) => [c.state.run.phase, c.state.tasks, c.state.queue, c.task?.id], build: agents },
  {
    key: 'queue',
    deps: (c) => [c.state.queue, c.state.mergeTarget, c.state.tasks.map((t) => `${t.id}\u0000${t.status}`).join('\u0001')],
    build: queue,
  },
  { key: 'warnings', deps: (c) => [c.state.warnings, c.state.tasks.length], build: warnings },
  { key: 'summary', deps: (c) => [c.state.run.outcome, c.state.run.phase], build: runSummary },
  {
    key: 'card',
    deps: (c) => [
      c.task?.finish,
      c.task?.status,
      c.task?.gates,
      c.task?.blockedReason,
      c.task?.worktree,
      c.task?.questions,
      c.task?.reviewHold,
      c.state.queue,
    ],
    build: finishCard,
  },
  {
    key: 'progress',
    deps: (c) => [
      c.task?.iteration,
      c.task?.maxIterations,
      c.task?.progress,
      c.task?.lastSignal,
      c.task?.tests,
      c.task?.commits,
      c.task?.model,
      c.task?.agent,
      c.task?.tokens,
      c.task?.elapsedMs,
      c.task?.iterations,
      c.task?.status,
      c.task?.remote,
    ],
    build: progressBox,
  },
  { key: 'gates', deps: (c) => [c.task?.gates, c.task?.gatesIteration, c.task?.gatesMergeTarget, c.state.workspaceGates], build: gates },
  { key: 'timeline', deps: (c) => [c.task?.iterations, c.task?.status, c.task?.progress, c.task?.elapsedMs], build: timeline },
  { key: 'stream', deps: (c) => [c.task?.stream, c.task?.status], build: stream },
  { key: 'delegations', deps: (c) => [c.task?.delegations], build: delegations },
  { key: 'errors', deps: (c) => [c.state.errors, c.task?.id], build: errors },
  { key: 'report', deps: (c) => [c.task?.report, c.task?.id], build: report },
];

function same(a: unknown[], b: unknown[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}

export class Renderer {
  private readonly built = new Map<string, { deps: unknown[]; element: Element }>();
  private emptyShown: Element | undefined;

  constructor(
    private readonly root: HTMLElement,
    private readonly client: PanelClient,
  ) {}

  render(): void {
    const state = this.client.state;
    if (!state) return;
    const task = shownTask(state, this.client.view.selectedTaskId);
    const ctx: ViewContext = { client: this.client, state, task };
    if (this.built.size === 0) this.root.replaceChildren();
    this.renderEmpty(ctx);
    for (const section of SECTIONS) {
      const deps = section.deps(ctx);
      const previous = this.built.get(section.key);
      if (previous && same(previous.deps, deps)) continue;
      const element = section.build(ctx) ?? h('div', { hidden: true });
      element.setAttribute('data-section', section.key);
      const scroll = section.key === 'stream' ? streamScroll(previous?.element) : undefined;
      if (previous) swap(previous.element, element);
      else this.root.append(element);
      this.built.set(section.key, { deps, element });
      scroll?.(element);
    }
    this.root.setAttribute('data-seq', String(this.client.seq));
    this.root.setAttribute('data-task', task?.id ?? '');
  }

  /** Ticks the live durations once a second without re-rendering. */
  tick(): void {
    for (const element of this.root.querySelectorAll<HTMLElement>('.live-duration[data-since]')) {
      const base = Number(element.dataset.base ?? 0);
      const since = Date.parse(element.dataset.since ?? '');
      if (!Number.isNaN(since)) element.textContent = duration(base + Math.max(0, Date.now() - since));
    }
  }

  private renderEmpty(ctx: ViewContext): void {
    const empty = ctx.state.tasks.length === 0 && ctx.state.warnings.length === 0 && ctx.state.workspaceGates.length === 0;
    if (empty && !this.emptyShown) {
      this.emptyShown = h(
        'section',
        { class: 'box empty', 'data-section': 'empty' },
        h('h2', {}, 'Nothing has run yet'),
        h(
          'p',
          {},
          'Add a task, then start the autopilot: every iteration, its delegations, gate results and warnings show here as they happen.',
        ),
        h(
          'div',
          { class: 'actions' },
          button('Add Task', () => this.client.command('addTask'), { icon: 'add', focusKey: 'empty-add' }),
          button('Start Autopilot', () => this.client.command('startAutopilot'), {
            icon: 'run-all',
            secondary: true,
            focusKey: 'empty-start',
          }),
        ),
      );
      this.root.append(this.emptyShown);
    } else if (!empty && this.emptyShown) {
      this.emptyShown.remove();
      this.emptyShown = undefined;
    }
  }
}

/** Keeps the stream pinned to its end when it was at the end (or new). */
function streamScroll(previous: Element | undefined): (next: Element) => void {
  const list = previous?.querySelector('.stream-list');
  const atEnd = !list || list.scrollHeight - list.scrollTop - list.clientHeight < 24;
  const top = list?.scrollTop ?? 0;
  return (next) => {
    const nextList = next.querySelector('.stream-list');
    if (nextList) nextList.scrollTop = atEnd ? nextList.scrollHeight : top;
  };
}
