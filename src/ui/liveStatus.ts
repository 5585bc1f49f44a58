/** The run's state as the window shows it (the `ralph.state` context key). */
export type RunState = 'idle' | 'running' | 'paused' | 'stopping';

/** One running agent of a (parallel) run. */
export interface AgentLive {
  taskId: string;
  title?: string;
  iteration?: number;
  maxIterations?: number;
  progress?: number;
  /** Its iteration's model as the core names it (`gpt-4.1`, `Claude Code: opus`), and its agent (`builtin`, `claude-code`…). */
  model?: string;
  agent?: string;
  /** Its worktree (absolute), in parallel runs. */
  worktree?: string;
  /** Without an agent slot: its gates run (`gates`), or they sent it back and it waits for a slot (`waiting`). Absent: talking to the model. */
  slot?: 'gates' | 'waiting';
}

/** Merge-queue states in which the queue holds a task. */
export type QueuedState = 'queued' | 'merging' | 'checking' | 'waiting';

/** A task whose work is in the merge queue. */
export interface QueuedLive {
  taskId: string;
  state: QueuedState;
  detail?: string;
  /** `waiting`: the person's files the merge would overwrite. */
  files?: readonly string[];
}

/** What the status bar and tree show about the run in progress. */
export interface LiveStatus {
  state: RunState;
  /** The agent last heard of (the one the single-agent status bar shows). */
  taskId?: string;
  title?: string;
  iteration?: number;
  maxIterations?: number;
  progress?: number;
  /** Its iteration's model and agent (`AgentLive`). */
  model?: string;
  agent?: string;
  /** Every running agent, in the order they started. */
  agents?: readonly AgentLive[];
  /** Tasks in the merge queue, in order. */
  queue?: readonly QueuedLive[];
  /** A warning that waits for an answer (the status bar's attention state), until answered or the run ends. */
  attention?: string;
}
