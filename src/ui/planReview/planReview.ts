import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DisposableBase } from '../disposableBase';
import { errorMessage } from '../../core/errors';
import { headings, findHeading } from '../../core/intake/markdownOutline';
import {
  acceptPlan,
  dropPlannedTask,
  editPlannedTask,
  mergePlannedTasks,
  movePlannedTask,
  PlanRefusedError,
  planProblems,
} from '../../core/intake/plan/planDraft';
import { noteAccepted, planFiles } from '../../core/intake/plan/planReport';
import type { PlanDraft } from '../../core/intake/plan/planSchema';
import type { RalphPaths } from '../../core/paths';
import type { Logger } from '../../core/ports';
import { type Task, TASK_TYPES, type TaskType } from '../../core/tasks/schema';
import type { TaskStore } from '../../core/tasks/store';
import {
  PLAN_REVIEW_VIEW_TYPE,
  type PlanReviewMessage,
  type PlanReviewMessageType,
  type PlanReviewState,
} from '../../protocol/planReviewProtocol';
import { parsePlanReviewMessage } from '../../protocol/planReviewSchema';
import { newNonce, panelHtml, WEBVIEW_DIST, type WebviewPage } from '../panel/panelHtml';

const PAGE: WebviewPage = { script: 'planReview.js', style: 'planReview.css', title: 'Ralph Plan Review', label: 'Ralph plan review' };

export interface PlanReviewDeps {
  extensionUri: vscode.Uri;
  paths: RalphPaths;
  store: TaskStore;
  logger: Logger;
  /** The person accepted: the tasks are in the store. */
  onAccepted?(tasks: readonly Task[]): void;
}

type Handlers = { [K in PlanReviewMessageType]: (message: Extract<PlanReviewMessage, { type: K }>) => Promise<void> | void };

/**
 * The editable review of a proposed plan, in a webview panel: the person edits, drops, reorders
 * and merges the proposed tasks, then accepts (the tasks are saved, all at once) or discards.
 * The host keeps the plan and applies every change with the core's plan operations; nothing is
 * saved before Accept, and Accept is refused while the plan has a problem (a cycle, named).
 */
export class PlanReview extends DisposableBase {
  private status: PlanReviewState['status'] = 'reviewing';
  private accepted: Task[] | undefined;
  private error: string | undefined;
  private existing: Task[] = [];
  private panel: vscode.WebviewPanel | undefined;
  private readonly changed = this.register(new vscode.EventEmitter<PlanReviewState>());
  /** Every state the host sent (tests wait on it instead of timing). */
  readonly onDidChange = this.changed.event;
  readonly stats = { ready: 0, rejected: 0, sent: 0, lastRejection: undefined as string | undefined };

  constructor(
    private readonly deps: PlanReviewDeps,
    private draft: PlanDraft,
  ) {
    super();
  }

  get runId(): string {
    return this.draft.runId;
  }

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  get state(): PlanReviewState {
    const { draft } = this;
    return {
      runId: draft.runId,
      document: draft.document,
      ...(draft.section ? { section: draft.section } : {}),
      model: draft.model,
      tasks: draft.tasks.map((t) => ({ ...t, dependsOn: [...t.dependsOn], notes: [...t.notes] })),
      ...(draft.notes ? { notes: draft.notes } : {}),
      problems: this.status === 'reviewing' || this.status === 'saving' ? planProblems(draft, this.existing) : [],
      existing: this.existing.map((t) => ({ id: t.id, title: t.title })),
      types: [...TASK_TYPES],
      status: this.status,
      ...(this.accepted ? { accepted: this.accepted.map((t) => ({ id: t.id, title: t.title })) } : {}),
      ...(this.error ? { error: this.error } : {}),
    };
  }

