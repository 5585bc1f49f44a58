import { runGit } from '../../git/gitExec';
import type { TaskStore } from '../../tasks/store';
import { closingLine, type RepoRef, repoOfRemote } from '../../git/issueRefs';

/**
 * The lines the merge queue adds to a task's merge commit: `Closes #12` for a task imported from
 * an issue, so that pushing the target closes the issue. The repository's `origin` is read once.
 */
export function mergeNotes(store: TaskStore, workspace: string): (taskId: string) => Promise<string[]> {
  let origin: Promise<RepoRef | undefined> | undefined;
  return async (taskId) => {
    const task = await store.get(taskId);
    if (!task.source) return [];
    origin ??= runGit(workspace, ['remote', 'get-url', 'origin']).then(
      (r) => (r.code === 0 ? repoOfRemote(r.stdout) : undefined),
      () => undefined,
    );
    const line = closingLine(task.source, await origin);
    return line ? [line] : [];
  };
}
