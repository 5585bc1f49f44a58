import { promises as fs } from 'node:fs';
import { runGit } from '../git/gitExec';
import { insideRoot } from './commandPaths';

/** Which of some files the running task changed: the policy treats running one like running inline code. */
export interface ChangedFiles {
  changed(files: readonly string[]): Promise<ReadonlySet<string>>;
}

/**
 * What the task changed, told without trusting the agent: a file whose status changed (ctime,
 * which no command can set back) since the task began here, a file that does not exist yet
 * (the line makes it), and inside the task's tree what git tells from the task's base commit
 * (committed since, changed or untracked). With no base (a repository without commits) every
 * file of the tree counts as the task's. Git failing counts every file as changed. Before any
 * task began, only the change times count.
 */
export class TaskChanges {
  private base: string | undefined;
  private since = Date.now();
  /** No task began: only what changed since this object was made counts (no base to compare with). */
  private taskless = true;

  /** The task starts (or resumes) here; `base` is the commit it started from. */
  begin(base: string | undefined, now = Date.now()): void {
    this.base = base;
    this.since = now;
    this.taskless = false;
  }

  /** The view of a tree (the workspace, or the task's worktree). */
  in(root: string): ChangedFiles {
    return { changed: (files) => this.changed(root, files) };
  }

  private async changed(root: string, files: readonly string[]): Promise<ReadonlySet<string>> {
    const out = new Set<string>();
    const inTree = new Map<string, string>();
    for (const file of new Set(files)) {
      const stat = await fs.stat(file).catch(() => undefined);
      if (!stat || stat.ctimeMs > this.since) {
        out.add(file);
        continue;
      }
      const rel = insideRoot(file, root);
      if (rel !== undefined && rel.length > 0) inTree.set(rel.join('/'), file);
    }
    if (inTree.size === 0 || this.taskless) return out;
    const rels = [...inTree.keys()];
    if (!this.base) return new Set([...out, ...inTree.values()]);
    const [diff, untracked] = await Promise.all([
      runGit(root, ['diff', '--name-only', '--no-renames', '-z', this.base, '--', ...rels]),
      runGit(root, ['ls-files', '-z', '--others', '--exclude-standard', '--', ...rels]),
    ]);
    if (diff.code !== 0 || untracked.code !== 0) return new Set([...out, ...inTree.values()]);
    for (const rel of [...diff.stdout.split('\0'), ...untracked.stdout.split('\0')]) {
      const file = inTree.get(rel);
      if (file) out.add(file);
    }
    return out;
  }
}
