import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { PathEscapeError } from '../../../src/core/errors';
import { WorkspaceScope } from '../../../src/core/guards/workspaceScope';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('WorkspaceScope', () => {
  let ws: TempWorkspace;
  let scope: WorkspaceScope;
  let outside: string;

  beforeEach(async () => {
    ws = await makeTempWorkspace({ git: true, files: { 'src/a.ts': 'a', 'README.md': 'r' } });
    scope = new WorkspaceScope(ws.dir);
    outside = await ws.outsideDir();
    await fs.writeFile(path.join(outside, 'secret.txt'), 'secret');
  });
  afterEach(() => ws.cleanup());

  async function refused(p: string, pattern: RegExp, forWrite = false): Promise<void> {
    await assert.rejects(scope.resolve(p, { forWrite }), (error: unknown) => {
      assert.ok(error instanceof PathEscapeError, `expected PathEscapeError for ${p}, got ${String(error)}`);
      assert.match(error.message, pattern);
      return true;
    });
  }

  describe('accepts', () => {
    it('relative paths, existing or not', async () => {
      assert.equal(await scope.resolve('src/a.ts'), ws.path('src', 'a.ts'));
      assert.equal(await scope.resolve('new/dir/file.txt', { forWrite: true }), ws.path('new', 'dir', 'file.txt'));
      assert.equal(await scope.resolve('./src/../README.md'), ws.path('README.md'));
    });

    it('absolute paths inside the root, and the root itself for reading', async () => {
      assert.equal(await scope.resolve(ws.path('src', 'a.ts')), ws.path('src', 'a.ts'));
      assert.equal(await scope.resolve('.'), ws.dir);
    });

    it('symlinks that stay inside the workspace, resolved to their target', async () => {
      await fs.symlink('src', ws.path('linked'));
      await fs.symlink('a.ts', ws.path('src', 'alias.ts'));
      assert.equal(await scope.resolve('linked/a.ts'), ws.path('src', 'a.ts'));
      assert.equal(await scope.resolve('src/alias.ts'), ws.path('src', 'a.ts'));
    });

    it('a root given through a symlink, and absolute paths spelled through it', async () => {
      const link = path.join(outside, 'ws-link');
      await fs.symlink(ws.dir, link);
      const viaLink = new WorkspaceScope(link);
      assert.equal(viaLink.root, ws.dir);
      assert.equal(await viaLink.resolve('src/a.ts'), ws.path('src', 'a.ts'));
      assert.equal(await viaLink.resolve(path.join(link, 'src', 'a.ts')), ws.path('src', 'a.ts'));
      assert.equal(viaLink.relative(path.join(link, 'src', 'a.ts')), 'src/a.ts');
    });

    it('names that merely contain .git', async () => {
      assert.equal(await scope.resolve('.gitignore'), ws.path('.gitignore'));
      assert.equal(await scope.resolve('docs/.github/x.yml'), ws.path('docs', '.github', 'x.yml'));
    });
  });

  describe('refuses', () => {
    it('.. escapes', async () => {
      await refused('../x', /climbs out of the workspace/);
      await refused('a/../../x', /"a\/\.\.\/\.\.\/x"/);
      await refused('..', /climbs out/);
    });

    it('absolute paths elsewhere', async () => {
      await refused('/etc/passwd', /absolute path "\/etc\/passwd" is outside the workspace/);
      await refused(path.join(outside, 'secret.txt'), /outside the workspace/);
    });

    it('a symlinked file pointing outside', async () => {
      await fs.symlink(path.join(outside, 'secret.txt'), ws.path('leak.txt'));
      await refused('leak.txt', /symbolic link to .*secret\.txt, outside the workspace/);
    });

    it('a symlinked parent directory pointing outside, for new files and new folders too', async () => {
      await fs.symlink(outside, ws.path('out'));
      await refused('out/secret.txt', /symbolic link/);
      await refused('out/new.txt', /symbolic link/, true);
      await refused('out/new/dir/file.txt', /symbolic link/, true);
    });

    it('a dangling symlink whose target would be created outside', async () => {
      await fs.symlink(path.join(outside, 'not-yet', 'file.txt'), ws.path('dangling.txt'));
      await fs.symlink(path.join(outside, 'missing-dir'), ws.path('dangling-dir'));
      await refused('dangling.txt', /outside the workspace/, true);
      await refused('dangling-dir/new.txt', /outside the workspace/, true);
    });

    it('anything inside .git, at any depth, whatever the case', async () => {
      await refused('.git', /inside \.git/);
      await refused('.git/config', /inside \.git/);
      await refused('sub/.git/HEAD', /inside \.git/);
      await refused('.GIT/config', /inside \.git/);
      await refused(ws.path('.git', 'hooks', 'pre-commit'), /inside \.git/, true);
    });

    it("a worktree's .git file and links into .git", async () => {
      await ws.write('wt/.git', 'gitdir: /somewhere\n');
      await fs.symlink('.git', ws.path('gitlink'));
      await refused('wt/.git', /inside \.git/);
      await refused('gitlink/config', /inside \.git/);
    });

    it('NUL bytes and empty paths', async () => {
      await refused('src/a.ts\0.png', /NUL byte/);
      await refused('', /empty path/);
      await refused('   ', /empty path/);
    });

    it('writing the root itself', async () => {
      await refused('.', /workspace root itself/, true);
      await refused(ws.dir, /workspace root itself/, true);
    });

    it('symlink loops', async () => {
      await fs.symlink('loop-b', ws.path('loop-a'));
      await fs.symlink('loop-a', ws.path('loop-b'));
      await assert.rejects(scope.resolve('loop-a/x'), PathEscapeError);
    });
  });

  it('relative() gives posix paths and "." for the root', () => {
    assert.equal(scope.relative(ws.path('src', 'a.ts')), 'src/a.ts');
    assert.equal(scope.relative(ws.dir), '.');
  });

  it("refuses writes to Ralph's own files under .ralph/ but allows the progress notes", async () => {
    for (const p of ['.ralph/tasks.json', '.ralph/config.json', '.ralph/state/T-001.json', '.ralph', '.ralph/progress']) {
      await assert.rejects(scope.resolve(p, { forWrite: true }), PathEscapeError, p);
    }
    assert.equal(await scope.resolve('.ralph/progress/T-001.md', { forWrite: true }), ws.path('.ralph', 'progress', 'T-001.md'));
    assert.equal(await scope.resolve('.ralph/tasks.json'), ws.path('.ralph', 'tasks.json'), 'reading stays allowed');
  });
});
