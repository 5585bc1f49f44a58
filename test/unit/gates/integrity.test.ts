import assert from 'node:assert/strict';
import type { GateConfig } from '../../../src/core/config/schema';
import { definitionParts, iniSections, readDefinition } from '../../../src/core/gates/definitions';
import { applyIntegrity, baselineOf, failedAtBaseNowPassing, judgeIntegrity, removedLines } from '../../../src/core/gates/integrity';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import { attributeToWholeFiles } from '../../../src/core/gates/wholeFiles';
import type { TestCounts } from '../../../src/core/gates/parsers/types';
import type { GateOutcome } from '../../../src/core/gates/types';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const gate = (command: string, kind: GateConfig['kind'] = 'tests'): GateConfig => ({ name: kind, command, kind, required: true });
const counts = (names: [string, 'pass' | 'fail' | 'skip'][]): TestCounts => ({
  passed: names.filter(([, s]) => s === 'pass').length,
  failed: names.filter(([, s]) => s === 'fail').length,
  skipped: names.filter(([, s]) => s === 'skip').length,
  total: names.length,
  failures: [],
  names: names.map(([name, status]) => ({ name, status })),
});

describe('gate integrity: definition parts and the comparison with the base', () => {
  let ws: TempWorkspace;
  afterEach(async () => ws?.cleanup());

  it("takes the scripts a gate runs (through npm run chains and pre/post hooks), its kind's configs and the files its command names", async () => {
    ws = await makeTempWorkspace({
      files: {
        'package.json': JSON.stringify({
          scripts: { test: 'npm run unit && bash scripts/check.sh', pretest: 'tsc', unit: 'jest --config jest.ci.js', build: 'tsc' },
          dependencies: { a: '1' },
        }),
        'scripts/check.sh': 'exit 0\n',
        'jest.ci.js': 'module.exports = {};\n',
        'tsconfig.json': '{}',
        'tsconfig.build.json': '{}',
      },
    });
    const keys = (await definitionParts(gate('npm test'), ws.dir)).map((p) => p.key);
    for (const key of [
      'package.json scripts.test',
      'package.json scripts.pretest',
      'package.json scripts.unit',
      'package.json jest',
      'package.json tap',
      'jest.config.js',
      '.mocharc.json',
      'test/mocha.opts',
      'pyproject.toml [^tool\\.pytest]',
      'scripts/check.sh',
      'jest.ci.js',
    ]) {
      assert.ok(keys.includes(key), `${key} in ${keys.join(', ')}`);
    }
    assert.ok(!keys.includes('package.json scripts.build'), 'a script the gate does not run is not part of it');
    const types = (await definitionParts(gate('npx tsc --noEmit', 'types'), ws.dir)).map((p) => p.key);
    assert.ok(types.includes('tsconfig.json') && types.includes('tsconfig.build.json'), types.join(', '));
    const lint = (await definitionParts(gate('npx eslint .', 'lint'), ws.dir)).map((p) => p.key);
    assert.ok(lint.includes('eslint.config.js') && lint.includes('.eslintrc.json') && !lint.includes('jest.config.js'), lint.join(', '));
  });

  it("ignores changes to a manifest outside the gate's part (a new dependency, another script)", async () => {
    ws = await makeTempWorkspace({
      files: {
        'package.json': JSON.stringify({ scripts: { test: 'node --test' }, dependencies: {} }),
        'pyproject.toml': '[project]\nname = "x"\ndependencies = []\n\n[tool.pytest.ini_options]\naddopts = "-q"\n',
        'Cargo.toml': '[package]\nname = "x"\n\n[dependencies]\nserde = "1"\n',
      },
    });
    const parts = await definitionParts(gate('npm test'), ws.dir);
    const before = await readDefinition(parts, ws.dir);
    await ws.write('package.json', JSON.stringify({ scripts: { test: 'node --test', build: 'tsc' }, dependencies: { left: '1' } }));
    await ws.write('pyproject.toml', '[project]\nname = "x"\ndependencies = ["requests"]\n\n[tool.pytest.ini_options]\naddopts = "-q"\n');
    await ws.write('Cargo.toml', '[package]\nname = "x"\n\n[dependencies]\nserde = "1"\nrand = "0.8"\n');
    assert.deepEqual(await readDefinition(parts, ws.dir), before);
    await ws.write('pyproject.toml', '[project]\nname = "x"\n\n[tool.pytest.ini_options]\naddopts = "-q -k greets"\n');
    const base = baselineOf(gate('npm test'), undefined, parts, before, {});
    const judged = judgeIntegrity(base, undefined, await readDefinition(parts, ws.dir), {});
    assert.deepEqual(judged.violations, ["`pyproject.toml [^tool\\.pytest]` changed since the task's base — restore it"]);
  });

  it('reads INI/TOML sections by name', () => {
    const text = '[tool.ruff]\nline-length = 100\n# note\n[tool.pytest.ini_options]\naddopts = "-q"\n[[tool.other]]\nx = 1\n';
    assert.equal(iniSections(text, /^tool\.pytest/), '[tool.pytest.ini_options]\naddopts = "-q"');
    assert.equal(iniSections(text, /^nothing$/), '');
  });

  it('allows new tests and flags gone, skipped and fewer tests', () => {
    const base = baselineOf(
      gate('npm test'),
      counts([
        ['a', 'pass'],
        ['b', 'fail'],
        ['c', 'skip'],
      ]),
      [],
      {},
      {},
    );
    assert.deepEqual(
      judgeIntegrity(
        base,
        counts([
          ['a', 'pass'],
          ['b', 'pass'],
          ['c', 'skip'],
          ['d', 'pass'],
        ]),
        {},
        {},
      ).violations,
      [],
    );
    const v = judgeIntegrity(
      base,
      counts([
        ['a', 'skip'],
        ['x', 'pass'],
      ]),
      {},
      {},
    ).violations;
    assert.deepEqual(v, [
      "test `b` ran at the task's base and is gone now (deleted, renamed or filtered out) — restore it",
      "test `a` is skipped now but ran at the task's base — un-skip it",
      "1 test ran, fewer than the 2 at the task's base — restore the tests that no longer run",
    ]);
    // a runner that names no tests: the counts decide
    const plain = baselineOf(gate('make test'), { passed: 3, failed: 0, skipped: 0, total: 3, failures: [] }, [], {}, {});
    assert.deepEqual(judgeIntegrity(plain, { passed: 3, failed: 0, skipped: 1, total: 4, failures: [] }, {}, {}).violations, [
      "1 more test is skipped than at the task's base (0 → 1) — un-skip them",
    ]);
    assert.match(judgeIntegrity(plain, undefined, {}, {}).violations[0], /gave no test count; at the task's base it ran 3 tests/);
    // a run that timed out or failed before reporting fails on its own output, not as a weakening
    assert.deepEqual(judgeIntegrity(plain, undefined, {}, {}, { completed: false }).violations, []);
  });

  it('lets an allowed gate keep its verdict and records what changed, without asking to undo it', () => {
    const outcome: GateOutcome = {
      name: 'tests',
      kind: 'tests',
      required: true,
      passed: true,
      summary: '2/2 tests passing',
      exitCode: 0,
      timedOut: false,
      durationMs: 1,
      parsed: {},
      fixItems: [],
    };
    const judgement = { violations: ["`package.json scripts.test` changed since the task's base (`a` → `b`) — restore it"] };
    assert.deepEqual(applyIntegrity(outcome, judgement, true).integrity, {
      violations: [],
      allowed: ["`package.json scripts.test` changed since the task's base (`a` → `b`)"],
    });
    const failed = applyIntegrity(outcome, judgement, false);
    assert.equal(failed.passed, false);
    assert.equal(failed.fixItems[0].text, `gate weakened: ${judgement.violations[0]}`);
    assert.equal(applyIntegrity(outcome, { violations: [] }, false), outcome);
  });

  it('counts lines of the base that are gone, not lines added', () => {
    assert.deepEqual(removedLines('a\n  b\nb\n\nc', 'a\nb\nnew\nc\nmore'), ['b']);
    assert.deepEqual(removedLines('x', 'x\ny'), []);
  });
});

/** node-tap 16 as it prints a file its runner timed out before the file's tests reported (`"timeout": 30` under load). */
const tapRun = (cli: 'timeout' | 'pass' | 'red' | 'gone' | 'cut') => {
  const files = [
    `# Subtest: test/range.js
    # Subtest: range parsing
        ok 1 - 1.x.5
        1..1
    ok 1 - range parsing # time=3ms
    1..1
ok 1 - test/range.js # time=120ms
`,
  ];
  if (cli === 'timeout')
    files.push(`# Subtest: test/bin/cli.js
    1..0 # no tests found
not ok 2 - test/bin/cli.js # time=30012ms
  ---
  file: test/bin/cli.js
  timeout: 30000
  signal: SIGTERM
  ...
`);
  if (cli === 'cut')
    files.push(`# Subtest: test/bin/cli.js
    # Subtest: help output
        ok 1 - must match snapshot
        1..1
    ok 1 - help output # time=900ms
    # test count(1) != plan(null)
not ok 2 - test/bin/cli.js # time=30010ms
  ---
  file: test/bin/cli.js
  timeout: 30000
  failures:
    - tapError: no plan
  signal: SIGTERM
  ...
`);
  if (cli === 'pass' || cli === 'red')
    files.push(`# Subtest: test/bin/cli.js
    # Subtest: help output
        ${cli === 'red' ? 'not ok' : 'ok'} 1 - must match snapshot
        1..1
    ${cli === 'red' ? 'not ok' : 'ok'} 1 - help output # time=900ms
    # Subtest: sorting
        ok 1 - must match snapshot
        1..1
    ok 2 - sorting # time=800ms
    1..2
${cli === 'red' ? 'not ok' : 'ok'} 2 - test/bin/cli.js # time=10500ms
`);
  return `TAP version 13\n${files.join('')}1..${files.length}\n`;
};

describe('gate integrity: a whole test file that failed at the base as one entry', () => {
  const base = baselineOf(gate('npx tap'), parseGateOutput('tests', tapRun('timeout')).tests, [], {}, {});

  it('is there in a later run through the tests of its file, and passes when all of them pass', () => {
    assert.deepEqual(
      base.tests?.names?.map((t) => `${t.name}: ${t.status}`),
      ['test/range.js > range parsing: pass', 'test/bin/cli.js: fail'],
      'tap names the timed-out file by its path, as one failing test',
    );
    const green = parseGateOutput('tests', tapRun('pass')).tests;
    assert.deepEqual(judgeIntegrity(base, green, {}, {}).violations, []);
    assert.deepEqual(failedAtBaseNowPassing(base, green), [{ name: 'test/bin/cli.js', file: 'test/bin/cli.js' }]);
  });

  it('does not pass while one of its tests fails, and is gone when none of them ran', () => {
    assert.deepEqual(failedAtBaseNowPassing(base, parseGateOutput('tests', tapRun('red')).tests), []);
    const gone = judgeIntegrity(base, parseGateOutput('tests', tapRun('gone')).tests, {}, {}).violations;
    assert.match(gone[0], /test `test\/bin\/cli\.js` ran at the task's base and is gone now/);
  });

  it("has its file's lines guarded: lines of the base gone from it are a test rewritten to pass", () => {
    const green = parseGateOutput('tests', tapRun('pass')).tests;
    const guards = {
      'test/bin/cli.js': [{ file: 'test/bin/cli.js', before: "t.test('help output')\nt.test('sorting')\n", after: "t.test('sorting')\n" }],
    };
    assert.match(
      judgeIntegrity(base, green, {}, guards).violations[0],
      /test `test\/bin\/cli\.js` failed at the task's base and passes now/,
    );
  });

  it('keeps a test that failed at the base and is named like a file apart from one whose file it is not', () => {
    const named = baselineOf(gate('npx tap'), counts([['test/bin/cli.js', 'fail']]), [], {}, {});
    // without a file the entry is a test's title, not a whole file: a test of another name does not stand for it
    const v = judgeIntegrity(named, counts([['test/bin/cli.js > help output', 'pass']]), {}, {}).violations;
    assert.match(v[0], /is gone now/);
  });

  it('names a file tap stopped at its timeout, and its tests that did not get to report are cut short, not gone', () => {
    const cut = parseGateOutput('tests', tapRun('cut')).tests;
    assert.deepEqual(cut?.failures, [
      { name: 'test/bin/cli.js', message: 'timed out: tap stopped it at its timeout (30000 ms)', file: 'test/bin/cli.js' },
    ]);
    const green = baselineOf(gate('npx tap'), parseGateOutput('tests', tapRun('pass')).tests, [], {}, {});
    assert.deepEqual(judgeIntegrity(green, cut, {}, {}), { violations: [] }, 'the timeout fails the gate; nothing to restore');
    // a file that failed as a whole at the base too: its tests missing now are gone, as any
    const cutAtBase = baselineOf(gate('npx tap'), cut, [], {}, {});
    const again = judgeIntegrity(cutAtBase, parseGateOutput('tests', tapRun('timeout')).tests, {}, {});
    assert.match(again.violations[0], /test `test\/bin\/cli\.js > help output` ran at the task's base and is gone now/);
    assert.deepEqual(again.gone, ['test/bin/cli.js > help output']);
  });

  it("gives a run's tests the file that failed as a whole at the base where the runner names none (node:test), from that file's text", async () => {
    const atBase = baselineOf(
      gate('node --test'),
      {
        ...counts([['b works', 'pass']]),
        names: [
          { name: 'test/a.test.js', status: 'fail', file: 'test/a.test.js' },
          { name: 'b works', status: 'pass' },
        ],
      },
      [],
      {},
      {},
    );
    const now = counts([
      ['a works', 'pass'],
      ['b works', 'pass'],
      ['c works', 'fail'],
    ]);
    const texts: Record<string, string> = { 'test/a.test.js': "test('a works', () => {});\n" };
    const read = async (file: string) => texts[file];
    const seen = await attributeToWholeFiles(atBase.tests?.names, now, read);
    assert.deepEqual(
      seen?.names?.map((t) => `${t.name}${t.file ? ` @ ${t.file}` : ''}`),
      ['a works @ test/a.test.js', 'b works', 'c works'],
    );
    assert.deepEqual(judgeIntegrity(atBase, seen, {}, {}).violations, []);
    assert.deepEqual(failedAtBaseNowPassing(atBase, seen), [{ name: 'test/a.test.js', file: 'test/a.test.js' }]);
    // the file's text lost the test: nothing stands for the entry, which is gone
    const emptied = await attributeToWholeFiles(atBase.tests?.names, now, async () => '// nothing here\n');
    assert.match(judgeIntegrity(atBase, emptied, {}, {}).violations[0], /test `test\/a\.test\.js` ran at the task's base and is gone now/);
    // a path outside the workspace is not read
    const outside = baselineOf(
      gate('node --test'),
      { ...counts([]), names: [{ name: '../x.test.js', status: 'fail', file: '../x.test.js' }] },
      [],
      {},
      {},
    );
    let reads = 0;
    await attributeToWholeFiles(outside.tests?.names, now, async () => {
      reads++;
      return undefined;
    });
    assert.equal(reads, 0);
  });
});
