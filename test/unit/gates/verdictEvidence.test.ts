import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { ImportGraph } from '../../../src/core/gates/importGraph';
import { goImports, jsImports, pythonImports } from '../../../src/core/gates/importSpecifiers';
import {
  asksWholeSuite,
  failureJudge,
  filesNamedBy,
  isSourceFile,
  matchesKnown,
  type TaskChange,
} from '../../../src/core/gates/verdictEvidence';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/** The evidence a verdict stands on, read from real files: imports, closures, what the task did and said. */
describe('verdict evidence', () => {
  describe('the imports a file names', () => {
    it('reads every static, re-exported, required, dynamic and mocked module of JavaScript and TypeScript', () => {
      const text = `import a from './a';
import { b,
  c as d } from "../lib/b.js";
import type { T } from './types';
import './side-effect';
export * from './all';
export { e } from './e';
const f = require('./f');
const g = await import('./g.mjs');
vi.mock('../src/mocked');
jest.requireActual('./actual');
import x = require('./ts-require');
`;
      const { specifiers, unknown } = jsImports(text);
      assert.equal(unknown, undefined);
      assert.deepEqual(specifiers.sort(), [
        '../lib/b.js',
        '../src/mocked',
        './a',
        './actual',
        './all',
        './e',
        './f',
        './g.mjs',
        './side-effect',
        './ts-require',
        './types',
      ]);
    });

    it('says a file whose module is a computed value cannot be read, but not a method named require', () => {
      assert.match(jsImports("const m = require('./' + name);").unknown ?? '', /computed value/);
      assert.match(jsImports('const m = require(name);').unknown ?? '', /computed value/);
      assert.match(jsImports('const m = await import(`./locales/${lang}.js`);').unknown ?? '', /computed value/);
      assert.equal(jsImports("loader.require(name); cache.import(x); require('./ok');").unknown, undefined);
    });

    it('reads python and go imports', () => {
      assert.deepEqual(
        pythonImports('import os, app.util as u\nfrom .models import User, Group\nfrom app import views\n').specifiers.sort(),
        ['.models', '.models.Group', '.models.User', 'app', 'app.util', 'app.views', 'os'],
      );
      assert.deepEqual(goImports('import (\n  "fmt"\n  m "example.com/app/money"\n)\n').specifiers.sort(), [
        'example.com/app/money',
        'fmt',
      ]);
    });
  });

  describe('what a test exercises (its closure)', () => {
    let ws: TempWorkspace;
    afterEach(async () => ws?.cleanup());

    async function graph(files: Record<string, string>, ignored: string[] = []): Promise<ImportGraph> {
      ws = await makeTempWorkspace();
      for (const [file, text] of Object.entries(files)) await ws.write(file, text);
      const all = new Set(Object.keys(files).filter((f) => !ignored.includes(f)));
      return new ImportGraph(ws.dir, all);
    }

    it('follows relative imports transitively, with the extensions and index files resolvers try, .js naming .ts', async () => {
      const g = await graph({
        'test/parse.test.ts': "import { parse } from '../src/parse.js';\nimport data from './fixtures/rows.json';\n",
        'test/fixtures/rows.json': '[]',
        'src/parse.ts': "export * from './lex';\nimport { util } from './util';\n",
        'src/lex/index.ts': 'export const lex = 1;\n',
        'src/util.js': 'exports.util = 1;\n',
        'src/unrelated.ts': 'export const x = 1;\n',
      });
      const closure = await g.closure('test/parse.test.ts');
      assert.equal(closure.unknown, undefined);
      assert.deepEqual(closure.files.sort(), [
        'src/lex/index.ts',
        'src/parse.ts',
        'src/util.js',
        'test/fixtures/rows.json',
        'test/parse.test.ts',
      ]);
    });

    it("follows tsconfig paths, the package's own name and a workspace package linked into node_modules", async () => {
      const g = await graph({
        'tsconfig.json': '{ // paths\n "compilerOptions": { "baseUrl": ".", "paths": { "@/*": ["src/*"] } } }\n',
        'package.json': JSON.stringify({ name: 'money', main: 'lib/index.js' }),
        'lib/index.js': "module.exports = require('./core');\n",
        'lib/core.js': '',
        'src/a.ts': '',
        'packages/fmt/package.json': JSON.stringify({ name: '@acme/fmt', exports: { '.': { import: './src/fmt.js' } } }),
        'packages/fmt/src/fmt.js': '',
        'test/all.test.ts': "import '@/a';\nimport 'money';\nimport '@acme/fmt';\nimport 'node:fs';\nimport 'path';\n",
      });
      await fs.mkdir(ws.path('node_modules/@acme'), { recursive: true });
      await fs.symlink(ws.path('packages/fmt'), ws.path('node_modules/@acme/fmt'), 'junction');
      const closure = await g.closure('test/all.test.ts');
      assert.equal(closure.unknown, undefined, closure.unknown);
      assert.deepEqual(closure.files.sort(), ['lib/core.js', 'lib/index.js', 'packages/fmt/src/fmt.js', 'src/a.ts', 'test/all.test.ts']);
    });

    it('is unknown — exercises everything — for a build output git ignores, a missing file, an unknown bare name, a computed import', async () => {
      const cases: [Record<string, string>, string[], RegExp][] = [
        [{ 't.test.js': "require('./dist/index.js');", 'dist/index.js': '' }, ['dist/index.js'], /a file git ignores \(a build output\?\)/],
        [{ 't.test.js': "require('../lib/missing');" }, [], /outside the repository|not there/],
        [{ 't.test.js': "require('./lib/missing');" }, [], /not there \(not built yet\?\)/],
        [{ 't.test.js': "import x from '~/aliased';" }, [], /neither a dependency, a built-in module nor a path alias/],
        [
          { 't.test.js': "require('./a');", 'a.js': 'require(process.env.IMPL);' },
          [],
          /`a\.js` imports a module named by a computed value/,
        ],
        [{ 't.test.js': "require('./native.rb');", 'native.rb': '' }, [], /code whose imports Ralph does not read/],
        [
          { 't.test.js': "const { spawn } = require('child_process');\nspawn(process.execPath, ['bin/cli.js']);" },
          [],
          /starts another program/,
        ],
      ];
      for (const [files, ignored, why] of cases) {
        const g = await graph(files, ignored);
        assert.match((await g.closure('t.test.js')).unknown ?? '(known)', why);
        await ws.cleanup();
      }
    });

    it('takes a dependency installed in node_modules as outside the repository', async () => {
      const g = await graph({ 't.test.js': "const expect = require('expect.js');", 'node_modules/expect.js/index.js': '' }, [
        'node_modules/expect.js/index.js',
      ]);
      const closure = await g.closure('t.test.js');
      assert.equal(closure.unknown, undefined);
      assert.deepEqual(closure.files, ['t.test.js']);
    });
  });

  describe('the judge of a failure that failed at the base too', () => {
    let ws: TempWorkspace;
    afterEach(async () => ws?.cleanup());

    const change = (over: Partial<TaskChange> = {}): TaskChange => ({
      changed: new Set(['src/money.js']),
      named: new Set(),
      changedSource: true,
      wholeSuite: false,
      ...over,
    });

    async function judgeOf(c: TaskChange, known = { gate: [] as string[], task: [] as string[] }) {
      ws = await makeTempWorkspace();
      const files: Record<string, string> = {
        'src/money.js': '',
        'src/date.js': '',
        'test/money.test.js': "require('../src/money');",
        'test/release.test.js': "require('../src/date');",
      };
      for (const [f, t] of Object.entries(files)) await ws.write(f, t);
      return failureJudge(c, new ImportGraph(ws.dir, new Set(Object.keys(files))), known);
    }

    it("holds the task's own test: it imports a file the task changed", async () => {
      const v = await (await judgeOf(change()))({ name: 'reads commas', file: 'test/money.test.js' });
      assert.deepEqual(v, {
        name: 'reads commas',
        held: true,
        why: '`test/money.test.js` imports `src/money.js`, which the task changed',
      });
    });

    it('forgives a legacy test that imports nothing the task touched, naming what it exercises', async () => {
      const v = await (await judgeOf(change()))({ name: 'release', file: 'test/release.test.js' });
      assert.equal(v.held, false);
      assert.equal(v.why, 'it exercises only `test/release.test.js`, `src/date.js`, none of which the task changed or names');
    });

    it('holds it when nothing settles it: no file reported, a named file, no source changed, the whole suite promised', async () => {
      const release = { name: 'release', file: 'test/release.test.js' };
      assert.match((await (await judgeOf(change()))({ name: 'release' })).why, /the runner does not report which file defines it/);
      assert.match(
        (await (await judgeOf(change({ named: new Set(['src/date.js']) })))(release)).why,
        /imports `src\/date\.js`, which the task's words name/,
      );
      assert.match((await (await judgeOf(change({ changedSource: false })))(release)).why, /the task has changed no source file/);
      assert.match((await (await judgeOf(change({ wholeSuite: true })))(release)).why, /the promise asks for the whole suite to pass/);
    });

    it("forgives what a person declared, the task's or the gate's, exactly or by pattern", async () => {
      const judge = await judgeOf(change(), { gate: ['legacy › *'], task: ['reads commas'] });
      assert.equal((await judge({ name: 'reads commas', file: 'test/money.test.js' })).held, false);
      assert.equal((await judge({ name: 'legacy › dates' })).held, false);
      assert.ok(matchesKnown('a (b) [c]', ['a (b) [c]']) && !matchesKnown('a (b) [c]x', ['a (b) [c]']));
    });
  });

  it('names the files the words name: a path, a file name, a folder', () => {
    const files = new Set(['src/parse.js', 'lib/parse.js', 'src/lex/a.ts', 'src/lex/b.ts', 'README.md']);
    assert.deepEqual([...filesNamedBy('Fix src/parse.js please.', files)], ['src/parse.js']);
    assert.deepEqual([...filesNamedBy('parse.js is slow', files)].sort(), ['lib/parse.js', 'src/parse.js']);
    assert.deepEqual([...filesNamedBy('clean up src/lex/', files)].sort(), ['src/lex/a.ts', 'src/lex/b.ts']);
    assert.deepEqual([...filesNamedBy('Make twelve and a half read as 12,50 e.g. 1.5', files)], []);
  });

  it('tells a promise that asks for the whole suite', () => {
    for (const yes of ['All tests pass.', 'the whole test suite is green', 'npm test passes', 'The test suite passes', 'no failing tests'])
      assert.ok(asksWholeSuite(yes), yes);
    for (const no of ['Amounts with a comma are read correctly.', 'the new tests for parse pass', 'parse handles commas'])
      assert.ok(!asksWholeSuite(no), no);
  });

  it("tells source from tests, documents and lockfiles; a documentation task's documents are its source", () => {
    const isTest = (f: string) => f.startsWith('test/');
    assert.ok(isSourceFile('src/a.js', isTest));
    assert.ok(!isSourceFile('test/a.test.js', isTest));
    assert.ok(!isSourceFile('tests.js', isTest, new Set(['tests.js'])), 'a file the runner reported tests in');
    assert.ok(!isSourceFile('README.md', isTest));
    assert.ok(!isSourceFile('package-lock.json', isTest));
    assert.ok(isSourceFile('docs/guide.md', isTest, new Set(), true));
  });
});
