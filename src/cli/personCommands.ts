import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ConfigError, errorMessage, RalphError } from '../core/errors';
import { conveneCouncilOnDemand } from '../core/escalation/councilOnDemand';
import { formatEvent } from '../core/eventFormat';
import type { TaskActions } from '../core/record/actions';
import { openRalph, type Ralph } from '../core/ralph';
import type { ReviewItem } from '../core/review/reviewDesk';
import { unifiedDiff } from '../core/review/taskChanges';
import { redactorFor } from '../core/commands/secrets';
import { openQuestion } from '../core/tasks/questions';
import type { TaskStore } from '../core/tasks/store';
import { cliModels } from './cliModels';
import type { CliIo } from './io';
import { actAsJson } from './jsonResult';
import type { PersonCommand } from './command';

/** Exit codes, as the task actions' (the verbs' definition, verbSpec.ts EXITS, says the same). */
export const PERSON_EXIT = { ok: 0, notDone: 1, usage: 2, notConfirmed: 4 } as const;

const USAGE_CODES = new Set([
  'task-not-found',
  'invalid-transition',
  'invalid-answer',
  'no-history',
  'no-review-hold',
  'config',
  'unknown-dependency',
  'invalid-task',
]);

/** Runs `ralph task answer|council` and `ralph review …`. */
export async function runPersonCommand(command: PersonCommand, io: CliIo): Promise<number> {
  const stat = await fs.stat(command.workspace).catch(() => undefined);
  if (!stat?.isDirectory()) {
    io.err(`ralph: workspace "${command.workspace}" is not a directory`);
    return PERSON_EXIT.usage;
  }
  const ralph = openRalph(path.resolve(command.workspace));
  if ('json' in command && command.json && 'taskId' in command)
    return actAsJson({ ...command, action: command.kind }, io, (quiet) => execute(command, ralph, quiet), exitOf);
  try {
    return await execute(command, ralph, io);
  } catch (error) {
    io.err(`ralph: ${errorMessage(error)}`);
    return exitOf(error);
  }
}

function exitOf(error: unknown): number {
  if (error instanceof ConfigError || (error instanceof RalphError && USAGE_CODES.has(error.code))) return PERSON_EXIT.usage;
  return PERSON_EXIT.notDone;
}

async function execute(command: PersonCommand, ralph: Ralph, io: CliIo): Promise<number> {
  const { paths, store, checkpoints } = ralph;
  switch (command.kind) {
    case 'task.answer':
      return answer(command, ralph.actions, store, io);
    case 'task.council': {
      const { config, model, dispose } = await ralph.model(cliModels(paths.config, 'use Convene Bug Council there'));
      try {
        const plan = await conveneCouncilOnDemand(
          { config, model, store, checkpoints, emit: (body) => printEvent(io, body) },
          command.taskId,
          command.note,
        );
        io.out(`bug council plan for ${command.taskId} (handed to its next iteration):\n${plan}`);
      } finally {
        dispose();
      }
      return PERSON_EXIT.ok;
    }
    default:
      return review(command, ralph, io);
  }
}

async function answer(
  command: Extract<PersonCommand, { kind: 'task.answer' }>,
  actions: TaskActions,
  store: TaskStore,
  io: CliIo,
): Promise<number> {
  const task = await store.get(command.taskId);
  const question = openQuestion(task.questions);
  let { text, approved } = command;
  let verdict = command.verdict;
  if (text === undefined && approved === undefined && verdict === undefined) {
    const flags =
      question?.kind === 'command'
        ? ' (or --approve / --refuse)'
        : question?.kind === 'verdict'
          ? ' (or --part-of-task / --unrelated)'
          : '';
    if (!io.ask)
      throw new RalphError(`no answer given and stdin is not a terminal: ralph task answer ${task.id} "<text>"${flags}`, 'invalid-answer');
    io.err(`${task.id} asks: ${question?.question ?? task.blockedReason ?? '(no question recorded)'}`);
    if (question?.kind === 'command' && io.confirm) approved = await io.confirm(`Approve \`${question.command}\` for ${task.id}? [y/N] `);
    if (question?.kind === 'verdict' && io.confirm)
      verdict = (await io.confirm(`Are these tests unrelated to ${task.id}, so that it may land with them failing? [y/N] `))
        ? 'unrelated'
        : 'part';
    const decided = approved !== undefined || verdict !== undefined;
    text = (await io.ask(decided ? 'Anything to tell the agent (empty: nothing)? ' : 'Your answer: ')) ?? '';
    if (!text.trim() && !decided) {
      io.err('no answer; nothing was changed');
      return PERSON_EXIT.notConfirmed;
    }
  }
  const updated = await actions.answer(task.id, text ?? '', {
    ...(approved !== undefined ? { approved } : {}),
    ...(verdict !== undefined ? { verdict } : {}),
  });
  io.out(
    `${task.id} is answered; it resumes ${updated.status === 'halted' ? 'from its checkpoint' : 'from the start'} with your answer pinned: ralph run (or ralph run --task ${task.id})`,
  );
  return PERSON_EXIT.ok;
}

