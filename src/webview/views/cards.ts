import type { ReceiptView } from '../../protocol/panelEvents';
import type { TaskView } from '../../protocol/panelState';
import type { PanelCommand } from '../../protocol/protocol';
import { button, h, icon } from '../dom';
import { duration, shortSha } from '../format';
import type { ViewContext } from './context';
import { collapsible } from './delegations';
import { signalChip } from './progressBox';
import { answerBox, reviewBox } from './person';

type Action = [label: string, command: PanelCommand, icon: string];

interface CardKind {
  glyph: string;
  title: string;
  tone: 'passed' | 'failed' | 'warning' | 'info' | 'muted';
  actions: Action[];
}

const RETRY: Action = ['Retry', 'retryTask', 'refresh'];
const EDIT: Action = ['Edit Task', 'editTask', 'edit'];
const CANCEL: Action = ['Cancel', 'cancelTask', 'close'];
const ROLLBACK: Action = ['Rollback', 'rollbackTask', 'discard'];
const REPORT: Action = ['Show Report', 'showReport', 'book'];
const CLEAN_UP: Action = ['Clean Up Worktree', 'cleanUpWorktree', 'trash'];
/** Statuses whose card shows even when the end was not seen live: the person is wanted. */
const WAITS_FOR_PERSON: ReadonlySet<TaskView['status']> = new Set(['needs_help', 'blocked', 'review']);
/** Ends whose kept worktree the card offers to clean up. */
const CLEANABLE: ReadonlySet<TaskView['status']> = new Set(['failed', 'timeout', 'halted', 'blocked', 'needs_help', 'cancelled']);

const KINDS: Partial<Record<TaskView['status'], CardKind>> = {
  done: { glyph: 'pass-filled', title: 'Task complete', tone: 'passed', actions: [REPORT, ROLLBACK] },
  timeout: {
    glyph: 'watch',
    title: 'Task timed out',
    tone: 'warning',
    actions: [RETRY, EDIT, ['Increase Limit', 'increaseMaxIterations', 'add'], ['Abandon', 'cancelTask', 'close']],
  },
  blocked: { glyph: 'circle-slash', title: 'Task blocked', tone: 'warning', actions: [['Unblock', 'unblockTask', 'unlock'], EDIT, CANCEL] },
  needs_help: {
    glyph: 'question',
    title: 'Task needs you',
    tone: 'info',
    actions: [['Unblock', 'unblockTask', 'unlock'], EDIT, ['Convene Bug Council', 'conveneCouncil', 'organization'], CANCEL],
  },
  failed: { glyph: 'error', title: 'Task failed', tone: 'failed', actions: [RETRY, EDIT, ROLLBACK, ['Open Log', 'showLog', 'output']] },
  halted: {
    glyph: 'debug-pause',
    title: 'Task halted',
    tone: 'warning',
    actions: [['Resume', 'runSelectedTask', 'debug-continue'], EDIT, ROLLBACK, CANCEL],
  },
  // the review box carries its actions (Show Changes, Approve, Request Changes, Reject)
  review: { glyph: 'git-pull-request-draft', title: 'Ready for review', tone: 'info', actions: [] },
  cancelled: { glyph: 'close', title: 'Task cancelled', tone: 'muted', actions: [RETRY, REPORT] },
};

function fact(label: string, value: HTMLElement | string): HTMLElement[] {
  return [h('dt', {}, label), h('dd', {}, value)];
}

/** The receipt's total on the card: the estimate (unknown stays unknown), the provider's own figure, tokens, failures. */
function costFacts(receipt: ReceiptView): HTMLElement[] {
  const t = receipt.total;
  const out = [...fact('Cost (est.)', t.cost)];
  if (t.providerCost !== '—') out.push(...fact('Provider-reported', t.providerCost));
  out.push(...fact('Tokens', `${t.tokens}, ${t.calls} call${t.calls === 1 ? '' : 's'}`));
  if (t.failures) out.push(...fact('Failed calls', t.failures));
  return out;
}

/** The receipt by role (orchestrator, sub-agents, council, compaction); the final report has it by model and iteration too. */
function receiptTable(receipt: ReceiptView): HTMLElement {
  return h(
    'table',
    { class: 'receipt', 'data-testid': 'receipt', 'aria-label': 'Cost by role' },
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', {}, 'Role'),
        h('th', {}, 'Calls'),
        h('th', {}, 'Tokens in / out'),
        h('th', {}, 'Est. cost'),
        h('th', {}, 'Provider-reported'),
      ),
    ),
    h(
      'tbody',
      {},
      ...receipt.byRole.map((line) =>
        h(
          'tr',
          { 'data-role': line.role },
          h('td', {}, line.role),
          h('td', {}, String(line.calls)),
          h('td', {}, line.tokens),
          h('td', {}, line.cost),
          h('td', {}, line.providerCost),
        ),
      ),
    ),
  );
}

