/**
 * The person's commands on a task: Answer… (the question a task asked), Convene Bug Council,
 * and the ways on from a merge that waits on the person's own files (Open Files, Retry Now,
 * Keep on Its Branch). The argument is a tree node, a task id, or nothing (then the person picks).
 */
import * as path from 'node:path';
import * as vscode from 'vscode';
import { errorMessage, RalphError } from '../core/errors';
import { conveneCouncilOnDemand } from '../core/escalation/councilOnDemand';
import { EventEmitter } from '../core/events';
import type { EventBus } from '../core/events';
import type { CheckpointStore } from '../core/record/checkpoint';
import type { VerdictAnswer } from '../core/record/actions';
import { openQuestion } from '../core/tasks/questions';
import type { Task } from '../core/tasks/schema';
import type { LiveStatus } from '../ui/liveStatus';
import { resolveTask, say, type TaskCommandServices, taskIdOf } from './taskCommands';

export interface PersonCommandServices extends TaskCommandServices {
  bus: EventBus;
  checkpoints: CheckpointStore;
  /** The merge queue's entries as the run last reported them (the files a waiting merge names). */
  live(): LiveStatus;
}

/** What the person answered: words, an approval of a command, or whether failing tests are part of the task. */
interface Answer {
  text?: string;
  approved?: boolean;
  verdict?: VerdictAnswer;
}

/** The answer given by the panel's answer box (`text`, `options.approved`, `options.verdict`), when it gave one. */
function givenAnswer(text: unknown, options: unknown): Answer {
  const o = typeof options === 'object' && options !== null ? (options as { approved?: unknown; verdict?: unknown }) : {};
  return {
    ...(typeof text === 'string' ? { text } : {}),
    ...(typeof o.approved === 'boolean' ? { approved: o.approved } : {}),
    ...(o.verdict === 'part' || o.verdict === 'unrelated' ? { verdict: o.verdict } : {}),
  };
}

/** Asks the person: a command's approval, or whether the failing tests are part of the task, then the words (optional after a choice). */
async function askAnswer(s: PersonCommandServices, task: Task): Promise<Answer | undefined> {
  const question = openQuestion(task.questions);
  const asked: Answer = {};
  if (question?.kind === 'command') {
    const choice = await s.prompts.choose(`${task.id} wants to run \`${question.command}\``, [
      { id: 'approve', label: '$(check) Approve', detail: 'Exactly this command may run for this task; the task resumes.' },
      { id: 'refuse', label: '$(close) Refuse', detail: 'The agent is told to find another way; the task resumes.' },
    ]);
    if (!choice) return undefined;
    asked.approved = choice === 'approve';
  }
  if (question?.kind === 'verdict') {
    const tests = (question.tests ?? []).map((t) => `\`${t}\``).join(', ');
    const choice = await s.prompts.choose(`${task.id}: are ${tests} part of this task?`, [
      { id: 'part', label: '$(tools) Part of this task', detail: 'The agent goes on until these tests pass.' },
      {
        id: 'unrelated',
        label: '$(check) Unrelated: land without them',
        detail: 'They become known failures of this task; it may finish with them red.',
      },
    ]);
    if (!choice) return undefined;
    asked.verdict = choice === 'unrelated' ? 'unrelated' : 'part';
  }
  const decided = asked.approved !== undefined || asked.verdict !== undefined;
  const text = await s.prompts.input({
    title: `Ralph: Answer ${task.id}`,
    prompt: `${question?.question ?? task.blockedReason ?? 'The task needs you.'}${decided ? ' (optional: anything to tell the agent)' : ''}`,
    placeHolder: "Your answer — pinned in the agent's next iteration",
    validateInput: (value) => (value.trim() || decided ? undefined : 'Type an answer (or press Escape)'),
  });
  return text === undefined ? undefined : { ...asked, text };
}

/**
 * Answer…: the answer joins the task's question history, is pinned in its next iteration's
 * context, and the task is ready again (a running autopilot picks it up; else the next Start).
 * `text` and `options` (`approved`, `verdict`) come from the panel's answer box; without them it asks.
 */
