import * as vscode from 'vscode';
import type { ApprovalPrompt } from '../core/ports';

/**
 * caio's actions (push, pull request, issue, notification) and the agent's gated commands ask
 * with a modal warning that says which of the two it is; dismissing it refuses.
 */
export const modalApproval: ApprovalPrompt = {
  async approve(request) {
    const kind = request.kind === 'command' ? 'Command the agent wants to run' : 'Action by caio (outside the workspace)';
    const choice = await vscode.window.showWarningMessage(request.title, { modal: true, detail: `${kind}:\n${request.detail}` }, 'Approve');
    return choice === 'Approve';
  },
};