/** The completion / timeout / blocked (… failed, halted, cancelled) card of a task that ended, with its actions. */
export function finishCard(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  // a task that waits for the person shows its card (and its answer or review box) also when this
  // window did not see it end (a reload, a run from the CLI): the store says why it waits
  const waits =
    task && WAITS_FOR_PERSON.has(task.status)
      ? { status: task.status, reason: task.blockedReason ?? '', iterations: task.iteration, time: task.updatedAt }
      : undefined;
  const finish = task?.finish && task.status === task.finish.status ? task.finish : waits;
  if (!task || !finish) return null;
  const kind = KINDS[finish.status];
  if (!kind) return null;
  const facts: HTMLElement[] = [
    ...fact('Task', `${task.id} ${task.title}`),
    ...fact('Duration', duration(task.elapsedMs)),
    ...fact('Iterations', `${finish.iterations}${finish.status === 'timeout' && task.maxIterations ? `/${task.maxIterations}` : ''}`),
  ];
  if (finish.status !== 'done') {
    facts.push(
      ...fact('Last progress', task.progress === undefined ? '—' : `${task.progress}%`),
      ...fact('Last signal', signalChip(task.lastSignal)),
    );
  }
  if (task.tests) facts.push(...fact('Tests', `${task.tests.passed}/${task.tests.total} passing`));
  if (task.check) facts.push(...fact('Check', h('code', { 'data-testid': 'card-check' }, task.check)));
  if (task.proof) facts.push(...fact('Proof', h('span', { 'data-testid': 'card-proof' }, task.proof)));
  if (task.lastCommit) facts.push(...fact('Commit', `${shortSha(task.lastCommit.sha)} "${task.lastCommit.message}"`));
  if (task.receipt) facts.push(...costFacts(task.receipt));
  const kept = task.worktree && CLEANABLE.has(finish.status) ? task.worktree : undefined;
  if (kept) facts.push(...fact('Worktree preserved', h('code', { 'data-testid': 'kept-worktree' }, kept)));
  const actions = kept ? [...kind.actions, CLEAN_UP] : kind.actions;
  const blocked = finish.status === 'blocked' || finish.status === 'needs_help' || finish.status === 'review';
  const heading = finish.status === 'blocked' ? 'Block reason' : finish.status === 'review' ? 'Why it waits' : 'Question';
  return h(
    'section',
    { class: `box card card-${kind.tone}`, 'aria-labelledby': 'card-heading', 'data-testid': 'finish-card', 'data-status': finish.status },
    h('h2', { id: 'card-heading', class: kind.tone }, icon(kind.glyph), ` ${kind.title}`),
    h('dl', { class: 'facts' }, ...facts),
    blocked
      ? h(
          'div',
          { class: 'reason-box', 'data-testid': 'reason' },
          h('strong', {}, heading),
          h('p', {}, task.blockedReason ?? finish.reason),
        )
      : h('p', {}, h('strong', {}, 'Reason: '), finish.reason),
    answerBox(ctx, task),
    reviewBox(ctx, task),
    task.receipt ? receiptTable(task.receipt) : undefined,
    finish.status === 'done' && task.gates.length > 0
      ? h(
          'ul',
          { class: 'checks', 'aria-label': 'Quality checks' },
          ...task.gates.map((g) =>
            h(
              'li',
              { class: g.passed ? 'passed' : 'failed' },
              icon(g.passed ? 'check' : 'close'),
              ` ${g.name}`,
              h('span', { class: 'muted' }, ` ${g.summary ?? ''}`),
            ),
          ),
        )
      : undefined,
    // with an answer or review box, its button is the main action; the card's are the others
    h(
      'div',
      { class: 'actions' },
      ...actions.map(([label, command, glyph], i) =>
        button(label, () => ctx.client.command(command, task.id), {
          icon: glyph,
          secondary: i > 0 || WAITS_FOR_PERSON.has(finish.status),
          focusKey: `card:${command}`,
        }),
      ),
    ),
  );
}

/** The final report's text, and a way to open it. */
export function report(ctx: ViewContext): HTMLElement | null {
  const task = ctx.task;
  const r = task?.report;
  if (!task || !r?.final || r.text === undefined) return null;
  return h(
    'section',
    { class: 'box report', 'aria-labelledby': 'report-heading' },
    h('h2', { id: 'report-heading' }, 'Final report'),
    collapsible(ctx, `report:${task.id}:${r.file}`, 'Report', r.file, false, h('pre', { class: 'text report-text' }, r.text)),
    h(
      'div',
      { class: 'actions' },
      button('Open in Preview', () => ctx.client.openFile(r.file), { icon: 'open-preview', secondary: true, focusKey: 'report-open' }),
    ),
  );
}

/** Recent errors (what "Review Errors" shows), for the task shown. */
export function errors(ctx: ViewContext): HTMLElement | null {
  const list = ctx.state.errors.filter((e) => !ctx.task || !e.taskId || e.taskId === ctx.task.id);
  if (list.length === 0) return null;
  return h(
    'section',
    { class: 'box errors', id: 'errors', 'aria-labelledby': 'errors-heading' },
    h('h2', { id: 'errors-heading' }, `Errors (${list.length})`),
    h('ul', {}, ...[...list].reverse().map((e) => h('li', { class: 'failed' }, icon('error'), ` ${e.message}`))),
  );
}