async function review(command: Exclude<PersonCommand, { kind: 'task.answer' | 'task.council' }>, ralph: Ralph, io: CliIo): Promise<number> {
  const { paths, store } = ralph;
  const config = await ralph.config.load();
  const redactor = redactorFor(process.env, { keyVariables: [config.llm.apiKeyEnv], passThrough: [] });
  const desk = await ralph.reviewDesk({ redactor, emit: (body) => printEvent(io, body) });
  switch (command.kind) {
    case 'review.list':
      printReviewList(await desk.list(), command.json, io);
      return PERSON_EXIT.ok;
    case 'review.diff': {
      const changes = await desk.changes(command.taskId);
      io.err(
        `${changes.title}${changes.note ? ` — ${changes.note}` : ''} (${changes.files.length} file${changes.files.length === 1 ? '' : 's'})`,
      );
      if (command.stat) for (const f of changes.files) io.out(`${f.status.padEnd(8)} ${f.path}`);
      else {
        const text = await unifiedDiff(paths.workspace, changes);
        if (text) io.out(text.replace(/\n$/, ''));
      }
      return PERSON_EXIT.ok;
    }
    case 'review.approve': {
      const outcome = await desk.approve(command.taskId);
      (outcome.kind === 'landed' || outcome.kind === 'queued' ? io.out : io.err)(outcome.message);
      return outcome.kind === 'landed' || outcome.kind === 'queued' ? PERSON_EXIT.ok : PERSON_EXIT.notDone;
    }
    case 'review.changes': {
      const task = await desk.requestChanges(command.taskId, command.text);
      io.out(
        `${task.id} goes back to its agent with your feedback pinned; it resumes ${task.status === 'halted' ? 'in its worktree' : 'from the start'} at the next run (ralph run)`,
      );
      return PERSON_EXIT.ok;
    }
    case 'review.reject': {
      const task = await store.get(command.taskId);
      const detail = `Its held result, its branch ralph/${task.id} and its worktree are dropped; nothing of it lands. The task is cancelled (Retry starts it over).`;
      if (!command.yes) {
        if (!io.confirm) {
          io.err(
            `ralph: review reject ${task.id} needs confirmation and stdin is not a terminal; nothing was changed.\n  ${detail}\nRun it again with --yes to confirm.`,
          );
          return PERSON_EXIT.notConfirmed;
        }
        if (!(await io.confirm(`Reject ${task.id} "${task.title}"?\n  ${detail}\nContinue? [y/N] `))) {
          io.err('not confirmed; nothing was changed');
          return PERSON_EXIT.notConfirmed;
        }
      }
      await desk.reject(task.id);
      io.out(`${task.id} is rejected: its branch and worktree are gone and the task is cancelled`);
      return PERSON_EXIT.ok;
    }
  }
}

/** `ralph review list`: what waits for review, as JSON or a line per task with the verbs that act on it. */
function printReviewList(items: ReviewItem[], json: boolean, io: CliIo): void {
  if (json) {
    io.out(
      JSON.stringify(
        items.map((i) => ({
          id: i.task.id,
          title: i.task.title,
          target: i.hold?.target,
          base: i.hold?.base,
          result: i.hold?.result,
          gates: i.hold?.gates ?? [],
          reason: i.hold?.reason ?? i.task.blockedReason,
          files: i.hold?.files,
          heldAt: i.hold?.heldAt,
        })),
        null,
        2,
      ),
    );
    return;
  }
  if (items.length === 0) io.out('nothing waits for review');
  for (const { task, hold } of items) {
    const gates = hold?.gates.length
      ? ` · merged check: ${hold.gates.map((g) => `${g.name} ${g.passed ? 'passed' : 'FAILED'}`).join(', ')}`
      : '';
    io.out(
      `${task.id}  ${task.title}  → ${hold?.target ?? '?'}${gates}\n  ${hold?.reason ?? task.blockedReason ?? ''}\n  ralph review diff ${task.id} · ralph review approve ${task.id} · ralph review changes ${task.id} "<text>" · ralph review reject ${task.id}`,
    );
  }
}

function printEvent(io: CliIo, body: Parameters<typeof formatEvent>[0] | Record<string, unknown>): void {
  const line = formatEvent({ ...(body as object), runId: '', seq: 0, time: new Date().toISOString() } as Parameters<typeof formatEvent>[0]);
  if (line) io.err(line);
}
