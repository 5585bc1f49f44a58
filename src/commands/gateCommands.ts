import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { ConfigService } from '../core/config/service';
import { EventEmitter, type EventBus } from '../core/events';
import { runGates } from '../core/gates/runGates';
import type { GateReport, GateRunner } from '../core/gates/types';
import type { RalphPaths } from '../core/paths';
import type { Task } from '../core/tasks/schema';
import type { TaskStore } from '../core/tasks/store';
import { TaskNode } from '../ui/taskTree';
import type { ChannelLogger } from '../adapters/logger';

export interface GateCommandServices {
  paths: RalphPaths;
  /** The workspace's one ConfigService (the façade's, core/ralph.ts). */
  config: ConfigService;
  store: TaskStore;
  bus: EventBus;
  gateRunner: GateRunner;
  logger: ChannelLogger;
}

/** *Ralph: Run Quality Gates*: every configured gate as a VS Code task, under a cancellable progress notification. */
export async function runQualityGates(s: GateCommandServices): Promise<GateReport | undefined> {
  const config = await s.config.load();
  if (config.gates.length === 0) {
    const choice = await vscode.window.showInformationMessage(
      'Ralph: no quality gates are configured in .ralph/config.json.',
      'Open Configuration',
    );
    if (choice) await vscode.commands.executeCommand('ralph.openConfig');
    return undefined;
  }
  const emitter = new EventEmitter(`gates-${Date.now()}`, s.bus);
  const report = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: 'Ralph: running quality gates', cancellable: true },
    async (progress, token) => {
      const abort = new AbortController();
      const cancel = token.onCancellationRequested(() => abort.abort());
      try {
        let done = 0;
        return await runGates({
          gates: config.gates,
          runner: s.gateRunner,
          cwd: s.paths.workspace,
          signal: abort.signal,
          emit: (body) => {
            emitter.emit(body);
            if (body.type === 'gate.started') progress.report({ message: `${body.gate} (${done + 1}/${config.gates.length})` });
            if (body.type === 'gate.finished') {
              progress.report({ increment: 100 / config.gates.length, message: `${body.gate}: ${body.passed ? 'passed' : 'failed'}` });
              done++;
            }
          },
        });
      } finally {
        cancel.dispose();
      }
    },
  );
  const passed = report.outcomes.filter((o) => o.passed).length;
  const failed = report.outcomes.filter((o) => !o.passed).map((o) => `${o.name} (${o.summary})`);
  const text = `Ralph: ${passed}/${report.outcomes.length} gates passed${failed.length ? ` — failing: ${failed.join('; ')}` : ''}.`;
  const show = report.requiredPassed ? vscode.window.showInformationMessage : vscode.window.showWarningMessage;
  void show(text, 'Open Log').then((choice) => {
    if (choice) s.logger.channel.show(true);
  });
  return report;
}

/** *Ralph: Show Report*: the task's final report (else its latest iteration report) in the Markdown preview. */
export async function showReport(s: GateCommandServices, node: unknown): Promise<string | undefined> {
  const task = node instanceof TaskNode ? node.task : await pickTaskWithReport(s);
  if (!task) return undefined;
  const file = await latestReport(s.paths, task.id);
  if (!file) {
    void vscode.window.showInformationMessage(`Ralph: ${task.id} has no report yet; reports are written after each iteration.`);
    return undefined;
  }
  await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(file));
  return file;
}

export async function latestReport(paths: RalphPaths, taskId: string): Promise<string | undefined> {
  const dir = paths.reportsDir(taskId);
  const names = await fs.readdir(dir).catch(() => [] as string[]);
  if (names.includes('final.md')) return path.join(dir, 'final.md');
  const iterations = names
    .map((n) => /^iteration-(\d+)\.md$/.exec(n))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(b[1]) - Number(a[1]));
  return iterations[0] ? path.join(dir, iterations[0][0]) : undefined;
}

async function pickTaskWithReport(s: GateCommandServices): Promise<Task | undefined> {
  const tasks: Task[] = [];
  for (const task of await s.store.list()) if (await latestReport(s.paths, task.id)) tasks.push(task);
  if (tasks.length === 0) {
    void vscode.window.showInformationMessage('Ralph: no task has a report yet.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    tasks.map((task) => ({ label: task.title, description: `${task.id} · ${task.status}`, task })),
    { placeHolder: 'Show the report of which task?' },
  );
  return picked?.task;
}
