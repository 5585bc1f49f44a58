import * as vscode from 'vscode';
import { errorMessage } from '../core/errors';
import type { Task, TaskStatus } from '../core/tasks/schema';
import { type DependencyBlock, dependencyBlocks } from '../core/tasks/select';
import type { TaskStore } from '../core/tasks/store';
import { DisposableBase } from './disposableBase';
import type { LiveStatus, QueuedLive, QueuedState } from './liveStatus';
import type { TaskRemote } from '../core/tasks/remote';
import { currentRemote, remoteLinkLabel, remoteLook, remoteWords } from '../protocol/remoteLook';

/** Group order in the tree: what needs attention or is moving first. */
export const STATUS_ORDER: readonly TaskStatus[] = [
  'in_progress',
  'needs_help',
  'review',
  'blocked',
  'todo',
  'halted',
  'timeout',
  'failed',
  'done',
  'cancelled',
];

const STATUS_LABEL: Record<TaskStatus, string> = {
  todo: 'To do',
  in_progress: 'In progress',
  done: 'Done',
  blocked: 'Blocked',
  needs_help: 'Needs you',
  review: 'Ready for review',
  failed: 'Failed',
  timeout: 'Timed out',
  halted: 'Halted',
  cancelled: 'Cancelled',
};

const STATUS_ICON: Record<TaskStatus, [string, string | undefined]> = {
  todo: ['circle-large-outline', undefined],
  in_progress: ['sync~spin', 'charts.blue'],
  done: ['pass-filled', 'testing.iconPassed'],
  blocked: ['circle-slash', 'charts.yellow'],
  needs_help: ['question', 'charts.orange'],
  review: ['git-pull-request-draft', 'charts.purple'],
  failed: ['error', 'testing.iconFailed'],
  timeout: ['watch', 'charts.orange'],
  halted: ['debug-pause', 'charts.yellow'],
  cancelled: ['close', 'disabledForeground'],
};

/** A file a waiting merge would overwrite: opened on click. */
function waitingFileItem(tasksFile: string, node: WaitingFileNode): vscode.TreeItem {
  const root = tasksFile.replace(/[\\/]\.ralph[\\/]tasks\.json$/, '');
  const uri = vscode.Uri.joinPath(vscode.Uri.file(root), ...node.file.split('/'));
  const item = new vscode.TreeItem(uri, vscode.TreeItemCollapsibleState.None);
  item.id = `waiting:${node.taskId}:${node.file}`;
  item.description = 'in the way of the merge';
  item.tooltip = `Your uncommitted changes to ${node.file} would be overwritten by the merge of ${node.taskId}: commit or stash them (then Retry Merge Now), or Keep on Its Branch.`;
  item.contextValue = 'waitingFile';
  item.command = { command: 'vscode.open', title: 'Open', arguments: [uri] };
  return item;
}

/** How a task in the merge queue shows: its icon (in place of In progress's spinner) and words. */
const QUEUE_LOOK: Record<QueuedState, [icon: string, words: string]> = {
  queued: ['git-pull-request', 'queued for merge'],
  merging: ['git-merge', 'merging'],
  checking: ['git-merge', 'merge check running'],
  waiting: ['watch', 'merge waits'],
};

/** A task's worktree as the tree shows it. */
export interface WorktreeInfo {
  taskId: string;
  path: string;
}

export class StatusGroupNode {
  readonly kind = 'group';
  constructor(
    readonly status: TaskStatus,
    readonly tasks: readonly Task[],
  ) {}
}

export class TaskNode {
  readonly kind = 'task';
  constructor(readonly task: Task) {}
}

/** A file of the person's that a waiting merge would overwrite (a child of its task): a click opens it. */
export class WaitingFileNode {
  readonly kind = 'file';
  constructor(
    readonly taskId: string,
    readonly file: string,
  ) {}
}

export type TaskTreeNode = StatusGroupNode | TaskNode | WaitingFileNode;

/**
 * Tasks of `.ralph/tasks.json` grouped by status. The model is refreshed from the store when the
 * file changes or the loop reports progress; getChildren only reads the cached model.
 */
export class TaskTreeProvider extends DisposableBase implements vscode.TreeDataProvider<TaskTreeNode> {
  private tasks: Task[] = [];
  private blocks: ReadonlyMap<string, DependencyBlock> = new Map();
  private loadError: string | undefined;
  private live: LiveStatus = { state: 'idle' };
  private worktrees: ReadonlyMap<string, string> = new Map();
  private refreshTimer: NodeJS.Timeout | undefined;
  private worktreeTimer: NodeJS.Timeout | undefined;
  private readonly changed = this.register(new vscode.EventEmitter<TaskTreeNode | undefined>());
  readonly onDidChangeTreeData = this.changed.event;

