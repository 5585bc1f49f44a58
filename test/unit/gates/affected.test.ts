import assert from 'node:assert/strict';
import { narrowedCommand, runnerCall, type RunnerSetting } from '../../../src/core/gates/affectedCommand';
import { chooseScope, inventoryOf, type ScopeInput, scopedSummary } from '../../../src/core/gates/affectedTests';

const setting = (scripts: Record<string, string>, rootFiles: string[] = [], extra: Partial<RunnerSetting> = {}): RunnerSetting => ({
  scripts,
  rootFiles: new Set(rootFiles),
  ...extra,
});

describe('affected tests: which gate commands can run a part of the suite', () => {
  it('finds the runner of npm scripts and of direct calls, and extends each its own way', () => {
    const cases: [string, Record<string, string>, string[], string][] = [
      ['npm test', { test: 'node --test' }, ['test/a.test.js'], 'npm test -- test/a.test.js'],
      ['npm test', { test: 'jest' }, ['src/a.js'], 'npm test -- --findRelatedTests src/a.js --passWithNoTests --coverage=false'],
      [
        'npm run test:unit',
        { 'test:unit': 'vitest run' },
        ['test/a.test.ts'],
        'npm run test:unit -- test/a.test.ts --coverage.enabled=false',
      ],
      ['npx vitest run', {}, ['test/a b.test.ts'], "npx vitest run 'test/a b.test.ts' --coverage.enabled=false"],
      ['npx tap', {}, ['test/a.js'], 'npx tap test/a.js --no-coverage'],
      ['npx ava --verbose', {}, ['test.js'], 'npx ava --verbose test.js'],
      ['npx mocha --reporter dot', {}, ['test/a.js'], 'npx mocha --reporter dot test/a.js'],
    ];
    for (const [command, scripts, files, expected] of cases) {
      const call = runnerCall(command, setting(scripts));
      assert.ok(!('why' in call), `${command}: ${'why' in call ? call.why : ''}`);
      assert.equal(narrowedCommand(call, files, {}), expected);
    }
    const tap18 = runnerCall('npx tap', setting({}));
    assert.ok(!('why' in tap18));
    assert.equal(narrowedCommand(tap18, ['t.js'], { tapMajor: 18 }), 'npx tap t.js --disable-coverage');
  });

  it('says why a command cannot be narrowed: chains, other programs, named files, pre/post scripts, mocha specs from config', () => {
    const cases: [string, RunnerSetting, RegExp][] = [
      ['npm test', setting({ test: 'xo && ava' }), /the script "test" \(`xo && ava`\) is more than one plain call/],
      ['npm test', setting({ test: 'c8 mocha' }), /`c8` is not a test runner whose files Ralph can choose/],
      ['npx mocha tests.js', setting({}), /names its own test files \(`tests\.js`\)/],
      ['npm test', setting({ test: 'mocha' }, ['.mocharc.json']), /mocha adds the spec of its config/],
      ['npm test', setting({ test: 'mocha', pretest: 'npm run build' }), /pre\/post scripts/],
      ['npm run tests-only', setting({}), /package.json has no script "tests-only"/],
      ['make test', setting({}), /`make` is not a test runner/],
      ['npx vitest bench', setting({}), /vitest's `bench` command is not a run of the suite/],
      ['npm test', setting({ test: 'node --test test/' }), /names its own test files/],
    ];
    for (const [command, s, why] of cases) {
      const call = runnerCall(command, s);
      assert.ok('why' in call, command);
      assert.match(call.why, why);
    }
  });
});

describe('affected tests: the part a gate runs', () => {
  const graph: Record<string, string[]> = {
    'test/a.test.js': ['test/a.test.js', 'src/a.js'],
    'test/b.test.js': ['test/b.test.js', 'src/c.js', 'src/b.js'],
    'test/d.test.js': ['test/d.test.js'],
  };
  const input = (over: Partial<ScopeInput>): ScopeInput => ({
    call: { runner: 'node:test', command: 'npm test', viaNpm: true },
    setting: {},
    changedSinceGreen: [],
    changedSinceBase: [],
    last: undefined,
    inventory: { files: new Set(Object.keys(graph)), total: 9 },
    isDefinition: (f) => f === '.taprc',
    isTest: (f) => f.startsWith('test/'),
    exists: () => true,
    closure: async (f) => ({ files: graph[f] ?? [f] }),
    ...over,
  });

  it('runs the test files that reach a changed file, transitively, with the ones that failed last time', async () => {
    const scope = await chooseScope(input({ changedSinceGreen: ['src/b.js'], last: { files: ['test/d.test.js'], unfiled: 0 } }));
    assert.equal(scope.kind, 'affected');
    assert.deepEqual(scope.kind === 'affected' && scope.files, ['test/b.test.js', 'test/d.test.js']);
    assert.equal(scope.kind === 'affected' && scope.command, 'npm test -- test/b.test.js test/d.test.js');
    assert.equal(scopedSummary('2/2 tests passing', scope, 2), 'affected: 2 of 9 tests, 2/2 tests passing');
  });

  it('runs the whole suite and says why when the part cannot be told', async () => {
    const cases: [Partial<ScopeInput>, RegExp][] = [
      [{ call: { why: 'x is no runner' } }, /x is no runner/],
      [{ changedSinceGreen: ['package-lock.json', 'src/a.js'] }, /`package-lock\.json` changed .*config or lockfile/],
      [{ changedSinceGreen: ['.taprc'] }, /`\.taprc` changed/],
      [{ changedSinceGreen: ['src/a.js'], last: { files: [], unfiled: 1 } }, /without naming the file of every failing test/],
      [{ changedSinceGreen: ['src/a.js'], inventory: { why: 'no names' } }, /no names/],
      [{ changedSinceGreen: ['test/new.test.js'], changedSinceBase: ['test/new.test.js'] }, /added test files .*`test\/new\.test\.js`/],
      [{ changedSinceGreen: ['README.md'] }, /no test file reaches a file changed/],
      [{ changedSinceGreen: ['src/a.js', 'src/b.js', 'test/d.test.js'] }, /every test file reaches/],
    ];
    for (const [over, why] of cases) {
      const scope = await chooseScope(input(over));
      assert.equal(scope.kind, 'full', JSON.stringify(over));
      assert.match(scope.kind === 'full' ? scope.why : '', why);
    }
  });

  it('counts a test file whose imports cannot be read as reaching everything', async () => {
    const scope = await chooseScope(
      input({
        changedSinceGreen: ['src/a.js'],
        closure: async (f) => (f === 'test/d.test.js' ? { files: [f], unknown: 'it imports a computed name' } : { files: graph[f] }),
      }),
    );
    assert.deepEqual(scope.kind === 'affected' && scope.files, ['test/a.test.js', 'test/d.test.js']);
  });

  it('lets jest relate the changed files itself', async () => {
    const scope = await chooseScope(
      input({ call: { runner: 'jest', command: 'npx jest', viaNpm: false }, changedSinceGreen: ['src/a.js'], inventory: { why: 'none' } }),
    );
    assert.equal(scope.kind === 'affected' && scope.command, 'npx jest --findRelatedTests src/a.js --passWithNoTests --coverage=false');
  });

  it('takes the inventory only where every test of the base run has its file', () => {
    assert.deepEqual(inventoryOf({ total: 2, names: [{ file: 'a' }, { file: 'a' }] }), { files: new Set(['a']), total: 2 });
    assert.ok('why' in inventoryOf({ total: 2, names: [{ file: 'a' }, {}] }));
    assert.ok('why' in inventoryOf(undefined));
  });
});
