import { RalphError } from '../errors';
import { commitPathspec, EXCLUDED_FROM_COMMITS, linksIn, stageWork } from './commitPaths';
import { git, GitCommandError, gitLog, runGit, streamGit } from './gitExec';
import { HeadReader } from './refRead';
import { StagedDiffReader } from './stagedDiff';

/** The last commits by the commit they start from (a few dozen: the heads a run's agents stand on). */
const LOGS = new Map<string, { count: number; entries: { sha: string; message: string }[] }>();
const MAX_LOGS = 64;

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

/**
 * Whether the repository's commit identity was checked (and the fallback set where it had none):
 * once per run, shared by the GitServices of its worktrees (they share the repository's config),
 * rather than one `git config` per task on its way to its first commit.
 */
export class IdentityCheck {
  private checked: Promise<void> | undefined;

  once(check: () => Promise<void>): Promise<void> {
    this.checked ??= check().catch((error: unknown) => {
      this.checked = undefined; // not checked: the next commit asks again
      throw error;
    });
    return this.checked;
  }
}

/** The git operations the loop needs, on real git (`runGit`: hardened options, started from the helper process). */
export class GitService {
  private readonly head: HeadReader;

  /**
   * `links`: in a task's worktree, the paths linked into it (`worktrees.link`), left out of its
   * commits while they are links (Ralph's, not the task's work; see commitPaths.ts).
   */
  constructor(
    readonly root: string,
    private readonly secrets?: SecretGuard,
    private readonly identity = new IdentityCheck(),
    private readonly links: readonly string[] = [],
  ) {
    this.head = new HeadReader(root);
  }

  /** The paths of this tree no commit takes besides Ralph's bookkeeping: the links Ralph made. */
  private ownPaths(): Promise<string[]> {
    return this.links.length === 0 ? Promise.resolve([]) : linksIn(this.root, this.links);
  }

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

  /** HEAD's commit: read from the repository's files (a worktree's too), else asked of git; undefined before the first commit. */
  async headSha(): Promise<string | undefined> {
    const read = await this.head.read();
    if (read) return read;
    const head = await runGit(this.root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}']);
    return head.code === 0 ? head.stdout.trim() : undefined; // no commits yet
  }

  /**
   * Whether there is anything `commitAll` would commit: one `git status`, which only reads the
   * working tree, so the loop runs it alongside its own bookkeeping writes (`.ralph/` state is
   * not in it). Most iterations of a long run change nothing: then this is the iteration's only
   * git process. Only whether git printed anything is kept: the list (100,000 paths after an
   * agent that created as many files) is read as it comes and let go.
   */
  async hasChangesToCommit(): Promise<boolean> {
    const args = ['status', '--porcelain', '-z', '--untracked-files=all', ...commitPathspec(await this.ownPaths())];
    let changed = false;
    const status = await streamGit(this.root, args, (text) => (changed ||= text.length > 0));
    if (status.code !== 0) throw new GitCommandError(args, status);
    return changed;
  }

  /**
   * Stages everything but the bookkeeping files and commits; undefined when nothing changed.
   * `changed`: what a `hasChangesToCommit` just taken said (spares a second `git status`).
   */
  async commitAll(message: string, changed?: boolean): Promise<CommitInfo | undefined> {
    if (!(changed ?? (await this.hasChangesToCommit()))) return undefined;
    // whatever the ignore rules say: an allowlist .gitignore, an ignored .ralph/ (commitPaths.ts)
    await stageWork(this.root, await this.ownPaths());
    const { files, withheld } = await this.stagedChanges();
    // a file whose added lines hold a secret is unstaged; it stays as it is in the working tree
    if (withheld.length > 0) await this.run(['reset', '-q', '--', ...withheld]);
    const left = new Set(withheld);
    const staged = left.size === 0 ? files : files.filter((f) => !left.has(f));
    if (staged.length === 0 && withheld.length > 0)
      throw new RalphError(`nothing committed: ${withheld.join(', ')} hold a secret value and stay uncommitted`, 'secret-withheld');
    if (staged.length === 0) return undefined;
    await this.ensureIdentity();
    await this.run(['commit', '--no-verify', '-q', '-F', '-'], message);
    const sha = (await this.head.read()) ?? (await this.run(['rev-parse', 'HEAD'])).trim();
    return { sha, files: staged, ...(withheld.length > 0 ? { withheld } : {}) };
  }

  /**
   * What is staged, in one git call read as it comes (stagedDiff.ts): the paths and, when secrets
   * are guarded, the files whose added lines hold one (looked for in the `-U0` patch).
   */
  private async stagedChanges(): Promise<{ files: string[]; withheld: string[] }> {
    const base = ['diff', '--cached', '--no-color', '--no-ext-diff', '--no-textconv', '-z'];
    const args = this.secrets ? [...base, '--text', '-U0', '--patch-with-raw'] : [...base, '--raw'];
    const reader = new StagedDiffReader(this.secrets);
    const diff = await streamGit(this.root, args, (text) => reader.push(text));
    if (diff.code !== 0) throw new GitCommandError(args, diff);
    return reader.end();
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

  /**
   * The last commits, newest first; cached per HEAD (read from the ref files, no process). A
   * commit's history never changes, so the cache is shared: agents that start on one commit ask git once.
   */
  async log(maxCount: number): Promise<{ sha: string; message: string }[]> {
    const head = await this.head.read();
    const cached = head ? LOGS.get(head) : undefined;
    if (cached && cached.count >= maxCount) return cached.entries.slice(0, maxCount);
    if (!head && !(await this.headSha())) return [];
    const entries = (await gitLog(this.root, [`-n${maxCount}`])).map((e) => ({ sha: e.hash, message: e.subject }));
    if (head) {
      LOGS.set(head, { count: maxCount, entries });
      if (LOGS.size > MAX_LOGS) LOGS.delete(LOGS.keys().next().value!); // the oldest
    }
    return entries;
  }

  /** Commits need an author; CI machines and fresh containers often have none configured. */
  private ensureIdentity(): Promise<void> {
    return this.identity.once(() => this.checkIdentity());
  }

  private async checkIdentity(): Promise<void> {
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
