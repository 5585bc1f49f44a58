import * as vscode from 'vscode';
import type { EventBus, EventOf, RalphEvent } from '../core/events';
import { runOutcomeLine } from '../core/loop/run/runSummary';
import { WARNING_ACTION_LABEL, type WarningAction, warningActions, warningIdOf } from '../protocol/panelState';
import { DisposableBase } from './disposableBase';
import type { ChannelLogger } from '../adapters/logger';
import type { WarningResponder } from './warningResponder';

export interface NotificationServices {
  bus: EventBus;
  logger: ChannelLogger;
  warnings: WarningResponder;
  /** The task's title, when the panel's model knows it. */
  titleOf(taskId: string): string | undefined;
}

type Show = (message: string, ...items: string[]) => Thenable<string | undefined>;

/** Per task end: the notification's kind and its actions (label → command run on the task). */
const FINISHED: Partial<Record<string, { show: 'info' | 'warning' | 'error'; actions: [string, string][] }>> = {
  done: {
    show: 'info',
    actions: [
      ['Show Report', 'ralph.showReport'],
      ['Open Progress Panel', 'ralph.openPanel'],
    ],
  },
  blocked: {
    show: 'warning',
    actions: [
      ['Answer…', 'ralph.answerTask'],
      ['Unblock', 'ralph.unblockTask'],
      ['Open Progress Panel', 'ralph.openPanel'],
    ],
  },
  needs_help: {
    show: 'warning',
    actions: [
      ['Answer…', 'ralph.answerTask'],
      ['Open Progress Panel', 'ralph.openPanel'],
    ],
  },
  review: {
    show: 'info',
    actions: [
      ['Show Changes', 'ralph.showChanges'],
      ['Approve', 'ralph.approveTask'],
      ['Open Progress Panel', 'ralph.openPanel'],
    ],
  },
  timeout: {
    show: 'warning',
    actions: [
      ['Retry', 'ralph.retryTask'],
      ['Increase Limit', 'ralph.increaseMaxIterations'],
      ['Open Progress Panel', 'ralph.openPanel'],
    ],
  },
  failed: {
    show: 'error',
    actions: [
      ['Retry', 'ralph.retryTask'],
      ['Open Progress Panel', 'ralph.openPanel'],
      ['Open Log', 'ralph.showLog'],
    ],
  },
  halted: {
    show: 'info',
    actions: [
      ['Resume', 'ralph.runSelectedTask'],
      ['Open Progress Panel', 'ralph.openPanel'],
    ],
  },
};

/** Commands run from a notification without the task id (Set API Key would take it for the key). */
const NO_TASK_ARGUMENT = new Set(['ralph.showLog', 'ralph.setApiKey']);

/**
 * Notifications for the moments a person should know about — warnings that want an answer,
 * a task's end (done, blocked, timed out, failed, halted), errors — each with its actions.
 * At most one notification per subject is open at a time, so a burst of events cannot flood
 * the editor with toasts.
 */
export class Notifications extends DisposableBase {
  private readonly open = new Set<string>();

  constructor(private readonly s: NotificationServices) {
    super();
    this.register(s.bus.subscribe((event) => this.onEvent(event)));
  }

  private onEvent(event: RalphEvent): void {
    if (event.type === 'warning') this.warning(event);
    else if (event.type === 'task.finished') this.finished(event);
    else if (event.type === 'error') this.error(event);
    else if (event.type === 'run.finished') this.summary(event);
  }

  /** One summary when a run ends: done / needs you / failed, with a way to the first question and to the review list. */
  private summary(event: EventOf<'run.finished'>): void {
    const o = event.outcome;
    if (!o || event.results.length === 0) return;
    const first = o.questions[0];
    const actions: [string, () => unknown][] = [];
    if (first) actions.push(['Answer First Question', () => vscode.commands.executeCommand('ralph.answerTask', first.taskId)]);
    if (o.reviews.length > 0) actions.push(['Show Review List', () => vscode.commands.executeCommand('ralph.showReviews')]);
    actions.push(['Open Progress Panel', () => vscode.commands.executeCommand('ralph.openPanel', first?.taskId)]);
    const needs = o.questions.length + o.reviews.length;
    const show =
      o.failed.length > 0
        ? vscode.window.showWarningMessage
        : needs > 0
          ? vscode.window.showWarningMessage
          : vscode.window.showInformationMessage;
    const text = `Ralph: run finished — ${runOutcomeLine(o)}${first ? `. ${first.taskId} asks: ${first.question}` : ''}`;
    this.once(
      'run.finished',
      show,
      text,
      actions.map(([label]) => label),
      (choice) => actions.find(([label]) => label === choice)?.[1](),
    );
  }

  private warning(event: EventOf<'warning'>): void {
    if (event.code === 'no-sandbox') return; // SandboxNotice says it, once, with what to do
    const actions = warningActions(event.code).filter((a) => a !== 'dismiss');
    const labels = actions.map((a) => WARNING_ACTION_LABEL[a]);
    const task = event.taskId ? ` (${event.taskId})` : '';
    this.once(
      `warning:${event.code}:${event.taskId ?? ''}`,
      vscode.window.showWarningMessage,
      `Ralph${task}: ${event.message}`,
      [...labels, 'Open Log'],
      (choice) => {
        if (choice === 'Open Log') return this.s.logger.channel.show(true);
        const action = actions.find((a) => WARNING_ACTION_LABEL[a] === choice) as WarningAction | undefined;
        if (action) void this.s.warnings.run(warningIdOf(event.runId, event.seq), action);
      },
    );
  }

  private finished(event: EventOf<'task.finished'>): void {
    const kind = FINISHED[event.status];
    if (!kind) return;
    const title = this.s.titleOf(event.taskId);
    const name = `${event.taskId}${title ? ` "${title}"` : ''}`;
    const text =
      event.status === 'done'
        ? `Ralph: ${name} is done after ${event.iterations} iteration${event.iterations === 1 ? '' : 's'}.`
        : `Ralph: ${name} ${event.status === 'needs_help' ? 'needs you' : event.status === 'review' ? 'is ready for your review' : event.status === 'timeout' ? 'timed out' : `is ${event.status}`} after ${event.iterations} iteration${event.iterations === 1 ? '' : 's'}: ${event.reason}`;
    const show =
      kind.show === 'info'
        ? vscode.window.showInformationMessage
        : kind.show === 'warning'
          ? vscode.window.showWarningMessage
          : vscode.window.showErrorMessage;
    // halted on a bad key: setting the key comes first
    const actions: [string, string][] = event.fault === 'auth' ? [['Set API Key', 'ralph.setApiKey'], ...kind.actions] : kind.actions;
    this.once(
      `finished:${event.taskId}`,
      show,
      text,
      actions.map(([label]) => label),
      (choice) => {
        const command = actions.find(([label]) => label === choice)?.[1];
        if (command) void vscode.commands.executeCommand(command, ...(NO_TASK_ARGUMENT.has(command) ? [] : [event.taskId]));
      },
    );
  }

  private error(event: EventOf<'error'>): void {
    this.once('error', vscode.window.showErrorMessage, `Ralph: ${event.message}`, ['Open Log'], (choice) => {
      if (choice) this.s.logger.channel.show(true);
    });
  }

  private once(key: string, show: Show, text: string, items: string[], answer: (choice: string | undefined) => unknown): void {
    if (this.open.has(key)) return;
    this.open.add(key);
    void Promise.resolve(show(text, ...items)).then(
      (choice) => {
        this.open.delete(key);
        answer(choice);
      },
      () => this.open.delete(key),
    );
  }
}
