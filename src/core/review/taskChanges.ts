import { existsSync } from 'node:fs';
import { git, runGit } from '../git/gitExec';
import { WorktreeManager } from '../git/worktrees';
import type { Task } from '../tasks/schema';
import type { ReviewHold } from '../record/holdSchema';

/** One file of a task's changes. */
export interface ChangedFile {
  path: string;
  status: 'added' | 'modified' | 'deleted';
}

/**
 * What a task changed, as a diff of two sides: `base` (a commit) against `head` (a commit or a
 * tree), or against the files on disk in `worktree` when there is no `head`. The editor shows it
 * as a multi-file diff; `ralph review diff` prints it.
 */
export interface TaskChanges {
  taskId: string;
  /**
   * `would-land`: the held result against the target's current tip (merged again onto it when
   * the tip moved); `landed`: the commit the merge queue landed; `worktree`: what the task's
   * worktree holds now, against where its branch left the target; `none`: nothing to show.
   */
  kind: 'would-land' | 'landed' | 'worktree' | 'none';
  title: string;
  base?: string;
  head?: string;
  worktree?: string;
  files: ChangedFile[];
  /** Something the person should know about the comparison (the tip moved, conflicts). */
  note?: string;
}

const STATUS: Record<string, ChangedFile['status']> = { A: 'added', M: 'modified', D: 'deleted', T: 'modified' };

/**
 * A task's changes: for a task held for review, exactly what would land on the target's tip now;
 * for a task that landed, its landing commit; for a task with a worktree, what that holds now
 * (uncommitted and untracked files included).
 */
export async function taskChanges(root: string, task: Task, options: { target: string; hold?: ReviewHold }): Promise<TaskChanges> {
  if (task.status === 'review' && options.hold) return wouldLand(root, task, options.hold);
  const manager = new WorktreeManager(root);
  const worktree = (await manager.list().catch(() => [])).find((w) => w.taskId === task.id);
  if (worktree && existsSync(worktree.path)) return worktreeChanges(task, worktree.path, options.target);
  const landed = await landingCommit(root, task.id, options.target);
  if (landed) {
    return {
      taskId: task.id,
      kind: 'landed',
      title: `${task.id}: what it landed on ${options.target} (${landed.slice(0, 10)})`,
      base: `${landed}^`,
      head: landed,
      files: await diffFiles(root, [`${landed}^`, landed]),
    };
  }
  return {
    taskId: task.id,
    kind: 'none',
    title: `${task.id}: no changes to show`,
    files: [],
    note: `${task.id} has no worktree, no held result and no commit on ${options.target} that landed it`,
  };
}

/** The held result against the target's tip: as checked while the tip stays; merged again onto a moved tip. */
async function wouldLand(root: string, task: Task, hold: ReviewHold): Promise<TaskChanges> {
  const tip = (await runGit(root, ['rev-parse', '--verify', '--quiet', `refs/heads/${hold.target}^{commit}`])).stdout.trim() || hold.base;
  const title = `${task.id}: what would land on ${hold.target}`;
  if (tip === hold.base)
    return {
      taskId: task.id,
      kind: 'would-land',
      title,
      base: hold.base,
      head: hold.result,
      files: await diffFiles(root, [hold.base, hold.result]),
    };
  // the tip moved since the check: the same merge onto the new tip, without a worktree (approving re-checks it)
  const branchTip = hold.branchTip ?? `refs/heads/ralph/${task.id}`;
  const merged = await runGit(root, ['merge-tree', '--write-tree', '--name-only', '--no-messages', tip, branchTip]);
  const tree = merged.stdout.split('\n')[0]?.trim();
  if (merged.code > 1 || !/^[0-9a-f]{40,64}$/.test(tree ?? '')) {
    return {
      taskId: task.id,
      kind: 'would-land',
      title,
      base: hold.base,
      head: hold.result,
      files: await diffFiles(root, [hold.base, hold.result]),
      note: `${hold.target} moved since the check and the branch could not be merged onto it here; shown against the checked base`,
    };
  }
  const conflicts =
    merged.code === 1
      ? merged.stdout
          .split('\n')
          .slice(1)
          .map((l) => l.trim())
          .filter(Boolean)
      : [];
  return {
    taskId: task.id,
    kind: 'would-land',
    title,
    base: tip,
    head: tree,
    files: await diffFiles(root, [tip, tree]),
    note:
      conflicts.length > 0
        ? `${hold.target} moved since the check: merging onto its tip conflicts in ${conflicts.join(', ')} (approving sends the task back to its agent)`
        : `${hold.target} moved since the check: shown merged onto its current tip; approving re-runs the check`,
  };
}

/** What the worktree holds now against the point its branch left the target. */
async function worktreeChanges(task: Task, worktree: string, target: string): Promise<TaskChanges> {
  const base =
    (await runGit(worktree, ['merge-base', 'HEAD', `refs/heads/${target}`])).stdout.trim() ||
    (await git(worktree, ['rev-parse', 'HEAD'])).trim();
  const tracked = await diffFiles(worktree, [base]);
  const untracked = (await git(worktree, ['ls-files', '--others', '--exclude-standard', '-z']))
    .split('\0')
    .filter(Boolean)
    .map((path) => ({ path, status: 'added' as const }));
  const files = [...tracked, ...untracked.filter((u) => !tracked.some((t) => t.path === u.path))].sort((a, b) =>
    a.path.localeCompare(b.path),
  );
  return { taskId: task.id, kind: 'worktree', title: `${task.id}: its worktree now, against ${target}`, base, worktree, files };
}

/** The commit of `target` that landed the task (the merge queue's trailers name it). */
export async function landingCommit(root: string, taskId: string, target: string): Promise<string | undefined> {
  const out = await runGit(root, ['log', '-F', `--grep=Ralph-Task: ${taskId}`, '--format=%H%x00%B%x01', `refs/heads/${target}`]);
  if (out.code !== 0) return undefined;
  for (const record of out.stdout.split('\x01')) {
    const [sha, body] = record.trim().split('\0');
    const lines = body?.split('\n') ?? [];
    if (sha && lines.includes(`Ralph-Task: ${taskId}`) && lines.some((l) => l.startsWith('Ralph-Branch-Tip: '))) return sha;
  }
  return undefined;
}

async function diffFiles(cwd: string, sides: string[]): Promise<ChangedFile[]> {
  const out = await git(cwd, ['diff', '--name-status', '--no-renames', '-z', ...sides, '--']);
  const fields = out.split('\0');
  const files: ChangedFile[] = [];
  for (let i = 0; i + 1 < fields.length; i += 2)
    if (fields[i]) files.push({ path: fields[i + 1], status: STATUS[fields[i][0]] ?? 'modified' });
  return files;
}

/** The changes as a unified diff (what `ralph review diff` prints). */
export async function unifiedDiff(root: string, changes: TaskChanges): Promise<string> {
  if (!changes.base) return '';
  if (changes.head) return git(root, ['diff', '--no-color', '--no-ext-diff', changes.base, changes.head, '--']);
  const wt = changes.worktree ?? root;
  const tracked = await git(wt, ['diff', '--no-color', '--no-ext-diff', changes.base, '--']);
  const untracked = changes.files.filter((f) => f.status === 'added');
  const extra: string[] = [];
  for (const file of untracked) {
    const known = (await runGit(wt, ['ls-files', '--error-unmatch', file.path])).code === 0;
    if (known) continue;
    // an untracked file: its whole content as added lines
    extra.push((await runGit(wt, ['diff', '--no-color', '--no-index', '/dev/null', file.path])).stdout);
  }
  return [tracked, ...extra].filter(Boolean).join('');
}
