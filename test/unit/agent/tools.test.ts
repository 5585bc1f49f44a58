import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { ToolRegistry } from '../../../src/core/agent/toolRegistry';
import { CORE_TOOLS } from '../../../src/core/agent/tools';
import type { ToolContext, ToolResult } from '../../../src/core/agent/tools/types';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { makeToolContext } from './toolContext';

describe('file tools', () => {
  let ws: TempWorkspace;
  let ctx: ToolContext;
  const registry = new ToolRegistry(CORE_TOOLS);
  const call = (name: string, args: object, context = ctx): Promise<ToolResult> =>
    registry.execute({ id: 'call-1', name, arguments: JSON.stringify(args) }, context);

  beforeEach(async () => {
    ws = await makeTempWorkspace({ git: true, files: { 'src/a.ts': 'one\ntwo\nthree\n', 'README.md': '# hi\n' } });
    ctx = makeToolContext(ws);
  });
  afterEach(() => ws.cleanup());

  describe('read_file', () => {
    it('returns the text with a header naming the lines shown', async () => {
      const result = await call('read_file', { path: 'src/a.ts' });
      assert.equal(result.ok, true);
      assert.equal(result.content, 'src/a.ts — lines 1-3 of 3\none\ntwo\nthree');
      assert.equal(result.summary, 'read src/a.ts (lines 1-3 of 3)');
    });

    it('reads a line range, clamping endLine to the end', async () => {
      assert.equal((await call('read_file', { path: 'src/a.ts', startLine: 2, endLine: 2 })).content, 'src/a.ts — lines 2-2 of 3\ntwo');
      assert.equal(
        (await call('read_file', { path: 'src/a.ts', startLine: 2, endLine: 99 })).content,
        'src/a.ts — lines 2-3 of 3\ntwo\nthree',
      );
    });

    it('refuses ranges past the end or backwards', async () => {
      const past = await call('read_file', { path: 'src/a.ts', startLine: 9 });
      assert.equal(past.ok, false);
      assert.match(past.content, /past the end .* 3 lines/);
      assert.equal((await call('read_file', { path: 'src/a.ts', startLine: 3, endLine: 2 })).ok, false);
    });

    it('stops at the output cap on a line boundary and says where to continue', async () => {
      const line = 'x'.repeat(99);
      await ws.write('big.txt', `${Array.from({ length: 1000 }, () => line).join('\n')}\n`);
      const result = await call('read_file', { path: 'big.txt' });
      assert.equal(result.ok, true);
      const [header, ...body] = result.content.split('\n');
      assert.match(
        header,
        new RegExp(`lines 1-${body.length} of 1000 \\(output cap reached; continue with startLine=${body.length + 1}\\)`),
      );
      assert.ok(body.every((shown) => shown === line));
    });

    it('refuses binary files, directories and missing files with clear messages', async () => {
      await ws.write('img.png', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 0, 1]));
      assert.match((await call('read_file', { path: 'img.png' })).content, /binary file \(7 bytes\)/);
      assert.match((await call('read_file', { path: 'src' })).content, /is a directory; use list_files/);
      const missing = await call('read_file', { path: 'nope.txt' });
      assert.equal(missing.ok, false);
      assert.match(missing.content, /no such file: nope\.txt/);
    });

    it('refuses a named pipe instead of blocking on it', async function () {
      if (process.platform === 'win32') this.skip();
      execFileSync('mkfifo', [ws.path('pipe')]);
      assert.match((await call('read_file', { path: 'pipe' })).content, /not a regular file/);
    });

    it('says so for an empty file', async () => {
      await ws.write('empty.txt', '');
      assert.equal((await call('read_file', { path: 'empty.txt' })).content, 'empty.txt: empty file');
    });
  });

  describe('write_file', () => {
    it('creates parent folders and the file', async () => {
      const result = await call('write_file', { path: 'deep/new/dir/x.txt', content: 'hello\nworld\n' });
      assert.equal(result.ok, true, result.content);
      assert.equal(result.content, 'created deep/new/dir/x.txt (2 lines, 12 bytes)');
      assert.equal(await ws.read('deep/new/dir/x.txt'), 'hello\nworld\n');
    });

    it('overwrites and keeps the file mode', async () => {
      await ws.write('run.sh', 'echo old\n');
      await fs.chmod(ws.path('run.sh'), 0o755);
      const result = await call('write_file', { path: 'run.sh', content: 'echo new\n' });
      assert.match(result.content, /^overwrote run\.sh/);
      assert.equal(await ws.read('run.sh'), 'echo new\n');
      assert.equal((await fs.stat(ws.path('run.sh'))).mode & 0o777, 0o755);
    });

    it('refuses to write over a directory', async () => {
      const result = await call('write_file', { path: 'src', content: 'x' });
      assert.equal(result.ok, false);
      assert.match(result.content, /is a directory/);
    });
  });

  describe('edit_file', () => {
    it('replaces the single occurrence', async () => {
      const result = await call('edit_file', { path: 'src/a.ts', oldText: 'two\n', newText: '2\n2b\n' });
      assert.equal(result.ok, true, result.content);
      assert.equal(result.content, 'edited src/a.ts: replaced 1 line at line 2 with 2 lines');
      assert.equal(await ws.read('src/a.ts'), 'one\n2\n2b\nthree\n');
    });

    it('inserts $ patterns literally', async () => {
      await call('edit_file', { path: 'src/a.ts', oldText: 'one', newText: "$& $1 $$ $'" });
      assert.equal(await ws.read('src/a.ts'), "$& $1 $$ $'\ntwo\nthree\n");
    });

    it('fails on zero occurrences with a hint, leaving the file alone', async () => {
      await ws.write('b.ts', 'function f() {\n    return 1;\n}\n');
      const miss = await call('edit_file', { path: 'b.ts', oldText: 'return  1;\n}', newText: 'x' });
      assert.equal(miss.ok, false);
      assert.match(miss.content, /0 occurrences/);
      const indent = await call('edit_file', { path: 'b.ts', oldText: 'function f() {\n  return 1;', newText: 'x' });
      assert.equal(indent.ok, false);
      assert.match(indent.content, /first line appears at line 1 when indentation is ignored/);
      assert.equal(await ws.read('b.ts'), 'function f() {\n    return 1;\n}\n');
    });

    it('fails on several occurrences, naming how many and where', async () => {
      await ws.write('dup.txt', 'x = 1\ny = 2\nx = 1\n');
      const result = await call('edit_file', { path: 'dup.txt', oldText: 'x = 1', newText: 'x = 3' });
      assert.equal(result.ok, false);
      assert.match(result.content, /occurs 2 times in dup\.txt \(at lines 1, 3\)/);
      assert.match(result.content, /Include more of the surrounding lines/);
      assert.equal(await ws.read('dup.txt'), 'x = 1\ny = 2\nx = 1\n');
    });

    it('keeps CRLF files CRLF when the model sends LF', async () => {
      await ws.write('win.txt', 'a\r\nb\r\nc\r\n');
      const result = await call('edit_file', { path: 'win.txt', oldText: 'a\nb', newText: 'A\nB' });
      assert.equal(result.ok, true, result.content);
      assert.equal(await ws.read('win.txt'), 'A\r\nB\r\nc\r\n');
    });

    it('rejects an empty oldText through validation', async () => {
      const result = await call('edit_file', { path: 'src/a.ts', oldText: '', newText: 'x' });
      assert.equal(result.ok, false);
      assert.match(result.content, /oldText/);
    });
  });

  describe('path escapes', () => {
    let outside: string;
    beforeEach(async () => {
      outside = await ws.outsideDir();
      await fs.writeFile(path.join(outside, 'secret.txt'), 'TOP SECRET\n');
      await fs.symlink(path.join(outside, 'secret.txt'), ws.path('leak.txt'));
      await fs.symlink(outside, ws.path('outlink'));
      await ws.write('sub/.git/HEAD', 'ref: refs/heads/main\n');
    });

    const escapes = ['../x', '/etc/passwd', 'leak.txt', 'outlink/secret.txt', '.git/config', 'sub/.git/HEAD', 'a/../../x'];
    const attempts: Array<[string, (p: string) => object]> = [
      ['read_file', (p) => ({ path: p })],
      ['write_file', (p) => ({ path: p, content: 'PWNED' })],
      ['edit_file', (p) => ({ path: p, oldText: 'TOP SECRET', newText: 'PWNED' })],
      ['list_files', (p) => ({ path: p })],
      ['search', (p) => ({ query: 'SECRET', path: p })],
    ];

    for (const [tool, args] of attempts) {
      it(`${tool} refuses every escape and changes nothing outside`, async () => {
        const configBefore = await ws.read('.git/config');
        for (const escape of escapes) {
          const result = await call(tool, args(escape));
          assert.equal(result.ok, false, `${tool} ${escape}: ${result.content}`);
          assert.match(result.content, /^refused: /, `${tool} ${escape}: ${result.content}`);
          assert.doesNotMatch(result.content, /TOP SECRET/);
        }
        assert.equal(await fs.readFile(path.join(outside, 'secret.txt'), 'utf8'), 'TOP SECRET\n');
        assert.deepEqual(await fs.readdir(outside), ['secret.txt']);
        assert.equal(await ws.read('.git/config'), configBefore);
        assert.equal(await ws.read('sub/.git/HEAD'), 'ref: refs/heads/main\n');
      });
    }

    it('write_file refuses a new file inside a new folder under an outside link', async () => {
      const result = await call('write_file', { path: 'outlink/new/dir/x.txt', content: 'PWNED' });
      assert.match(result.content, /^refused: /);
      assert.deepEqual(await fs.readdir(outside), ['secret.txt']);
    });

    it('search over the whole workspace skips a link that leaves it', async () => {
      const result = await call('search', { query: 'SECRET' });
      assert.equal(result.ok, true);
      assert.match(result.content, /^no matches/);
    });
  });
});
