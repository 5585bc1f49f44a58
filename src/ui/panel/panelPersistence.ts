import type * as vscode from 'vscode';
import { emptyPanelState, type PanelState } from '../../protocol/panelState';
import type { PanelModel } from './panelModel';

const KEY = 'ralph.panelState.v1';
const SAVE_DELAY_MS = 3000;

/**
 * Keeps the panel's model in the workspace state, so that after a window reload the panel
 * shows what it showed before (delegation cards and warnings included; the task store and
 * checkpoints then correct anything that changed meanwhile). Saves are debounced.
 */
export class PanelPersistence implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly subscription: { dispose(): void };

  constructor(
    private readonly memento: vscode.Memento,
    private readonly model: PanelModel,
  ) {
    this.subscription = model.subscribe(() => {
      this.timer ??= setTimeout(() => void this.save(), SAVE_DELAY_MS);
    });
  }

  /** The saved model, as it can be shown now: nothing is running in a fresh window. */
  static load(memento: vscode.Memento): PanelState | undefined {
    const saved = memento.get<PanelState>(KEY);
    if (!saved || saved.version !== 1 || !Array.isArray(saved.tasks) || !Array.isArray(saved.warnings)) return undefined;
    const base = emptyPanelState();
    return {
      ...base,
      ...saved,
      run: { ...saved.run, phase: 'idle' },
      errors: Array.isArray(saved.errors) ? saved.errors : [],
      workspaceGates: Array.isArray(saved.workspaceGates) ? saved.workspaceGates : [],
      // saved before the queue existed, or mid-run: entries still moving are stale in a fresh window
      queue: Array.isArray(saved.queue)
        ? saved.queue.filter((q) => q.state === 'merged' || q.state === 'conflict' || q.state === 'failed')
        : [],
    };
  }

  async save(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    await this.memento.update(KEY, this.model.state);
  }

  dispose(): void {
    this.subscription.dispose();
    if (this.timer !== undefined) void this.save();
  }
}
