import * as vscode from 'vscode';
import type { Task } from '../core/tasks/schema';

/**
 * The questions commands ask a person: a port, so the integration tests (which cannot click a
 * modal dialog from inside the extension host) can answer them through the extension's API.
 */
export interface Prompts {
  /** A modal confirmation; true only when `action` was chosen. */
  confirm(message: string, detail: string, action: string): Promise<boolean>;
  input(options: vscode.InputBoxOptions): Promise<string | undefined>;
  pickTask(tasks: readonly Task[], placeHolder: string): Promise<Task | undefined>;
  /** One of a few options (a quick pick); undefined when dismissed. */
  choose<T extends string>(placeHolder: string, options: readonly Choice<T>[]): Promise<T | undefined>;
  /** A warning notification with actions (not modal); the action chosen, undefined when dismissed. */
  warn(message: string, actions: readonly string[]): Promise<string | undefined>;
}

export interface Choice<T extends string> {
  id: T;
  label: string;
  detail?: string;
}

export const vscodePrompts: Prompts = {
  async confirm(message, detail, action) {
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, action);
    return choice === action;
  },
  input: (options) => Promise.resolve(vscode.window.showInputBox({ ignoreFocusOut: true, ...options })),
  async pickTask(tasks, placeHolder) {
    const picked = await vscode.window.showQuickPick(
      tasks.map((task) => ({ label: task.title, description: `${task.id} · ${task.status.replace('_', ' ')}`, task })),
      { placeHolder },
    );
    return picked?.task;
  },
  async choose(placeHolder, options) {
    const picked = await vscode.window.showQuickPick(
      options.map((o) => ({ label: o.label, detail: o.detail, id: o.id })),
      { placeHolder, ignoreFocusOut: true },
    );
    return picked?.id;
  },
  warn: (message, actions) => Promise.resolve(vscode.window.showWarningMessage(message, ...actions)),
};

/** The prompts in use: VS Code's, unless a test put its own in place for a while. */
export class PromptsSlot implements Prompts {
  private current: Prompts = vscodePrompts;

  use(prompts: Partial<Prompts>): vscode.Disposable {
    const previous = this.current;
    this.current = { ...previous, ...prompts };
    return new vscode.Disposable(() => {
      this.current = previous;
    });
  }

  confirm(message: string, detail: string, action: string): Promise<boolean> {
    return this.current.confirm(message, detail, action);
  }
  input(options: vscode.InputBoxOptions): Promise<string | undefined> {
    return this.current.input(options);
  }
  pickTask(tasks: readonly Task[], placeHolder: string): Promise<Task | undefined> {
    return this.current.pickTask(tasks, placeHolder);
  }
  choose<T extends string>(placeHolder: string, options: readonly Choice<T>[]): Promise<T | undefined> {
    return this.current.choose(placeHolder, options);
  }
  warn(message: string, actions: readonly string[]): Promise<string | undefined> {
    return this.current.warn(message, actions);
  }
}
