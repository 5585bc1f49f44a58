/**
 * What the panel offers the person: the answer box of a task's question (NEEDS_HELP, a block,
 * a gated command nobody could approve) with the questions answered before, and the review box
 * of a task whose checked work waits for them (Show Changes, Approve, Request Changes, Reject).
 */
import type { QuestionView, TaskView } from '../../protocol/panelState';
import { button, h, icon } from '../dom';
import { clock } from '../format';
import type { ViewContext } from './context';

/** The value of a `vscode-textarea` (or a plain one), trimmed. */
function textOf(element: Element | null): string {
  return String((element as { value?: unknown } | null)?.value ?? '').trim();
}

function textarea(label: string, placeholder: string, testId: string): HTMLElement {
  return h('vscode-textarea', {
    'aria-label': label,
    placeholder,
    rows: 3,
    resize: 'vertical',
    class: 'answer-text',
    'data-testid': testId,
    'data-focus-key': testId,
  });
}

/** The questions answered before (the last few), oldest first. */
function history(questions: readonly QuestionView[]): HTMLElement | undefined {
  const answered = questions.filter((q) => q.answer !== undefined);
  if (answered.length === 0) return undefined;
  return h(
    'ul',
    { class: 'qa-history', 'aria-label': 'Questions answered before' },
    ...answered.map((q) =>
      h(
        'li',
        {},
        h('span', { class: 'muted' }, `${q.kind === 'review' ? 'Review' : 'Q'} · ${clock(q.askedAt)}: `),
        q.kind === 'review' ? 'changes requested' : q.question,
        h(
          'div',
          { class: 'qa-answer' },
          icon('reply'),
          ` ${q.kind === 'command' ? (q.approved ? 'approved' : 'refused') + (q.answer && !/^(not )?approved$/.test(q.answer) ? ` — ${q.answer}` : '') : q.answer}`,
        ),
      ),
    ),
  );
}

/** The answer box of a task that needs the person: its open question and a way to answer it. */
export function answerBox(ctx: ViewContext, task: TaskView): HTMLElement | undefined {
  if (task.status !== 'needs_help' && task.status !== 'blocked') return undefined;
  const questions = task.questions ?? [];
  const open = questions.at(-1)?.answer === undefined ? questions.at(-1) : undefined;
  const command = open?.kind === 'command' ? open.command : undefined;
  const verdict = open?.kind === 'verdict';
  const choice = command !== undefined || verdict;
  const field = textarea(
    choice ? 'Anything to tell the agent' : `Your answer to ${task.id}`,
    choice ? 'Optional: what to tell the agent' : "Your answer — pinned in the agent's next iteration",
    'answer-text',
  );
  const send = (approved?: boolean, said?: 'part' | 'unrelated') => {
    const text = textOf(field);
    if (!text && approved === undefined && said === undefined) {
      field.setAttribute('invalid', '');
      (field as HTMLElement).focus();
      return;
    }
    ctx.client.answer(task.id, text, approved, said);
  };
  const buttons = command
    ? [
        button('Approve and Resume', () => send(true), { icon: 'check', focusKey: 'answer:approve' }),
        button('Refuse', () => send(false), { icon: 'close', secondary: true, focusKey: 'answer:refuse' }),
      ]
    : verdict
      ? [
          button('Part of This Task', () => send(undefined, 'part'), { icon: 'tools', focusKey: 'answer:part' }),
          button('Unrelated: Land Without Them', () => send(undefined, 'unrelated'), {
            icon: 'check',
            secondary: true,
            focusKey: 'answer:unrelated',
          }),
        ]
      : [button('Answer and Resume', () => send(), { icon: 'reply', focusKey: 'answer:send' })];
  return h(
    'div',
    { class: 'answer-box', 'data-testid': 'answer-box', role: 'group', 'aria-label': `Answer ${task.id}` },
    h(
      'strong',
      {},
      command
        ? 'The agent wants to run a command nobody could approve during the run'
        : verdict
          ? 'Tests failing since the task began: part of this task?'
          : task.status === 'blocked'
            ? 'What would unblock it?'
            : 'Answer the question',
    ),
    command ? h('pre', { class: 'text command-line' }, command) : undefined,
    verdict && open ? h('p', { class: 'text', 'data-testid': 'verdict-question' }, open.question) : undefined,
    history(questions),
    field,
    h('div', { class: 'actions' }, ...buttons),
  );
}

/** The review box of a task whose checked work waits for the person. */
export function reviewBox(ctx: ViewContext, task: TaskView): HTMLElement | undefined {
  if (task.status !== 'review') return undefined;
  const entry = ctx.state.queue.find((q) => q.taskId === task.id && q.state === 'review');
  const gates = entry?.gates ?? task.reviewHold?.gates ?? [];
  const files = entry?.files ?? task.reviewHold?.files ?? [];
  const field = textarea(
    `What ${task.id} should change`,
    'What to change — sent back to its agent, pinned in its next context',
    'review-text',
  );
  const requestChanges = () => {
    const text = textOf(field);
    if (!text) {
      field.setAttribute('invalid', '');
      (field as HTMLElement).focus();
      return;
    }
    ctx.client.requestChanges(task.id, text);
  };
  return h(
    'div',
    { class: 'review-box', 'data-testid': 'review-box', role: 'group', 'aria-label': `Review ${task.id}` },
    gates.length > 0
      ? h(
          'ul',
          { class: 'checks', 'aria-label': `Merged check of ${task.id}` },
          ...gates.map((g) =>
            h(
              'li',
              { class: g.passed ? 'passed' : 'failed' },
              icon(g.passed ? 'check' : 'close'),
              ` ${g.name}`,
              h('span', { class: 'muted' }, ` ${g.summary}`),
            ),
          ),
        )
      : undefined,
    files.length > 0
      ? h('p', { class: 'warning' }, icon('warning'), ` Your uncommitted changes are in the way: ${files.join(', ')}`)
      : undefined,
    h(
      'div',
      { class: 'actions' },
      button('Show Changes', () => ctx.client.command('showChanges', task.id), { icon: 'diff-multiple', focusKey: 'review:show' }),
      button('Approve', () => ctx.client.command('approveTask', task.id), { icon: 'check', secondary: true, focusKey: 'review:approve' }),
      button('Reject', () => ctx.client.command('rejectTask', task.id), { icon: 'trash', secondary: true, focusKey: 'review:reject' }),
    ),
    field,
    h(
      'div',
      { class: 'actions' },
      button('Request Changes', requestChanges, { icon: 'comment-discussion', secondary: true, focusKey: 'review:changes' }),
    ),
  );
}
