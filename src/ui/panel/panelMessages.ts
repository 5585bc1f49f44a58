import * as path from 'node:path';
import * as vscode from 'vscode';
import type { WarningResponder } from '../warningResponder';
import type { PanelMessageHandlers } from './progressPanel';

export interface PanelMessageServices {
  workspace: string;
  warnings: WarningResponder;
}

/** One handler per message the webview sends (each already checked by `protocolSchema`). */
export function createPanelMessageHandlers(s: PanelMessageServices): PanelMessageHandlers {
  return {
    ready: (_message, connection) => connection.sendSnapshot(),
    resync: (_message, connection) => connection.sendSnapshot(),
    applied: (message, connection) => connection.noteApplied(message.seq, message.digest),
    // the buttons run the same commands as the palette and the tree (same checks, same errors)
    command: (message) => vscode.commands.executeCommand(`ralph.${message.command}`, ...(message.taskId ? [message.taskId] : [])),
    warningAction: (message) => s.warnings.run(message.warningId, message.action),
    openFile: (message) =>
      vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(path.join(s.workspace, ...message.path.split('/')))),
    // the answer box and Request Changes carry the person's text to the same commands as the tree and the palette
    answer: (message) =>
      vscode.commands.executeCommand('ralph.answerTask', message.taskId, message.text, {
        ...(message.approved === undefined ? {} : { approved: message.approved }),
        ...(message.verdict === undefined ? {} : { verdict: message.verdict }),
      }),
    requestChanges: (message) => vscode.commands.executeCommand('ralph.requestChanges', message.taskId, message.text),
  };
}
