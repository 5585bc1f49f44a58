import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { ProcessGateRunner, runGates } from '../../../src/core/gates/runGates';
import type { GateScope } from '../../../src/core/gates/affectedTests';
import type { RalphEventBody } from '../../../src/core/events';
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
      ['python3 -m pytest -q', {}, ['tests/test_a.py'], 'python3 -m pytest -q tests/test_a.py'],
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
    treeTests: Object.keys(graph),
    baseTotal: 9,
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
      [{ changedSinceGreen: ['tests/conftest.py'] }, /`tests\/conftest\.py` changed/],
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

  it('lets vitest pick from the test files by convention when the base run named none (its default reporter)', async () => {
    const vitest = { call: { runner: 'vitest' as const, command: 'npx vitest run', viaNpm: false }, inventory: { why: 'no names' } };
    const scope = await chooseScope(
      input({
        ...vitest,
        changedSinceGreen: ['src/b.js', 'test/new.test.js'],
        changedSinceBase: ['test/new.test.js'],
        treeTests: [...Object.keys(graph), 'test/new.test.js'],
      }),
    );
    assert.equal(scope.kind === 'affected' && scope.command, 'npx vitest run test/b.test.js test/new.test.js --coverage.enabled=false');
    assert.equal(scope.kind === 'affected' && scope.of, 9);
    // the others still need the base run's files
    assert.equal((await chooseScope(input({ inventory: { why: 'no names' }, changedSinceGreen: ['src/b.js'] }))).kind, 'full');
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

describe('affected tests: running a part', function () {
  this.timeout(60000);
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-affected-'));
    await fs.mkdir(path.join(dir, 'test'));
    await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ scripts: { test: 'node --test' } }));
    for (const name of ['a', 'b'])
      await fs.writeFile(
        path.join(dir, 'test', `${name}.test.js`),
        `require('node:test')('${name} works', () => require('node:assert').ok(true));\n`,
      );
  });
  afterEach(async () => fs.rm(dir, { recursive: true, force: true }));
  const gate = { name: 'tests', command: 'npm test', kind: 'tests' as const, required: true };

  it('runs the part, marks it in the outcome and the events, and never judges it against the base', async () => {
    const events: RalphEventBody[] = [];
    let judged = 0;
    const scope: GateScope = {
      kind: 'affected',
      command: 'npm test -- test/a.test.js',
      runner: 'node:test',
      files: ['test/a.test.js'],
      of: 2,
    };
    const report = await runGates({
      gates: [gate],
      runner: new ProcessGateRunner(new NodeCommandRunner()),
      cwd: dir,
      scopes: new Map([['tests', scope]]),
      emit: (e) => events.push(e),
      judge: async (_g, o) => {
        judged++;
        return o;
      },
    });
    const [outcome] = report.outcomes;
    assert.equal(outcome.passed, true);
    assert.equal(outcome.parsed.tests?.total, 1);
    assert.match(outcome.summary, /^affected: 1 of 2 tests, /);
    assert.equal(judged, 0);
    assert.ok(
      outcome.fixItems.some((f) => f.level === 'observation' && /the whole suite runs and decides when you signal COMPLETE/.test(f.text)),
    );
    const started = events.find((e) => e.type === 'gate.started');
    assert.deepEqual(started && 'command' in started && [started.command, started.scope], ['npm test -- test/a.test.js', 'affected']);
  });

  it('runs the whole suite when the part failed without naming a failing test (a narrowed command the runner refused)', async () => {
    const scope: GateScope = {
      kind: 'affected',
      command: 'npm test -- --no-such-flag-x test/a.test.js',
      runner: 'node:test',
      files: ['test/a.test.js'],
    };
    const report = await runGates({
      gates: [gate],
      runner: new ProcessGateRunner(new NodeCommandRunner()),
      cwd: dir,
      scopes: new Map([['tests', scope]]),
    });
    const [outcome] = report.outcomes;
    assert.equal(outcome.passed, true, outcome.summary);
    assert.equal(outcome.parsed.tests?.total, 2);
    assert.equal(outcome.scope?.kind, 'full');
    assert.match(outcome.scope?.kind === 'full' ? outcome.scope.why : '', /failed without naming a failing test, so the whole suite ran/);
  });
});
