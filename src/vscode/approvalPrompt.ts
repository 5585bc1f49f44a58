import * as vscode from 'vscode';
import type { ApprovalPrompt } from '../core/ports';

/** caio's actions (push, pull request, issue, notification) ask with a modal warning; dismissing it refuses. */
export const modalApproval: ApprovalPrompt = {
  async approve(request) {
    const choice = await vscode.window.showWarningMessage(request.title, { modal: true, detail: request.detail }, 'Approve');
    return choice === 'Approve';
  },
};
