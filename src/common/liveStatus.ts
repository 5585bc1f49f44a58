/** The run's state as the window shows it (the `ralph.state` context key). */
export type RunState = 'idle' | 'running' | 'paused' | 'stopping';

/** What the status bar and tree show about the run in progress. */
export interface LiveStatus {
  state: RunState;
  taskId?: string;
  title?: string;
  iteration?: number;
  maxIterations?: number;
  progress?: number;
  /** A warning that waits for an answer (the status bar's attention state), until answered or the run ends. */
  attention?: string;
}