async function answerTask(s: PersonCommandServices, arg?: unknown, text?: unknown, options?: unknown) {
  const task = await resolveTask(s, arg, 'answer', 'Answer which task?');
  if (!task) return undefined;
  const given = givenAnswer(text, options);
  const answer = given.text !== undefined || given.approved !== undefined || given.verdict !== undefined ? given : await askAnswer(s, task);
  if (!answer) return undefined;
  const updated = await s.actions.answer(task.id, answer.text ?? '', {
    ...(answer.approved !== undefined ? { approved: answer.approved } : {}),
    ...(answer.verdict !== undefined ? { verdict: answer.verdict } : {}),
  });
  if (s.runs.running) void say(`${task.id} is answered; the run in progress picks it up.`);
  else
    void say(`${task.id} is answered; it resumes from its checkpoint with your answer pinned.`, 'Run It Now', 'Start Autopilot').then(
      (choice) => {
        if (choice === 'Run It Now') void vscode.commands.executeCommand('ralph.runSelectedTask', task.id);
        if (choice === 'Start Autopilot') void vscode.commands.executeCommand('ralph.startAutopilot');
      },
    );
  return updated;
}

/** Convene Bug Council: the analysts read the task's history; the plan is its next iteration's first feedback. */
async function conveneCouncil(s: PersonCommandServices, arg?: unknown) {
  const task = await resolveTask(s, arg, 'council', 'Convene the bug council on which task?');
  if (!task) return undefined;
  const note = await s.prompts.input({
    title: `Ralph: Bug council on ${task.id}`,
    prompt: 'Anything the analysts should look at? (optional)',
    placeHolder: 'e.g. the config loading in src/config.ts',
  });
  if (note === undefined) return undefined;
  const { config, model, dispose } = await s.runs.modelOutsideRun();
  const emitter = new EventEmitter(`council-${Date.now().toString(36)}`, s.bus);
  try {
    const plan = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Ralph: the bug council looks at ${task.id}` },
      () =>
        conveneCouncilOnDemand(
          { config, model, store: s.store, checkpoints: s.checkpoints, emit: (body) => void emitter.emit(body) },
          task.id,
          note,
        ),
    );
    void say(`the bug council's plan is handed to ${task.id}'s next iteration.`, 'Open Progress Panel').then((choice) => {
      if (choice) void vscode.commands.executeCommand('ralph.openPanel', task.id);
    });
    return plan;
  } finally {
    dispose();
  }
}

export function createPersonCommands(s: PersonCommandServices) {
  const waiting = (taskId: string) => s.live().queue?.find((q) => q.taskId === taskId && q.state === 'waiting');
  return {
    answerTask: (arg?: unknown, text?: unknown, options?: unknown) => answerTask(s, arg, text, options),

    conveneCouncil: (arg?: unknown) => conveneCouncil(s, arg),

    /** Retry Now: merges that wait on the person's own files are tried again at once. */
    retryMerge: async () => {
      if (!s.runs.retryWaitingMerges()) throw new RalphError('no run is going: a merge only waits while a run holds it', 'not-running');
      return true;
    },

    /** Keep on Its Branch: the waiting merge stops waiting; its checked result waits for review instead. */
    keepOnBranch: async (arg?: unknown) => {
      const taskId = taskIdOf(arg) ?? s.live().queue?.find((q) => q.state === 'waiting')?.taskId;
      if (!taskId) throw new RalphError('no merge waits on your files', 'not-waiting');
      if (!s.runs.keepOnBranch(taskId)) throw new RalphError('no run is going: a merge only waits while a run holds it', 'not-running');
      void say(`${taskId} stops waiting: its checked result waits for your review (Ready for review).`);
      return true;
    },

    /** Open Files: the person's files a waiting merge would overwrite. */
    openWaitingFiles: async (arg?: unknown) => {
      const taskId = taskIdOf(arg) ?? s.live().queue?.find((q) => q.state === 'waiting')?.taskId;
      const entry = taskId ? waiting(taskId) : undefined;
      const files = entry?.files ?? [];
      if (files.length === 0) {
        void say(taskId ? `the merge of ${taskId} does not wait on any of your files.` : 'no merge waits on your files.');
        return [];
      }
      for (const file of files) {
        try {
          await vscode.window.showTextDocument(vscode.Uri.file(path.join(s.paths.workspace, file)), { preview: false });
        } catch (error) {
          void vscode.window.showWarningMessage(`Ralph: could not open ${file}: ${errorMessage(error)}`);
        }
      }
      return files;
    },
  };
}
