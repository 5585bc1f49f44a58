import * as vscode from 'vscode';
import type { Logger } from '../../core/ports';
import { type HostMessage, PANEL_VIEW_TYPE, type WebviewMessage, type WebviewMessageType } from '../../protocol/protocol';
import { parseWebviewMessage } from '../../protocol/protocolSchema';
import { DisposableBase } from '../disposableBase';
import { InputBatcher } from './inputBatcher';
import { newNonce, panelHtml, WEBVIEW_DIST } from './panelHtml';
import type { PanelModel } from './panelModel';

/** What a message handler may do to the connection it came on. */
export interface PanelConnection {
  sendSnapshot(): void;
  noteApplied(seq: number, digest: string): void;
}

/** One handler per webview message type. */
export type PanelMessageHandlers = {
  [K in WebviewMessageType]: (message: Extract<WebviewMessage, { type: K }>, connection: PanelConnection) => unknown;
};

export interface AppliedReport {
  seq: number;
  digest: string;
}

/**
 * The *Ralph Progress* webview panel: creates (or revives) it with a strict CSP, answers the
 * webview's `ready` with a snapshot of the model, then streams the model's inputs in batches.
 * The webview is not kept alive while hidden: when shown again it reloads, says `ready`, and
 * gets a fresh snapshot — so hidden, reopened and revived panels all show the host's state.
 */
export class ProgressPanel extends DisposableBase {
  private panel: vscode.WebviewPanel | undefined;
  private panelScope: vscode.Disposable[] = [];
  private connected = false;
  private pendingFocus: string | undefined;
  private lastAppliedReport: AppliedReport | undefined;
  private readyMessages = 0;
  private rejectedMessages = 0;
  private snapshotsSent = 0;
  private batchesSent = 0;
  private lastRejectionText: string | undefined;
  private readonly batcher: InputBatcher;
  private readonly applied = this.register(new vscode.EventEmitter<AppliedReport>());
  /** The webview reported the sequence number (and state digest) it reached. */
  readonly onDidApply = this.applied.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: PanelModel,
    private readonly handlers: PanelMessageHandlers,
    private readonly logger: Logger,
    /** Called before the first snapshot of a session (loads what the disk knows). */
    private readonly beforeFirstSnapshot: () => Promise<void> = async () => undefined,
  ) {
    super();
    this.batcher = new InputBatcher({
      inputs: (batch) => this.post({ type: 'inputs', ...batch }),
      snapshot: () => this.sendSnapshot(),
    });
    this.register({ dispose: () => this.batcher.dispose() });
    this.register(
      this.model.subscribe(({ seq, input }) => {
        if (this.connected) this.batcher.push(seq, input);
      }),
    );
    this.register({ dispose: () => this.disposePanel() });
  }

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  get visible(): boolean {
    return this.panel?.visible ?? false;
  }

  /** What the webview last acknowledged (tests compare it with the model). */
  get lastApplied(): AppliedReport | undefined {
    return this.lastAppliedReport;
  }

  /** Counters of the protocol (what the tests count instead of timing things). */
  get stats(): { ready: number; rejected: number; lastRejection?: string; snapshots: number; batches: number; pending: number } {
    return {
      ready: this.readyMessages,
      rejected: this.rejectedMessages,
      lastRejection: this.lastRejectionText,
      snapshots: this.snapshotsSent,
      batches: this.batchesSent,
      pending: this.batcher.pending,
    };
  }

  /** Opens the panel (or brings it forward), optionally on one task. */
  async show(taskId?: string): Promise<void> {
    if (taskId) this.pendingFocus = taskId;
    if (this.panel) {
      this.panel.reveal(undefined, false);
      this.flushFocus();
      return;
    }
    await this.beforeFirstSnapshot();
    const panel = vscode.window.createWebviewPanel(
      PANEL_VIEW_TYPE,
      'Ralph Progress',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      this.options(),
    );
    this.attach(panel);
  }

  /** A panel VS Code restored after a window reload (the serializer hands it over). */
  async revive(panel: vscode.WebviewPanel): Promise<void> {
    this.disposePanel();
    panel.webview.options = this.options();
    await this.beforeFirstSnapshot();
    this.attach(panel);
  }

  /**
   * A message from the webview: parsed with zod, then handed to its one handler. Invalid
   * messages are rejected (counted and logged), never acted on. Public so that the tests can
   * feed the same door the webview uses.
   */
  async receive(raw: unknown): Promise<boolean> {
    const parsed = parseWebviewMessage(raw);
    if (!parsed.ok) {
      this.rejectedMessages++;
      this.lastRejectionText = parsed.error;
      this.logger.warn(`progress panel: rejected a message from the webview: ${parsed.error}`);
      return false;
    }
    const message = parsed.message;
    if (message.type === 'ready') this.readyMessages++;
    const handler = this.handlers[message.type] as (m: WebviewMessage, c: PanelConnection) => unknown;
    try {
      await handler(message, this.connection);
    } catch (error) {
      this.logger.error(`progress panel: ${message.type}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return true;
  }

  private readonly connection: PanelConnection = {
    sendSnapshot: () => this.sendSnapshot(),
    noteApplied: (seq, digest) => {
      this.lastAppliedReport = { seq, digest };
      this.applied.fire(this.lastAppliedReport);
    },
  };

  private options(): vscode.WebviewPanelOptions & vscode.WebviewOptions {
    return {
      enableScripts: true,
      enableFindWidget: true,
      retainContextWhenHidden: false,
      localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, ...WEBVIEW_DIST)],
    };
  }

  private attach(panel: vscode.WebviewPanel): void {
    this.panel = panel;
    this.connected = false;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'ralph.svg');
    const root = vscode.Uri.joinPath(this.extensionUri, ...WEBVIEW_DIST);
    panel.webview.html = panelHtml(panel.webview, (name) => vscode.Uri.joinPath(root, name), newNonce());
    this.panelScope = [
      panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)),
      // hidden webviews are torn down; the next `ready` reconnects
      panel.onDidChangeViewState(({ webviewPanel }) => {
        if (!webviewPanel.visible) this.disconnect();
      }),
      panel.onDidDispose(() => {
        if (this.panel === panel) {
          this.panel = undefined;
          this.disconnect();
          for (const d of this.panelScope.splice(0)) d.dispose();
        }
      }),
    ];
  }

  private sendSnapshot(): void {
    if (!this.panel) return;
    const seq = this.model.seq;
    this.batcher.reset(seq);
    this.connected = true;
    this.post({ type: 'snapshot', seq, state: this.model.state });
    this.flushFocus();
  }

  private flushFocus(): void {
    if (this.pendingFocus && this.connected) {
      this.post({ type: 'focusTask', taskId: this.pendingFocus });
      this.pendingFocus = undefined;
    }
  }

  private disconnect(): void {
    this.connected = false;
    this.batcher.reset(this.model.seq);
  }

  private post(message: HostMessage): void {
    if (!this.panel) return;
    if (message.type === 'snapshot') this.snapshotsSent++;
    else if (message.type === 'inputs') this.batchesSent++;
    void this.panel.webview.postMessage(message);
  }

  private disposePanel(): void {
    const panel = this.panel;
    this.panel = undefined;
    this.disconnect();
    for (const d of this.panelScope.splice(0)) d.dispose();
    panel?.dispose();
  }
}
