import * as vscode from 'vscode';
import type { Task } from '../core/tasks/schema';
import { DisposableBase } from '../vscode/lifecycle';
import type { LiveStatus } from '../vscode/runController';

/** The status bar item; its text is derived from the live status and the task counts only. */
export class RalphStatusBar extends DisposableBase {
  private readonly item = this.register(vscode.window.createStatusBarItem('ralph.status', vscode.StatusBarAlignment.Left, 50));
  private live: LiveStatus = { state: 'idle' };
  private tasks: readonly Task[] = [];

  constructor() {
    super();
    this.item.name = 'Ralph Loop';
    this.render();
    this.item.show();
  }

  /** The text as shown, for tests and logs. */
  get text(): string {
    return this.item.text;
  }

  update(live: LiveStatus, tasks?: readonly Task[]): void {
    this.live = live;
    if (tasks) this.tasks = tasks;
    this.render();
  }

  private render(): void {
    const { live } = this;
    if (live.state !== 'idle') {
      const position = live.iteration ? ` ${live.iteration}/${live.maxIterations ?? '?'}` : '';
      const progress = live.progress !== undefined ? ` · ${live.progress}%` : '';
      const icon = live.state === 'stopping' ? '$(loading~spin)' : '$(sync~spin)';
      this.item.text = `${icon} Ralph${position}${progress}`;
      this.item.tooltip = live.state === 'stopping'
        ? 'Ralph Loop is stopping after the current step'
        : `Ralph Loop is running ${live.taskId ?? ''} ${live.title ?? ''}\nClick to show the log; use "Ralph: Stop" to stop.`;
      this.item.command = 'ralph.showLog';
      this.item.backgroundColor = undefined;
      return;
    }
    const todo = this.tasks.filter((t) => t.status === 'todo').length;
    const attention = this.tasks.filter((t) => t.status === 'blocked' || t.status === 'needs_help').length;
    this.item.text = attention > 0 ? `$(warning) Ralph · ${attention} need attention` : `$(debug-start) Ralph${todo ? ` · ${todo} to do` : ''}`;
    this.item.tooltip = attention > 0 ? 'Some tasks are blocked or need help' : 'Ralph Loop is idle. Click to start the autopilot.';
    this.item.command = 'ralph.startAutopilot';
    this.item.backgroundColor = attention > 0 ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
  }
}
