import * as path from 'node:path';
import { RalphError } from '../errors';
import { readTextIfExists } from '../util/atomicWrite';
import { git, gitLog, gitStatus, runGit } from './gitExec';

/**
 * Never part of an iteration commit: the task store (rewritten every iteration) and the config
 * (an agent that rewrote it must not get its gates committed and believed by the next run).
 */
const EXCLUDED_FROM_COMMITS = ['.ralph/tasks.json', '.ralph/config.json'];
const COMMIT_PATHSPEC = ['--', '.', ...EXCLUDED_FROM_COMMITS.map((p) => `:(exclude)${p}`)];

const FALLBACK_IDENTITY = { name: 'Ralph Loop', email: 'ralph-loop@localhost' };

export interface CommitInfo {
  sha: string;
  files: string[];
  /** Files left out of the commit because their added lines hold a known secret value (still in the working tree). */
  withheld?: string[];
}

/** Tells whether text holds a known secret value (the run's SecretRedactor). */
export interface SecretGuard {
  contains(text: string): boolean;
}

/** The git operations the loop needs, on real git (`runGit`: hardened options, started from the helper process). */
export class GitService {
  private identityChecked = false;
  private logCache: { head: string; count: number; entries: { sha: string; message: string }[] } | undefined;

  constructor(
    readonly root: string,
    private readonly secrets?: SecretGuard,
  ) {}

  /** git in this repository; throws a GitCommandError with git's own message on a non-zero exit. */
  private run(args: readonly string[], input?: string): Promise<string> {
    return git(this.root, args, input === undefined ? {} : { input });
  }

  async isRepo(): Promise<boolean> {
    const top = await runGit(this.root, ['rev-parse', '--show-toplevel']);
    return top.code === 0 && top.stdout.trim().length > 0;
  }

  async init(): Promise<void> {
    await this.run(['init', '-q']);
  }

