import * as path from 'node:path';

/** Locations of Ralph's own files in a workspace (DESIGN §3). */
export class RalphPaths {
  readonly dir: string;

  constructor(readonly workspace: string) {
    this.dir = path.join(workspace, '.ralph');
  }

  get config(): string {
    return path.join(this.dir, 'config.json');
  }
  get tasks(): string {
    return path.join(this.dir, 'tasks.json');
  }
  get lock(): string {
    return path.join(this.dir, 'run.lock');
  }
  get stateDir(): string {
    return path.join(this.dir, 'state');
  }
  state(taskId: string): string {
    return path.join(this.dir, 'state', `${taskId}.json`);
  }
  progress(taskId: string): string {
    return path.join(this.dir, 'progress', `${taskId}.md`);
  }
  reportsDir(taskId: string): string {
    return path.join(this.dir, 'reports', taskId);
  }
  /** Low-severity findings, logged and never blocking (seed 003: "Low → log to observations"). */
  get observations(): string {
    return path.join(this.dir, 'observations.md');
  }
  runLog(runId: string): string {
    return path.join(this.dir, 'runs', `${runId}.ndjson`);
  }
  /** Workspace-relative form, as shown to the model and in commits. */
  relative(file: string): string {
    return path.relative(this.workspace, file).split(path.sep).join('/');
  }
}
