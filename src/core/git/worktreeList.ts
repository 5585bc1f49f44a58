import { gitStatus } from './gitExec';
/** A worktree as `git worktree list --porcelain` reports it. */
export interface Registered {
  path: string;
  head?: string;
  branch?: string;
  locked?: string;
  /** git would remove this record at `worktree prune` (its folder or git dir is gone). */
  prunable?: boolean;
}

/** The records of `git worktree list --porcelain`, one per block. */
export function parseWorktreeList(out: string): Registered[] {
  const result: Registered[] = [];
  for (const block of out.split('\n\n')) {
    const entry: Partial<Registered> = {};
    for (const line of block.split('\n')) {
      const [key, ...rest] = line.split(' ');
      const value = rest.join(' ');
      if (key === 'worktree') entry.path = value;
      else if (key === 'HEAD') entry.head = value;
      else if (key === 'branch') entry.branch = value.replace(/^refs\/heads\//, '');
      else if (key === 'locked') entry.locked = value;
      else if (key === 'prunable') entry.prunable = true;
    }
    if (entry.path) result.push(entry as Registered);
  }
  return result;
}

/**
 * One queue per repository for git commands that add, remove, prune or list worktrees. git reads
 * every registered worktree for these (and for `branch -D`), and one that another process is in
 * the middle of adding has no `commondir` yet: `fatal: failed to read .git/worktrees/<id>/commondir`.
 * Agents starting together and the merge queue's own worktree would otherwise race that way.
 */
const worktreeQueues = new Map<string, Promise<unknown>>();

export function withWorktreeLock<T>(root: string, work: () => Promise<T>): Promise<T> {
  const previous = worktreeQueues.get(root) ?? Promise.resolve();
  const run = previous.then(work, work);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  worktreeQueues.set(root, settled);
  void settled.then(() => {
    if (worktreeQueues.get(root) === settled) worktreeQueues.delete(root);
  });
  return run;
}

/** Paths with uncommitted changes (staged, unstaged, untracked) in a working tree; a rename's source too. */
export async function uncommittedFiles(worktree: string): Promise<Set<string>> {
  const files = new Set<string>();
  for (const f of (await gitStatus(worktree, ['--untracked-files=all'])).files) {
    files.add(f.path);
    if (f.from) files.add(f.from); // a rename's source
  }
  return files;
}