  constructor(
    private readonly store: TaskStore,
    tasksFile: vscode.RelativePattern,
    /** The task worktrees on disk (git's list); read on refresh and after the tasks change, never in getChildren. */
    private readonly listWorktrees: () => Promise<readonly WorktreeInfo[]> = async () => [],
  ) {
    super();
    const watcher = this.register(vscode.workspace.createFileSystemWatcher(tasksFile));
    this.register(watcher.onDidChange(() => this.scheduleRefresh()));
    this.register(watcher.onDidCreate(() => this.scheduleRefresh()));
    this.register(watcher.onDidDelete(() => this.scheduleRefresh()));
    const subscription = store.onDidChange((tasks) => this.setTasks(tasks));
    this.register(subscription);
    this.register({ dispose: () => clearTimeout(this.refreshTimer) });
    this.register({ dispose: () => clearTimeout(this.worktreeTimer) });
  }

  /** The worktree of each task that has one, as last read. */
  get worktreeMap(): ReadonlyMap<string, string> {
    return this.worktrees;
  }

  /** Tasks as the tree currently shows them. */
  get snapshot(): readonly Task[] {
    return this.tasks;
  }

  setLiveStatus(live: LiveStatus): void {
    const wasRunning = this.live.state !== 'idle';
    this.live = live;
    // an agent's worktree appears when it starts; kept or removed ones settle when the run ends
    const agentWorktrees = (live.agents ?? []).filter((a) => a.worktree && this.worktrees.get(a.taskId) !== a.worktree);
    if (agentWorktrees.length > 0) {
      const next = new Map(this.worktrees);
      for (const a of agentWorktrees) next.set(a.taskId, a.worktree!);
      this.worktrees = next;
    }
    if (wasRunning && live.state === 'idle') this.scheduleWorktrees();
    this.changed.fire(undefined);
  }

  /** Reads the worktree list again (after Clean Up Worktree, Retry from the tip, a run). */
  async refreshWorktrees(): Promise<void> {
    try {
      this.worktrees = new Map((await this.listWorktrees()).map((w) => [w.taskId, w.path]));
    } catch {
      // no git, or not a repository: no worktrees to show
      this.worktrees = new Map();
    }
    this.changed.fire(undefined);
  }

  async refresh(): Promise<void> {
    try {
      this.tasks = await this.store.list();
      this.blocks = dependencyBlocks(this.tasks);
      this.loadError = undefined;
    } catch (error) {
      this.loadError = errorMessage(error);
    }
    await this.refreshWorktrees();
  }

  getTreeItem(node: TaskTreeNode): vscode.TreeItem {
    if (node instanceof WaitingFileNode) return waitingFileItem(this.store.file, node);
    return node instanceof StatusGroupNode ? this.groupItem(node) : this.taskItem(node.task);
  }

  getChildren(node?: TaskTreeNode): TaskTreeNode[] {
    if (node instanceof WaitingFileNode) return [];
    if (node instanceof TaskNode) return (this.queued(node.task)?.files ?? []).map((file) => new WaitingFileNode(node.task.id, file));
    if (node instanceof StatusGroupNode) return node.tasks.map((t) => new TaskNode(t));
    return STATUS_ORDER.map(
      (status) =>
        new StatusGroupNode(
          status,
          this.tasks.filter((t) => t.status === status),
        ),
    ).filter((g) => g.tasks.length > 0);
  }

  /** A message above the tree when the store cannot be read. */
  get message(): string | undefined {
    return this.loadError ? `Cannot read .ralph/tasks.json: ${this.loadError}` : undefined;
  }

  private setTasks(tasks: readonly Task[]): void {
    this.tasks = [...tasks];
    this.blocks = dependencyBlocks(this.tasks);
    this.loadError = undefined;
    this.scheduleWorktrees();
    this.changed.fire(undefined);
  }

  private scheduleWorktrees(): void {
    clearTimeout(this.worktreeTimer);
    this.worktreeTimer = setTimeout(() => void this.refreshWorktrees(), 300);
  }

  private scheduleRefresh(): void {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = setTimeout(() => void this.refresh(), 100);
  }

  private groupItem(group: StatusGroupNode): vscode.TreeItem {
    const item = new vscode.TreeItem(`${STATUS_LABEL[group.status]} (${group.tasks.length})`, vscode.TreeItemCollapsibleState.Expanded);
    item.id = `group:${group.status}`;
    item.contextValue = `group.${group.status}`;
    return item;
  }