  async headSha(): Promise<string | undefined> {
    const head = await runGit(this.root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
    return head.code === 0 ? head.stdout.trim() : undefined; // no commits yet
  }

  /**
   * Whether there is anything `commitAll` would commit: one `git status`, which only reads the
   * working tree, so the loop runs it alongside its own bookkeeping writes (`.ralph/` state is
   * not in it). Most iterations of a long run change nothing: then this is the iteration's only
   * git process.
   */
  async hasChangesToCommit(): Promise<boolean> {
    return (await gitStatus(this.root, ['--untracked-files=all', ...COMMIT_PATHSPEC])).files.length > 0;
  }

  /**
   * Stages everything but the bookkeeping files and commits; undefined when nothing changed.
   * `changed`: what a `hasChangesToCommit` just taken said (spares a second `git status`).
   */
  async commitAll(message: string, changed?: boolean): Promise<CommitInfo | undefined> {
    if (!(changed ?? (await this.hasChangesToCommit()))) return undefined;
    const pathspec = COMMIT_PATHSPEC;
    await this.run(['add', '-A', ...pathspec]);
    const withheld = await this.withholdSecrets();
    const staged = (await this.run(['diff', '--no-ext-diff', '--no-textconv', '--cached', '--name-only'])).split('\n').filter(Boolean);
    if (staged.length === 0 && withheld.length > 0)
      throw new RalphError(`nothing committed: ${withheld.join(', ')} hold a secret value and stay uncommitted`, 'secret-withheld');
    if (staged.length === 0) return undefined;
    await this.ensureIdentity();
    await this.run(['commit', '--no-verify', '-q', '-F', '-'], message);
    const sha = (await this.run(['rev-parse', 'HEAD'])).trim();
    return { sha, files: staged, ...(withheld.length > 0 ? { withheld } : {}) };
  }

  /**
   * Unstages every file whose added lines hold a known secret value: a key never enters the
   * history (where it would outlive any later fix). The file stays as it is in the working tree.
   */
  private async withholdSecrets(): Promise<string[]> {
    if (!this.secrets) return [];
    const diff = await this.run(['diff', '--cached', '--no-color', '--no-ext-diff', '--text', '-U0']);
    if (!this.secrets.contains(diff)) return [];
    const files = new Set<string>();
    let current: string | undefined;
    for (const line of diff.split('\n')) {
      if (line.startsWith('+++ ')) current = line === '+++ /dev/null' ? undefined : line.slice(6);
      else if (current && line.startsWith('+') && this.secrets.contains(line)) files.add(current);
    }
    const withheld = [...files];
    if (withheld.length > 0) await this.run(['reset', '-q', '--', ...withheld]);
    return withheld;
  }

  /** Files added, modified and deleted between `base` and HEAD (bookkeeping files excluded). */
  async changesSince(base: string | undefined): Promise<{ added: string[]; modified: string[]; deleted: string[] }> {
    const changes = { added: [] as string[], modified: [] as string[], deleted: [] as string[] };
    const head = await this.headSha();
    if (!head || !base || base === head) return changes;
    const out = await this.run(['diff', '--no-ext-diff', '--no-textconv', '--name-status', '--no-renames', `${base}..${head}`]);
    for (const line of out.split('\n').filter(Boolean)) {
      const [status, file] = line.split('\t');
      if (!file || EXCLUDED_FROM_COMMITS.includes(file)) continue;
      if (status.startsWith('A')) changes.added.push(file);
      else if (status.startsWith('D')) changes.deleted.push(file);
      else changes.modified.push(file);
    }
    return changes;
  }

  /** The last commits, newest first; cached per HEAD (read from the ref files, no process). */
  async log(maxCount: number): Promise<{ sha: string; message: string }[]> {
    const head = await this.readHead();
    if (head && this.logCache?.head === head && this.logCache.count >= maxCount) return this.logCache.entries.slice(0, maxCount);
    if (!(await this.headSha())) return [];
    const entries = (await gitLog(this.root, [`-n${maxCount}`])).map((e) => ({ sha: e.hash, message: e.subject }));
    if (head) this.logCache = { head, count: maxCount, entries };
    return entries;
  }

  /** HEAD's sha from `.git/HEAD` and the ref it names, without running git; undefined when unsure. */
  private async readHead(): Promise<string | undefined> {
    const gitDir = path.join(this.root, '.git');
    const head = (await readTextIfExists(path.join(gitDir, 'HEAD')).catch(() => undefined))?.trim();
    if (!head) return undefined;
    if (/^[0-9a-f]{40}$/.test(head)) return head;
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref) return undefined;
    const loose = (await readTextIfExists(path.join(gitDir, ref)).catch(() => undefined))?.trim();
    if (loose && /^[0-9a-f]{40}$/.test(loose)) return loose;
    const packed = await readTextIfExists(path.join(gitDir, 'packed-refs')).catch(() => undefined);
    return packed
      ?.split('\n')
      .find((line) => line.endsWith(` ${ref}`))
      ?.slice(0, 40);
  }

  /** Commits need an author; CI machines and fresh containers often have none configured. */
  private async ensureIdentity(): Promise<void> {
    if (this.identityChecked) return;
    this.identityChecked = true;
    const { name, email } = await this.configuredIdentity();
    if (!name) await this.run(['config', '--local', 'user.name', FALLBACK_IDENTITY.name]);
    if (!email) await this.run(['config', '--local', 'user.email', FALLBACK_IDENTITY.email]);
  }

  /** `user.name` and `user.email` as git resolves them (the last value of each), in one git call. */
  private async configuredIdentity(): Promise<{ name?: string; email?: string }> {
    const listed = await runGit(this.root, ['config', '--get-regexp', '^user\\.(name|email)$']);
    const values = new Map<string, string>();
    for (const line of listed.code === 0 ? listed.stdout.split('\n') : []) {
      const at = line.indexOf(' ');
      if (at > 0) values.set(line.slice(0, at), line.slice(at + 1).trim());
    }
    return { name: values.get('user.name') || undefined, email: values.get('user.email') || undefined };
  }
}
