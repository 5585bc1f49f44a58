import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as path from 'node:path';
import { removeTree } from '../../../src/core/util/removeTree';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('removeTree: a worktree removed with a bound on the work in flight (issue 48)', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('removes nested folders of many files, and a link in them without touching what it points to', async () => {
    const outside = await ws.outsideDir();
    await fs.writeFile(path.join(outside, 'keep.txt'), 'kept\n');
    const tree = ws.path('tree');
    for (let a = 0; a < 3; a++) {
      await fs.mkdir(path.join(tree, `a${a}`, 'deep', 'er'), { recursive: true });
      for (let i = 0; i < 150; i++) await fs.writeFile(path.join(tree, `a${a}`, `f${i}.txt`), `${i}\n`);
      await fs.writeFile(path.join(tree, `a${a}`, 'deep', 'er', 'last.txt'), 'x');
    }
    await fs.symlink(outside, path.join(tree, 'a0', 'link-to-outside'));
    await fs.symlink(path.join(outside, 'keep.txt'), path.join(tree, 'file-link'));
    await fs.writeFile(path.join(tree, '.hidden'), 'h');

    await removeTree(tree);

    assert.equal(existsSync(tree), false);
    assert.equal(await fs.readFile(path.join(outside, 'keep.txt'), 'utf8'), 'kept\n');
  });

  it('removes a single file, and is content when nothing is there', async () => {
    const file = await ws.write('one.txt', '1');
    await removeTree(file);
    assert.equal(existsSync(file), false);
    await removeTree(ws.path('never-was'));
    assert.equal(existsSync(ws.path('never-was')), false);
  });
});
