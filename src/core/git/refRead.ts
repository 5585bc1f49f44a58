import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { git, runGit } from './gitExec';

/**
 * Branch tips and worktree heads read from the repository's files instead of a git process
 * each: the merge queue asks them for every prefix it builds and every task it lands, and a
 * spawn costs far more than a read. Anything unusual (a symbolic ref, a ref git would have to
 * resolve, no file) falls back to asking git, so the answer is always git's.
 */
export class RefReader {
  private commonDir: Promise<string> | undefined;

  constructor(private readonly root: string) {}

  /** The repository's common git dir: from `.git` (as HeadReader reads it), else asked of git; once. */
  common(): Promise<string> {
    this.commonDir ??= gitDirsOf(this.root).then(
      async (dirs) => dirs?.common ?? path.resolve(this.root, (await git(this.root, ['rev-parse', '--git-common-dir'])).trim()),
    );
    return this.commonDir;
  }

  /** The commit `refs/heads/<branch>` points at; undefined when there is no such branch. */
  async branchTip(branch: string): Promise<string | undefined> {
    const common = await this.common();
    const read = await branchFromFiles(common, branch);
    if (read !== undefined) return read === ABSENT ? undefined : read;
    return this.asked(branch);
  }

  private async asked(branch: string): Promise<string | undefined> {
    const result = await runGit(this.root, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`]);
    return result.code === 0 ? result.stdout.trim() : undefined;
  }

  /**
   * The working trees (the main one and every linked one) whose HEAD is `refs/heads/<branch>`,
   * from their HEAD files: `<common>/HEAD` for the main tree, `<common>/worktrees/<name>/HEAD`
   * (and `gitdir`, which names the tree) for linked ones.
   */
  async checkoutsOf(branch: string): Promise<string[]> {
    const common = await this.common();
    const wanted = `ref: refs/heads/${branch}`;
    const found: string[] = [];
    const mainHead = await readIfExists(path.join(common, 'HEAD'));
    if (mainHead?.trim() === wanted) {
      // the main working tree is the folder of a `.git` directory; a bare or separated repository: ask git
      if (path.basename(common) !== '.git') return this.listed(branch);
      found.push(path.dirname(common));
    }
    const linked = path.join(common, 'worktrees');
    for (const name of await fs.readdir(linked).catch(() => [] as string[])) {
      const head = await readIfExists(path.join(linked, name, 'HEAD'));
      if (head?.trim() !== wanted) continue;
      const gitdir = (await readIfExists(path.join(linked, name, 'gitdir')))?.trim();
      if (!gitdir) return this.listed(branch);
      found.push(path.dirname(gitdir));
    }
    return found;
  }

  /**
   * Whether, by the repository's files, it has no linked worktree at all and no branch under
   * `refs/heads/<prefix>` (loose or packed): the usual start of a run, with nothing a crash left.
   * False when unsure (refs in a reftable, a folder that cannot be read), so that git is asked.
   */
  async noLinkedWorktreesNorBranches(prefix: string): Promise<boolean> {
    const common = await this.common();
    const count = (dir: string) =>
      fs.readdir(dir).then(
        (names) => names.length,
        (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? 0 : 1),
      );
    const [linked, loose, packed, reftable] = await Promise.all([
      count(path.join(common, 'worktrees')),
      count(path.join(common, 'refs', 'heads', ...prefix.split('/').filter(Boolean))),
      readIfExists(path.join(common, 'packed-refs')),
      fs.lstat(path.join(common, 'reftable')).then(
        () => true,
        () => false,
      ),
    ]);
    return !reftable && linked === 0 && loose === 0 && !(packed ?? '').includes(` refs/heads/${prefix}`);
  }

  private async listed(branch: string): Promise<string[]> {
    const listed = await git(this.root, ['worktree', 'list', '--porcelain']);
    return listed
      .split('\n\n')
      .filter((block) => block.split('\n').includes(`branch refs/heads/${branch}`))
      .map((block) => block.split('\n')[0].replace(/^worktree /, ''));
  }
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** No such branch: neither a loose ref nor a packed one, in a repository whose refs are files. */
const ABSENT = 'absent';

/**
 * A branch's commit from its loose ref, else from `packed-refs` (a loose ref wins, as in git);
 * `absent` when neither has it and the refs are files (not a `reftable`); undefined when unsure.
 */
async function branchFromFiles(common: string, branch: string): Promise<string | undefined> {
  const loose = (await readIfExists(path.join(common, 'refs', 'heads', ...branch.split('/'))))?.trim();
  if (loose !== undefined) return SHA.test(loose) ? loose : undefined;
  const packedFile = await readIfExists(path.join(common, 'packed-refs'));
  const packed = packedFile
    ?.split('\n')
    .find((l) => l.endsWith(` refs/heads/${branch}`))
    ?.split(' ')[0];
  if (packed !== undefined) return SHA.test(packed) ? packed : undefined;
  if (await fs.lstat(path.join(common, 'reftable')).catch(() => undefined)) return undefined;
  return (await fs.lstat(path.join(common, 'refs', 'heads')).catch(() => undefined))?.isDirectory() ? ABSENT : undefined;
}

/**
 * A working tree's HEAD read from its files: `.git` (a folder, or in a linked worktree a file
 * naming its git dir, whose `commondir` names the shared one), then the branch HEAD names.
 * The loop reads it at every commit, task start and end; undefined when unsure (a detached
 * HEAD it cannot trust, a ref that is not a branch, a repository kept some other way), so that
 * the caller asks git.
 */
export class HeadReader {
  private dirs: { gitDir: string; common: string } | undefined;

  constructor(private readonly root: string) {}

  async read(): Promise<string | undefined> {
    const dirs = (this.dirs ??= await gitDirsOf(this.root));
    if (!dirs) return undefined;
    const head = (await readIfExists(path.join(dirs.gitDir, 'HEAD')))?.trim();
    if (head === undefined) return undefined;
    if (SHA.test(head)) return head;
    const branch = /^ref: refs\/heads\/(.+)$/.exec(head)?.[1];
    const read = branch ? await branchFromFiles(dirs.common, branch) : undefined;
    return read === ABSENT ? undefined : read; // a branch with no commit yet: git says so
  }

  /**
   * The branch HEAD names (`ref: refs/heads/<name>`, as `git symbolic-ref --short HEAD` says it,
   * whether or not it has a commit yet); `null` when HEAD is detached; undefined when unsure (a
   * working tree kept some other way, a HEAD that names no branch), so that the caller asks git.
   */
  async branch(): Promise<string | null | undefined> {
    const dirs = (this.dirs ??= await gitDirsOf(this.root));
    if (!dirs) return undefined;
    const head = (await readIfExists(path.join(dirs.gitDir, 'HEAD')))?.trim();
    if (head === undefined) return undefined;
    if (SHA.test(head)) return null;
    return /^ref: refs\/heads\/(.+)$/.exec(head)?.[1];
  }
}

/** The git dir of a working tree and the repository's common dir, from `.git` alone. */
async function gitDirsOf(root: string): Promise<{ gitDir: string; common: string } | undefined> {
  const dotGit = path.join(root, '.git');
  const stat = await fs.stat(dotGit).catch(() => undefined);
  if (stat?.isDirectory()) return { gitDir: dotGit, common: dotGit };
  if (!stat?.isFile()) return undefined;
  const named = /^gitdir: (.+)$/m.exec((await readIfExists(dotGit)) ?? '')?.[1]?.trim();
  if (!named) return undefined;
  const gitDir = path.resolve(root, named);
  const commonDir = (await readIfExists(path.join(gitDir, 'commondir')))?.trim();
  return { gitDir, common: commonDir ? path.resolve(gitDir, commonDir) : gitDir };
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}
