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

  private common(): Promise<string> {
    this.commonDir ??= git(this.root, ['rev-parse', '--git-common-dir']).then((out) => path.resolve(this.root, out.trim()));
    return this.commonDir;
  }

  /** The commit `refs/heads/<branch>` points at; undefined when there is no such branch. */
  async branchTip(branch: string): Promise<string | undefined> {
    const common = await this.common();
    const loose = await readIfExists(path.join(common, 'refs', 'heads', ...branch.split('/')));
    if (loose !== undefined && /^[0-9a-f]{40,64}$/.test(loose.trim())) return loose.trim();
    if (loose === undefined) {
      const packed = await readIfExists(path.join(common, 'packed-refs'));
      const sha = packed
        ?.split('\n')
        .find((l) => l.endsWith(` refs/heads/${branch}`))
        ?.split(' ')[0];
      if (sha && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
    }
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

  private async listed(branch: string): Promise<string[]> {
    const listed = await git(this.root, ['worktree', 'list', '--porcelain']);
    return listed
      .split('\n\n')
      .filter((block) => block.split('\n').includes(`branch refs/heads/${branch}`))
      .map((block) => block.split('\n')[0].replace(/^worktree /, ''));
  }
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch {
    return undefined;
  }
}
