import type { GitService } from '../git/gitService';
import type { RalphPaths } from '../paths';
import type { CheckpointStore } from './checkpoint';
import type { TaskStore } from '../tasks/store';

/** A workspace's task records and its git, as the façade (core/ralph.ts) hands them to work it wires. */
export interface TaskRecords {
  paths: RalphPaths;
  store: TaskStore;
  checkpoints: CheckpointStore;
  git: GitService;
}
