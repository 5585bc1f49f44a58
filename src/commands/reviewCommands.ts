/**
 * Manual review in the editor: Show Changes (VS Code's multi-file diff of exactly what would
 * land, what landed, or what a worktree holds), Approve, Request Changes (with line comments
 * from the diff), Reject, and the review list.
 */
import * as vscode from 'vscode';

import { RalphError } from '../core/errors';
import type { EventBus } from '../core/events';
import { EventEmitter } from '../core/events';
import type { GateRunner } from '../core/gates/types';
import type { CheckpointStore } from '../core/record/checkpoint';
import type { Ralph } from '../core/ralph';
import type { ReviewDesk } from '../core/review/reviewDesk';
import { SecretRedactor } from '../core/commands/secrets';
import type { ReviewComments } from '../ui/reviewComments';
import { changeTriples } from '../adapters/gitContentProvider';
import { resolveTask, say, type TaskCommandServices } from './taskCommands';

export interface ReviewCommandServices extends TaskCommandServices {
  /** The workspace's façade: the review desk comes from it. */
  ralph: Ralph;
  bus: EventBus;
  checkpoints: CheckpointStore;
  /** The editor's gate runner (Tasks API): an approval's re-check shows in the terminal panel like any gate. */
  gateRunner: GateRunner;
  comments: ReviewComments;
  redactor?: SecretRedactor;
}

/** The review desk, on the configuration as it is now. */
async function desk(s: ReviewCommandServices): Promise<ReviewDesk> {
  const emitter = new EventEmitter(`review-${Date.now().toString(36)}`, s.bus);
  const emit = (body: Parameters<EventEmitter['emit']>[0]) => void emitter.emit(body);
  const redactor = s.redactor ?? new SecretRedactor();
  return s.ralph.reviewDesk({ redactor, emit, gates: s.gateRunner });
}

/** Show Changes: what would land (review), what landed (done), or what its worktree holds now — any task. */
async function showChanges(s: ReviewCommandServices, arg?: unknown) {
  const picked = await resolveTask(s, arg, 'edit', 'Show the changes of which task?');
  if (!picked) return undefined;
  const changes = await (await desk(s)).changes(picked.id);
  if (changes.files.length === 0) {
    void say(changes.note ?? `${picked.id} has no changes to show.`);
    return changes;
  }
  if (changes.note) void say(changes.note);
  await vscode.commands.executeCommand('vscode.changes', changes.title, changeTriples(s.paths.workspace, changes));
  return changes;
}

/** Request Changes: the feedback (and the comments on the diff's lines) pinned in its agent's next context. */
async function requestChanges(s: ReviewCommandServices, arg?: unknown, text?: unknown) {
  const task = await resolveTask(s, arg, 'review', 'Request changes on which task?');
  if (!task) return undefined;
  const comments = s.comments.of(task.id);
  const feedback =
    typeof text === 'string'
      ? text
      : await s.prompts.input({
          title: `Ralph: Request Changes on ${task.id}`,
          prompt: `What should ${task.id} change? ${comments.length > 0 ? `(${comments.length} comment${comments.length === 1 ? '' : 's'} on the diff go with it)` : '(comment lines in Show Changes to point at them)'}`,
          placeHolder: 'e.g. keep the old flag working; add a test for the empty input',
          validateInput: (value) => (value.trim() || comments.length > 0 ? undefined : 'Say what to change (or press Escape)'),
        });
  if (feedback === undefined) return undefined;
  const updated = await (await desk(s)).requestChanges(task.id, feedback, comments);
  s.comments.clear(task.id);
  void say(
    `${task.id} goes back to its agent with your feedback${comments.length ? ` and ${comments.length} line comment${comments.length === 1 ? '' : 's'}` : ''} pinned; ${s.runs.running ? 'the run in progress picks it up' : 'the next Start resumes it'}.`,
  );
  return updated;
}

export function createReviewCommands(s: ReviewCommandServices) {
  return {
    showChanges: (arg?: unknown) => showChanges(s, arg),

    /** Approve: lands it (re-checked if the target moved); during a run, that run's queue lands it. */
    approveTask: async (arg?: unknown) => {
      const task = await resolveTask(s, arg, 'review', 'Approve which task?');
      if (!task) return undefined;
      const reviews = await desk(s);
      const outcome = s.runs.running
        ? await reviews.approve(task.id, { runInProgress: true })
        : await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `Ralph: landing ${task.id}` }, () =>
            reviews.approve(task.id),
          );
      s.comments.clear(task.id);
      if (outcome.kind === 'landed' || outcome.kind === 'queued') void say(outcome.message);
      else void vscode.window.showWarningMessage(`Ralph: ${outcome.message}`);
      s.worktreeChanged(task.id);
      return outcome;
    },

    requestChanges: (arg?: unknown, text?: unknown) => requestChanges(s, arg, text),

    /** Reject: its branch and worktree are dropped (like Rollback of an unmerged task); the task is cancelled. */
    rejectTask: async (arg?: unknown, confirmed?: unknown) => {
      const task = await resolveTask(s, arg, 'review', 'Reject which task?');
      if (!task) return undefined;
      const yes =
        confirmed === true ||
        (await s.prompts.confirm(
          `Reject ${task.id} "${task.title}"?`,
          `Its checked result, its branch ralph/${task.id} and its worktree are dropped; nothing of it lands. The task is cancelled (Retry starts it over).`,
          'Reject',
        ));
      if (!yes) return undefined;
      const updated = await (await desk(s)).reject(task.id);
      s.comments.clear(task.id);
      s.worktreeChanged(task.id);
      void say(`${task.id} is rejected: its branch and worktree are gone.`);
      return updated;
    },

    /** The review list: every task waiting for review; the chosen one's changes open. */
    showReviews: async () => {
      const items = await (await desk(s)).list();
      if (items.length === 0) {
        void say('nothing waits for review.');
        return undefined;
      }
      const picked = await s.prompts.pickTask(
        items.map((i) => i.task),
        `${items.length} task${items.length === 1 ? '' : 's'} to review — pick one to see its changes`,
      );
      if (!picked) return undefined;
      if (picked.status !== 'review') throw new RalphError(`${picked.id} no longer waits for review`, 'invalid-transition');
      return vscode.commands.executeCommand('ralph.showChanges', picked.id);
    },
  };
}
