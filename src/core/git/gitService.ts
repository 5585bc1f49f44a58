import * as path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { readTextIfExists, writeFileAtomic } from '../util/atomicWrite';

/** Bookkeeping files the orchestrator rewrites every iteration; never part of an iteration commit. */
const EXCLUDED_FROM_COMMITS = ['.ralph/tasks.json'];

const FALLBACK_IDENTITY = { name: 'Ralph Loop', email: 'ralph-loop@localhost' };

export interface CommitInfo {
  sha: string;
  files: string[];
}

/** The git operations the loop needs, on real git through simple-git. */
export class GitService {
  private readonly git: SimpleGit;
  private identityChecked = false;

  constructor(readonly root: string) {
    this.git = simpleGit({ baseDir: root, binary: 'git', maxConcurrentProcesses: 2 });
  }

  async isRepo(): Promise<boolean> {
    try {
      return (await this.git.revparse(['--show-toplevel'])).trim().length > 0;
    } catch {
      return false;
    }
  }

  async init(): Promise<void> {
    await this.git.init();
  }

  async headSha(): Promise<string | undefined> {
    try {
      return (await this.git.revparse(['HEAD'])).trim();
    } catch {
      return undefined; // no commits yet
    }
  }

  /** Files with uncommitted changes (tracked or new, not ignored), bookkeeping excluded. */
  async changedFiles(): Promise<string[]> {
    const status = await this.git.status(['--untracked-files=all']);
    return status.files.map((f) => f.path).filter((p) => !EXCLUDED_FROM_COMMITS.includes(p));
  }

  /** Stages everything but the bookkeeping files and commits; undefined when nothing changed. */
  async commitAll(message: string): Promise<CommitInfo | undefined> {
    const pathspec = ['-A', '--', '.', ...EXCLUDED_FROM_COMMITS.map((p) => `:(exclude)${p}`)];
    await this.git.raw(['add', ...pathspec]);
    const staged = (await this.git.diff(['--cached', '--name-only'])).split('\n').filter(Boolean);
    if (staged.length === 0) return undefined;
    await this.ensureIdentity();
    await this.git.commit(message, undefined, { '--no-verify': null });
    const sha = (await this.git.revparse(['HEAD'])).trim();
    return { sha, files: staged };
  }

  /** Files added, modified and deleted between `base` and HEAD (bookkeeping files excluded). */
  async changesSince(base: string | undefined): Promise<{ added: string[]; modified: string[]; deleted: string[] }> {
    const changes = { added: [] as string[], modified: [] as string[], deleted: [] as string[] };
    const head = await this.headSha();
    if (!head || !base || base === head) return changes;
    const out = await this.git.raw(['diff', '--name-status', '--no-renames', `${base}..${head}`]);
    for (const line of out.split('\n').filter(Boolean)) {
      const [status, file] = line.split('\t');
      if (!file || EXCLUDED_FROM_COMMITS.includes(file)) continue;
      if (status.startsWith('A')) changes.added.push(file);
      else if (status.startsWith('D')) changes.deleted.push(file);
      else changes.modified.push(file);
    }
    return changes;
  }

  /**
   * Restores the working tree and index to `commit` (uncommitted changes are lost). The task
   * store is kept as it is now: it may be tracked from an older commit, and resetting it would
   * undo the status of every task.
   */
  async resetHard(commit: string): Promise<void> {
    const store = path.join(this.root, EXCLUDED_FROM_COMMITS[0]);
    const saved = await readTextIfExists(store);
    await this.git.raw(['reset', '--hard', commit]);
    if (saved !== undefined) await writeFileAtomic(store, saved);
  }

  async log(maxCount: number): Promise<{ sha: string; message: string }[]> {
    if (!(await this.headSha())) return [];
    const log = await this.git.log({ maxCount });
    return log.all.map((entry) => ({ sha: entry.hash, message: entry.message }));
  }

  /** Commits need an author; CI machines and fresh containers often have none configured. */
  private async ensureIdentity(): Promise<void> {
    if (this.identityChecked) return;
    this.identityChecked = true;
    const name = await this.configValue('user.name');
    const email = await this.configValue('user.email');
    if (!name) await this.git.addConfig('user.name', FALLBACK_IDENTITY.name, false, 'local');
    if (!email) await this.git.addConfig('user.email', FALLBACK_IDENTITY.email, false, 'local');
  }

  private async configValue(key: string): Promise<string | undefined> {
    try {
      const value = (await this.git.raw(['config', '--get', key])).trim();
      return value || undefined;
    } catch {
      return undefined;
    }
  }
}
