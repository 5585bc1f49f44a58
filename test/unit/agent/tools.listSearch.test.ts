import * as assert from 'node:assert/strict';
import { unlink } from 'node:fs/promises';
import { ToolRegistry } from '../../../src/core/agent/toolRegistry';
import { CORE_TOOLS } from '../../../src/core/agent/tools';
import { globToRegExp, matchesGlob } from '../../../src/core/util/glob';
import type { ToolContext, ToolResult } from '../../../src/core/agent/tools/types';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { makeToolContext } from './toolContext';

const FILES = {
  '.gitignore': 'dist/\n*.log\n',
  'README.md': '# Project\nTODO: write docs\n',
  'src/app.ts': 'export function app() {\n  return helper();\n}\n',
  'src/lib/helper.ts': 'export function helper() {\n  return 42; // TODO tidy\n}\n',
  'src/lib/helper.test.ts': "import { helper } from './helper';\n",
  'docs/guide.md': 'Call app() to start.\n',
  'dist/app.js': 'function app() { return 42 }\n',
  'debug.log': 'TODO in a log\n',
  'node_modules/pkg/index.js': 'module.exports = 42; // TODO\n',
};

function listed(result: ToolResult): string[] {
  return result.content.split('\n').slice(1);
}

describe('list_files and search', () => {
  let ws: TempWorkspace;
  let ctx: ToolContext;
  const registry = new ToolRegistry(CORE_TOOLS);
  const call = (name: string, args: object): Promise<ToolResult> =>
    registry.execute({ id: 'c', name, arguments: JSON.stringify(args) }, ctx);

  describe('in a git repository', () => {
    beforeEach(async () => {
      ws = await makeTempWorkspace({ git: true, files: { ...FILES, '.gitignore': `${FILES['.gitignore']}node_modules/\n` } });
      ws.git('add', 'README.md', 'src/app.ts', '.gitignore');
      ws.git('commit', '-q', '-m', 'init');
      ctx = makeToolContext(ws);
    });
    afterEach(() => ws.cleanup());

    it('lists tracked and untracked files, honouring .gitignore', async () => {
      const result = await call('list_files', {});
      assert.equal(result.ok, true);
      assert.match(result.content, /^6 files under the workspace root:/);
      assert.deepEqual(listed(result), [
        '.gitignore',
        'README.md',
        'docs/guide.md',
        'src/app.ts',
        'src/lib/helper.test.ts',
        'src/lib/helper.ts',
      ]);
    });

    it('leaves out tracked files deleted from disk', async () => {
      await ws.write('gone.txt', 'x');
      ws.git('add', 'gone.txt');
      ws.git('commit', '-q', '-m', 'gone');
      await unlink(ws.path('gone.txt'));
      assert.ok(!listed(await call('list_files', {})).includes('gone.txt'));
    });

    it('narrows by folder and by glob', async () => {
      assert.deepEqual(listed(await call('list_files', { path: 'src/lib' })), ['src/lib/helper.test.ts', 'src/lib/helper.ts']);
      assert.deepEqual(listed(await call('list_files', { pattern: '*.md' })), ['README.md', 'docs/guide.md']);
      assert.deepEqual(listed(await call('list_files', { pattern: 'src/**/*.ts' })), [
        'src/app.ts',
        'src/lib/helper.test.ts',
        'src/lib/helper.ts',
      ]);
      assert.deepEqual(listed(await call('list_files', { path: 'src', pattern: 'lib/*.{ts,js}' })), [
        'src/lib/helper.test.ts',
        'src/lib/helper.ts',
      ]);
      assert.deepEqual(listed(await call('list_files', { pattern: '*.test.ts' })), ['src/lib/helper.test.ts']);
    });

    it('says when nothing matches and when a folder does not exist', async () => {
      const none = await call('list_files', { pattern: '*.py' });
      assert.equal(none.ok, true);
      assert.match(none.content, /^no files under the workspace root matching \*\.py/);
      const missing = await call('list_files', { path: 'nope' });
      assert.equal(missing.ok, false);
      assert.match(missing.content, /no such file or directory: nope/);
    });

    it('caps long lists with a count of the rest', async () => {
      for (let i = 0; i < 520; i++) await ws.write(`many/f${String(i).padStart(3, '0')}.txt`, '');
      const result = await call('list_files', { path: 'many' });
      assert.match(result.content, /^520 files under many:/);
      assert.match(result.content, /\n… and 20 more; narrow the path or the pattern to see them$/);
      assert.equal(listed(result).length, 501);
    });

    it('search finds literal text, skipping ignored files', async () => {
      const result = await call('search', { query: 'TODO' });
      assert.equal(result.ok, true);
      assert.deepEqual(listed(result), ['README.md:2: TODO: write docs', 'src/lib/helper.ts:2:   return 42; // TODO tidy']);
      assert.match(result.content, /^2 matches for text "TODO":/);
    });

    it('search treats regex characters literally unless regex is true', async () => {
      assert.match((await call('search', { query: 'app() to' })).content, /^1 match for text "app\(\) to":\ndocs\/guide\.md:1: /);
      const regex = await call('search', { query: 'function \\w+\\(', regex: true, path: 'src' });
      assert.deepEqual(listed(regex), ['src/app.ts:1: export function app() {', 'src/lib/helper.ts:1: export function helper() {']);
    });

    it('search turns an invalid regex into an error result', async () => {
      const result = await call('search', { query: 'foo(', regex: true });
      assert.equal(result.ok, false);
      assert.match(result.content, /^invalid regular expression "foo\(":/);
    });

    it('search skips binary and oversized files and caps the matches', async () => {
      await ws.write('bin.dat', new Uint8Array([0x54, 0x4f, 0x44, 0x4f, 0, 1]));
      await ws.write('huge.txt', `TODO\n${'x'.repeat(1024 * 1024)}`);
      await ws.write('lots.txt', Array.from({ length: 250 }, (_, i) => `needle ${i}`).join('\n'));
      const todo = await call('search', { query: 'TODO' });
      assert.match(todo.content, /^2 matches .*\(2 skipped: binary, over 1 MB or unreadable\)/);
      const lots = await call('search', { query: 'needle', path: 'lots.txt' });
      assert.match(lots.content, /^250 matches/);
      assert.equal(listed(lots).length, 201);
      assert.match(lots.content, /\n… 50 more matches; narrow the path or the query$/);
      assert.equal(listed(lots)[0], 'lots.txt:1: needle 0');
    });
  });

  describe('outside a git repository', () => {
    beforeEach(async () => {
      ws = await makeTempWorkspace({ files: FILES });
      ctx = makeToolContext(ws);
    });
    afterEach(() => ws.cleanup());

    it('walks the tree, skipping node_modules, and says .gitignore was not applied', async () => {
      const result = await call('list_files', {});
      assert.match(result.content, /not a git repository/);
      const files = listed(result);
      assert.ok(files.includes('dist/app.js'));
      assert.ok(!files.some((file) => file.startsWith('node_modules/')));
      assert.ok((await call('search', { query: 'TODO' })).content.includes('debug.log:1: TODO in a log'));
    });
  });
});

