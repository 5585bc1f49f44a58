import * as vscode from 'vscode';
import { type WarningAction, warningActions } from '../protocol/panelState';
import type { PanelModel } from '../ui/panel/panelModel';
import type { ChannelLogger } from '../adapters/logger';
import type { WarningResponder } from '../ui/warningResponder';
import type { RunController } from './runController';

export interface WarningActionServices {
  model: PanelModel;
  runs: RunController;
  logger: ChannelLogger;
  showPanel(): Promise<void>;
}

/**
 * What the answers to a warning do, the same from the panel's buttons and from the
 * notification: Continue resumes a paused run, Stop stops it (the task is halted, resumable),
 * Increase Max raises the task's limit, Review Errors shows the log and the panel.
 */
export class WarningActions implements WarningResponder {
  constructor(private readonly s: WarningActionServices) {}

  /** True when the warning is now answered. */
  async run(warningId: string, action: WarningAction): Promise<boolean> {
    const warning = this.s.model.state.warnings.find((w) => w.id === warningId);
    if (!warning || warning.resolved) return false;
    if (action !== 'dismiss' && !warningActions(warning.code).includes(action)) {
      this.s.logger.warn(`warning ${warning.code} offers no "${action}" action`);
      return false;
    }
    switch (action) {
      case 'continue':
        this.s.runs.resume();
        break;
      case 'stop':
        await this.s.runs.stop();
        break;
      case 'increaseMax': {
        const updated = await vscode.commands.executeCommand('ralph.increaseMaxIterations', warning.taskId);
        if (!updated) return false;
        break;
      }
      case 'reviewErrors':
        // the warning stays open: after reviewing, the answer is still Stop (or Resume)
        this.s.logger.channel.show(true);
        await this.s.showPanel();
        return false;
      case 'dismiss':
        break;
    }
    this.s.model.apply({ type: 'panel.warningResolved', id: warningId, action });
    await this.s.runs.clearAttention();
    return true;
  }
}
