import { z } from 'zod';
import { boundText } from '../util/bounded';

/**
 * What a task asked of a person, and the answer (DESIGN §7, Task `questions`): the NEEDS_HELP
 * question of its agent, a command the rules gate that nobody was there to approve, a merge
 * that waits on the person's working tree, the feedback of a review (Request Changes), and
 * whether tests still failing since the task's base are part of the task (`verdict`).
 * Answers are pinned in every later iteration's context, like the original request.
 */
export const QUESTION_KINDS = ['help', 'command', 'merge', 'review', 'verdict'] as const;
export type QuestionKind = (typeof QUESTION_KINDS)[number];

export const QuestionSchema = z.strictObject({
  /** `q1`, `q2`, … in the order asked. */
  id: z.string().regex(/^q\d+$/),
  kind: z.enum(QUESTION_KINDS).default('help'),
  question: z.string().min(1),
  askedAt: z.string(),
  /** The iteration that asked (absent for questions the queue or a review asked). */
  iteration: z.number().int().min(0).optional(),
  /** `command` questions: the exact command line waiting for approval. */
  command: z.string().optional(),
  /** `merge` questions: the person's files the merge would overwrite. */
  files: z.array(z.string()).optional(),
  /** `verdict` questions: the failing tests asked about (answered "unrelated", they become the task's `knownFailures`). */
  tests: z.array(z.string()).optional(),
  answer: z.string().optional(),
  answeredAt: z.string().optional(),
  /** `command` questions: the person approved that exact command for this task. */
  approved: z.boolean().optional(),
});
export type Question = z.infer<typeof QuestionSchema>;

/** The question still waiting for an answer (the last one asked), if any. */
export function openQuestion(questions: readonly Question[] | undefined): Question | undefined {
  const last = questions?.at(-1);
  return last && last.answer === undefined ? last : undefined;
}

/** Appends a question; an open question of the same text is not asked twice. */
export function withQuestion(questions: readonly Question[] | undefined, asked: Omit<Question, 'id'>): Question[] {
  const list = [...(questions ?? [])];
  const open = openQuestion(list);
  // a model wrote the question: what the task store keeps of it is bounded
  const question = boundText(asked.question);
  if (open && open.question === question && open.kind === asked.kind) return list;
  return [...list, { ...asked, question, id: `q${list.length + 1}` }];
}

/** Answers the open question (or records `answer` as a new entry of `kind` when none is open). */
export function withAnswer(
  questions: readonly Question[] | undefined,
  answer: { text: string; at: string; approved?: boolean; kind?: QuestionKind; question?: string },
): Question[] {
  const list = [...(questions ?? [])];
  const open = openQuestion(list);
  const answered = {
    answer: boundText(answer.text),
    answeredAt: answer.at,
    ...(answer.approved !== undefined ? { approved: answer.approved } : {}),
  };
  if (open && (answer.kind === undefined || answer.kind === open.kind)) {
    list[list.length - 1] = { ...open, ...answered };
    return list;
  }
  return [
    ...list,
    {
      id: `q${list.length + 1}`,
      kind: answer.kind ?? 'help',
      question: boundText(answer.question ?? '(no question asked)'),
      askedAt: answer.at,
      ...answered,
    },
  ];
}

/** Commands the person approved for this task (answered `command` questions). */
export function approvedCommands(questions: readonly Question[] | undefined): Set<string> {
  return new Set(
    (questions ?? []).filter((q) => q.kind === 'command' && q.approved === true && q.command !== undefined).map((q) => q.command!),
  );
}

/** The header of the pinned answers in an iteration's context. */
export const ANSWERS_HEADER = '[ANSWERS FROM THE PERSON — pinned]';

/**
 * The answered questions as the agent reads them: each question with its answer, oldest first.
 * Empty when nothing was answered. Pinned after the task's exact request (also after a compaction).
 */
export function pinnedAnswers(questions: readonly Question[] | undefined): string {
  const answered = (questions ?? []).filter((q) => q.answer !== undefined);
  if (answered.length === 0) return '';
  const lines = answered.map((q) => {
    if (q.kind === 'review') return `- Review of your finished work (${q.answeredAt}): changes requested:\n${indent(q.answer!)}`;
    if (q.kind === 'command')
      return `- You wanted to run \`${q.command ?? q.question}\`: ${q.approved ? 'approved — you may run exactly that command' : 'not approved — find another way'}${q.answer && !/^(yes|no|y|n|approved?|refused?)$/i.test(q.answer.trim()) ? `. The person said: ${q.answer}` : ''}`;
    return `- Q (${q.askedAt}${q.iteration ? `, iteration ${q.iteration}` : ''}): ${q.question}\n  A (${q.answeredAt}): ${q.answer}`;
  });
  return `${ANSWERS_HEADER}\n${lines.join('\n')}`;
}

function indent(text: string): string {
  return text.replace(/^/gm, '    ');
}