  private taskItem(task: Task): vscode.TreeItem {
    const queued = this.queued(task);
    const waiting = queued?.state === 'waiting';
    // a merge waiting on the person's files shows them as children (a click opens one)
    const item = new vscode.TreeItem(
      task.title,
      waiting && queued.files?.length ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None,
    );
    item.id = `task:${task.id}`;
    const worktree = this.worktrees.get(task.id);
    // `.worktree`: the menus offer Clean Up Worktree (and Retry asks continue / fresh) only then;
    // `.waiting`: a merge waits on the person's files (Retry Merge Now, Keep on Its Branch, Open Files)
    item.contextValue = `task.${task.status}${waiting ? '.waiting' : worktree && task.status !== 'in_progress' ? '.worktree' : ''}`;
    const [icon, color] = queued ? [QUEUE_LOOK[queued.state][0], 'charts.purple'] : STATUS_ICON[task.status];
    item.iconPath = new vscode.ThemeIcon(icon, color ? new vscode.ThemeColor(color) : undefined);
    const remote = currentRemote(task.status, task.remote);
    item.description = remote ? remoteWords(remote) : this.describe(task);
    const tooltip = new vscode.MarkdownString(undefined, true);
    tooltip.appendMarkdown(`**${task.id}** · ${STATUS_LABEL[task.status]}`);
    if (item.description && item.description !== task.id) tooltip.appendMarkdown(' · ').appendText(String(item.description));
    tooltip.appendMarkdown('\n\n');
    tooltip.appendMarkdown(`**Promise:** `).appendText(task.promise);
    if (task.source) tooltip.appendMarkdown('\n\n**From:** ').appendText(task.source);
    if (task.check) tooltip.appendMarkdown('\n\n**Check** (a required gate of this task): ').appendText(task.check);
    if (task.proof) tooltip.appendMarkdown('\n\n**Proof:** ').appendText(task.proof);
    if (task.lastSignal) tooltip.appendMarkdown('\n\n**Last signal:** ').appendText(task.lastSignal);
    if (task.blockedReason)
      tooltip
        .appendMarkdown(
          task.status === 'needs_help'
            ? '\n\n**Question:** '
            : task.status === 'review'
              ? '\n\n**Waits for your review:** '
              : '\n\n**Reason:** ',
        )
        .appendText(task.blockedReason);
    for (const q of (task.questions ?? []).filter((x) => x.answer !== undefined).slice(-3))
      tooltip.appendMarkdown('\n\n**Answered:** ').appendText(`${q.kind === 'review' ? 'review feedback' : q.question} → ${q.answer}`);
    if (queued?.detail) tooltip.appendMarkdown('\n\n**Merge queue:** ').appendText(queued.detail);
    if (worktree) tooltip.appendMarkdown('\n\n**Worktree:** ').appendText(worktree);
    const block = this.blocks.get(task.id);
    if (block)
      tooltip.appendMarkdown(block.kind === 'invalid' ? '\n\n**Can never start:** ' : '\n\n**Waiting:** ').appendText(block.message);
    if (remote) this.remoteLook(item, task.id, remote, tooltip);
    item.tooltip = tooltip;
    item.accessibilityInformation = {
      label: `${task.title}, ${task.id}, ${STATUS_LABEL[task.status]}${item.description && item.description !== task.id ? `, ${item.description}` : ''}`,
    };
    return item;
  }

  /** The forge's badge (its words are the description): icon, the forge's detail and a link in the tooltip, and a click that opens the job or pull request. */
  private remoteLook(item: vscode.TreeItem, taskId: string, remote: TaskRemote, tooltip: vscode.MarkdownString): void {
    const look = remoteLook(remote.state);
    item.iconPath = new vscode.ThemeIcon(look.icon, new vscode.ThemeColor(look.color));
    if (remote.detail) tooltip.appendMarkdown('\n\n**GitHub:** ').appendText(remote.detail);
    tooltip.appendMarkdown(`\n\n[${remoteLinkLabel(remote)}](${encodeURI(remote.url)})`);
    item.command = { command: 'ralph.openRemote', title: 'Open on GitHub', arguments: [taskId] };
  }

  /** The task's place in the merge queue while the run holds it there. */
  private queued(task: Task): QueuedLive | undefined {
    return task.status === 'in_progress' ? this.live.queue?.find((q) => q.taskId === task.id) : undefined;
  }

  /** `iteration n/max · p%` (the id when the task has not run yet); `queued for merge`, `merging`… in the queue. */
  private describe(task: Task): string {
    const queued = this.queued(task);
    if (queued?.state === 'waiting' && queued.files?.length) return `merge waits on your changes to ${queued.files.join(', ')}`;
    if (queued) return QUEUE_LOOK[queued.state][1];
    if (task.status === 'needs_help' && task.blockedReason) return `asks: ${task.blockedReason}`;
    if (task.status === 'review') return 'ready for review';
    const agent = task.status === 'in_progress' ? this.live.agents?.find((a) => a.taskId === task.id) : undefined;
    const live = agent ?? (this.live.taskId === task.id && task.status === 'in_progress' ? this.live : undefined);
    const iteration = live?.iteration ?? task.iterations;
    const max = live?.maxIterations ?? task.maxIterations;
    const progress = live?.progress ?? task.progress;
    const parts: string[] = [];
    const block = this.blocks.get(task.id);
    if (block?.kind === 'invalid') parts.push(`can never start: ${block.message}`);
    else if (block)
      parts.push(`waiting on ${task.dependsOn.filter((d) => this.tasks.find((t) => t.id === d)?.status !== 'done').join(', ')}`);
    if (iteration > 0 || task.status === 'in_progress') parts.push(`iteration ${iteration}${max ? `/${max}` : ''}`);
    if (progress !== undefined) parts.push(`${progress}%`);
    // its agent slot went to another task while its gates run (issue 34)
    if (agent?.slot) parts.push(agent.slot === 'gates' ? 'gates running' : 'waiting for an agent slot');
    return parts.length > 0 ? parts.join(' · ') : task.id;
  }
}