describe('glob', () => {
  it('translates **, *, ?, {a,b} and classes', () => {
    assert.ok(globToRegExp('src/**/*.ts').test('src/a.ts'));
    assert.ok(globToRegExp('src/**/*.ts').test('src/a/b/c.ts'));
    assert.ok(!globToRegExp('src/*.ts').test('src/a/b.ts'));
    assert.ok(globToRegExp('**').test('a/b/c'));
    assert.ok(globToRegExp('a/**').test('a/b/c'));
    assert.ok(globToRegExp('file?.md').test('file1.md'));
    assert.ok(!globToRegExp('file?.md').test('file10.md'));
    assert.ok(globToRegExp('*.{ts,tsx,{js,mjs}}').test('x.mjs'));
    assert.ok(globToRegExp('[!a]b').test('cb') && !globToRegExp('[!a]b').test('ab'));
    assert.ok(globToRegExp('a.b(c)+').test('a.b(c)+'));
    assert.ok(!globToRegExp('a.b').test('axb'));
    assert.ok(globToRegExp('[a-c]x').test('bx') && !globToRegExp('[a-c]x').test('dx'));
    assert.ok(globToRegExp('src/**/x/*.ts').test('src/x/a.ts') && globToRegExp('src/**/x/*.ts').test('src/a/b/x/a.ts'));
  });

  it('matches hostile globs in linear time and bounds their size', () => {
    // These backtrack exponentially as regular expressions; the state-set matcher answers at once.
    assert.ok(!matchesGlob(`${'*'.repeat(40)}x`, 'a'.repeat(5000)));
    assert.ok(!matchesGlob('a*'.repeat(400), 'a'.repeat(399)));
    assert.ok(matchesGlob('a*'.repeat(400), 'a'.repeat(400)));
    assert.throws(() => globToRegExp('{a,b}'.repeat(9)), /more than 256 alternatives/);
    assert.throws(() => globToRegExp('x'.repeat(1001)), /limit is 1000/);
  });

  it('matches a slash-free pattern against the file name at any depth', () => {
    assert.ok(matchesGlob('*.md', 'docs/deep/x.md'));
    assert.ok(matchesGlob('./src/*.ts', 'src/a.ts'));
    assert.ok(matchesGlob('lib/*.ts', 'src/lib/a.ts', 'src'));
    assert.ok(!matchesGlob('lib/*.ts', 'src/lib/a.ts'));
  });
});