  /** Opens the panel (or brings it forward). */
  async open(): Promise<void> {
    this.existing = await this.deps.store.list();
    if (this.panel) return this.panel.reveal(undefined, false);
    const root = vscode.Uri.joinPath(this.deps.extensionUri, ...WEBVIEW_DIST);
    const panel = vscode.window.createWebviewPanel(
      PLAN_REVIEW_VIEW_TYPE,
      `Plan: ${path.basename(this.draft.document)}`,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [root] },
    );
    panel.iconPath = vscode.Uri.joinPath(this.deps.extensionUri, 'media', 'ralph.svg');
    panel.webview.html = panelHtml(panel.webview, (name) => vscode.Uri.joinPath(root, name), newNonce(), PAGE);
    this.panel = panel;
    this.register(panel.webview.onDidReceiveMessage((raw: unknown) => void this.receive(raw)));
    this.register(panel.onDidDispose(() => (this.panel = undefined)));
  }

  /** A message from the webview (public: the tests feed the same door); invalid ones are rejected, never acted on. */
  async receive(raw: unknown): Promise<boolean> {
    const parsed = parsePlanReviewMessage(raw);
    if (!parsed.ok) {
      this.stats.rejected++;
      this.stats.lastRejection = parsed.error;
      this.deps.logger.warn(`plan review: rejected a message from the webview: ${parsed.error}`);
      return false;
    }
    const handler = this.handlers[parsed.message.type] as (m: PlanReviewMessage) => Promise<void> | void;
    try {
      this.error = undefined;
      await handler(parsed.message);
    } catch (error) {
      this.error = errorMessage(error);
      this.deps.logger.warn(`plan review: ${parsed.message.type}: ${this.error}`);
    }
    this.post();
    return true;
  }

  private readonly handlers: Handlers = {
    ready: async () => {
      this.stats.ready++;
      this.existing = await this.deps.store.list();
    },
    edit: ({ key, fields }) => {
      this.expectReviewing();
      if (fields.type !== undefined && !(TASK_TYPES as readonly string[]).includes(fields.type))
        throw new Error(`"${fields.type}" is not a task type (${TASK_TYPES.join(', ')})`);
      const { type, ...rest } = fields;
      this.draft = editPlannedTask(this.draft, key, { ...rest, ...(type !== undefined ? { type: type as TaskType } : {}) });
    },
    drop: ({ key }) => {
      this.expectReviewing();
      this.draft = dropPlannedTask(this.draft, key);
    },
    move: ({ key, to }) => {
      this.expectReviewing();
      this.draft = movePlannedTask(this.draft, key, to);
    },
    merge: ({ into, other }) => {
      this.expectReviewing();
      this.draft = mergePlannedTasks(this.draft, into, other);
    },
    accept: () => this.accept(),
    discard: () => {
      this.expectReviewing();
      this.status = 'discarded';
      // the proposal stays in .ralph/reports/plans/: `ralph plan --accept` can still take it
      setTimeout(() => this.panel?.dispose(), 0);
    },
    openReport: async () => {
      await vscode.commands.executeCommand('markdown.showPreview', vscode.Uri.file(planFiles(this.deps.paths, this.draft.runId).report));
    },
    openSource: async ({ key }) => {
      const task = this.draft.tasks.find((t) => t.key === key);
      if (!task) return;
      const file = vscode.Uri.file(path.join(this.deps.paths.workspace, ...this.draft.document.split('/')));
      const text = await fs.readFile(file.fsPath, 'utf8');
      const line = task.section ? (findHeading(headings(text), task.section)?.line ?? 0) : 0;
      await vscode.window.showTextDocument(file, { viewColumn: vscode.ViewColumn.Beside, selection: new vscode.Range(line, 0, line, 0) });
    },
  };

  private async accept(): Promise<void> {
    this.expectReviewing();
    this.status = 'saving';
    this.post();
    try {
      await this.deps.store.ensure();
      const tasks = await acceptPlan(this.deps.store, this.draft);
      this.status = 'accepted';
      this.accepted = tasks;
      await noteAccepted(this.deps.paths, this.draft.runId, tasks).catch(() => undefined);
      await fs.rm(planFiles(this.deps.paths, this.draft.runId).draft, { force: true });
      this.deps.onAccepted?.(tasks);
    } catch (error) {
      this.status = 'reviewing';
      this.existing = await this.deps.store.list();
      throw error instanceof PlanRefusedError ? new Error(`Not saved: ${error.problems.join('; ')}`) : error;
    }
  }

  private expectReviewing(): void {
    if (this.status !== 'reviewing') throw new Error(`the plan is ${this.status}; it cannot be changed`);
  }

  private post(): void {
    const state = this.state;
    this.changed.fire(state);
    if (!this.panel) return;
    this.stats.sent++;
    void this.panel.webview.postMessage({ type: 'state', state });
  }

  override dispose(): void {
    this.panel?.dispose();
    super.dispose();
  }
}

/** The open plan reviews of this window, one per planning run. */
export class PlanReviews extends DisposableBase {
  private readonly reviews = new Map<string, PlanReview>();
  private last: PlanReview | undefined;

  constructor(private readonly deps: PlanReviewDeps) {
    super();
    this.register({ dispose: () => this.reviews.forEach((r) => r.dispose()) });
  }

  /** The review opened last (the tests drive it). */
  get current(): PlanReview | undefined {
    return this.last;
  }

  async open(draft: PlanDraft): Promise<PlanReview> {
    const review = this.reviews.get(draft.runId) ?? new PlanReview(this.deps, draft);
    this.reviews.set(draft.runId, review);
    this.last = review;
    await review.open();
    return review;
  }
}
