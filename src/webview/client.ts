/**
 * The webview's side of the protocol: keeps the state (snapshot + inputs, applied with the
 * same reducer as the host), notices gaps and asks for a snapshot, acknowledges what it
 * applied (sequence number and digest), and saves itself so a hidden panel reappears at once.
 */
import { reducePanel } from '../protocol/panelReducer';
import type { PanelState, WarningAction } from '../protocol/panelState';
import { stateDigest } from '../protocol/panelState';
import type { HostMessage, PanelCommand, WebviewMessage } from '../protocol/protocol';

export interface VsCodeApi {
  postMessage(message: WebviewMessage): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** What only this view of the panel decides: which task it shows, which cards are open. */
export interface ViewState {
  /** A task chosen by the person; undefined follows the running (or last) task. */
  selectedTaskId?: string;
  open: Record<string, boolean>;
}

interface Saved {
  seq: number;
  state: PanelState;
  view: ViewState;
}

const ACK_DELAY_MS = 40;
const SAVE_DELAY_MS = 500;

export class PanelClient {
  state: PanelState | undefined;
  seq = -1;
  view: ViewState = { open: {} };
  private ackTimer: ReturnType<typeof setTimeout> | undefined;
  private saveTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly api: VsCodeApi,
    private readonly changed: () => void,
  ) {
    const saved = api.getState() as Saved | undefined;
    if (saved && typeof saved === 'object' && saved.state?.version === 1) {
      this.state = saved.state;
      this.seq = saved.seq;
      this.view = { ...saved.view, open: saved.view?.open ?? {} };
    }
  }

  /** Tells the host the view is listening (it answers with a snapshot). */
  start(): void {
    this.api.postMessage({ type: 'ready', ...(this.seq >= 0 ? { seq: this.seq } : {}) });
  }

  handle(message: HostMessage): void {
    switch (message.type) {
      case 'snapshot':
        this.state = message.state;
        this.seq = message.seq;
        break;
      case 'inputs': {
        if (!this.state || message.fromSeq > this.seq + 1) {
          this.api.postMessage({ type: 'resync', reason: `expected ${this.seq + 1}, got ${message.fromSeq}` });
          return;
        }
        if (message.toSeq <= this.seq) return;
        let state = this.state;
        for (const input of message.inputs) state = reducePanel(state, input);
        this.state = state;
        this.seq = message.toSeq;
        break;
      }
      case 'focusTask':
        this.view = { ...this.view, selectedTaskId: message.taskId };
        break;
      default:
        return;
    }
    this.scheduleAck();
    this.scheduleSave();
    this.changed();
  }

  command(command: PanelCommand, taskId?: string): void {
    this.api.postMessage({ type: 'command', command, ...(taskId ? { taskId } : {}) });
  }

  answerWarning(warningId: string, action: WarningAction): void {
    this.api.postMessage({ type: 'warningAction', warningId, action });
  }

  openFile(path: string): void {
    this.api.postMessage({ type: 'openFile', path });
  }

  answer(taskId: string, text: string, approved?: boolean, verdict?: 'part' | 'unrelated'): void {
    this.api.postMessage({
      type: 'answer',
      taskId,
      text,
      ...(approved === undefined ? {} : { approved }),
      ...(verdict === undefined ? {} : { verdict }),
    });
  }

  requestChanges(taskId: string, text: string): void {
    this.api.postMessage({ type: 'requestChanges', taskId, text });
  }

  setView(view: Partial<ViewState>): void {
    this.view = { ...this.view, ...view };
    this.scheduleSave();
    this.changed();
  }

  setOpen(key: string, open: boolean): void {
    if ((this.view.open[key] ?? false) === open) return;
    this.view = { ...this.view, open: { ...this.view.open, [key]: open } };
    this.scheduleSave();
  }

  /** A burst is acknowledged once, after it was applied (the digest walks the whole state). */
  private scheduleAck(): void {
    this.ackTimer ??= setTimeout(() => {
      this.ackTimer = undefined;
      if (!this.state) return;
      const digest = stateDigest(this.state);
      // also on the page, for the end-to-end tests that look at the webview from outside
      document.body.dataset.seq = String(this.seq);
      document.body.dataset.digest = digest;
      this.api.postMessage({ type: 'applied', seq: this.seq, digest });
    }, ACK_DELAY_MS);
  }

  private scheduleSave(): void {
    this.saveTimer ??= setTimeout(() => {
      this.saveTimer = undefined;
      if (this.state) this.api.setState({ seq: this.seq, state: this.state, view: this.view } satisfies Saved);
    }, SAVE_DELAY_MS);
  }
}
