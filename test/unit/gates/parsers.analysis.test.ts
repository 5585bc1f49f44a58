import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import { MOCHA_PROJECT, useToolProjects } from './projects';
import { RUN_TIMEOUT_MS, runTool } from './toolchain';

const TS_PROJECT: Record<string, string> = {
  'tsconfig.json': JSON.stringify({ compilerOptions: { strict: true, noEmit: true, types: [] }, include: ['src'] }),
  'src/a.ts': "export const n: number = 'not a number';\nexport function f(x: string): number {\n  return x;\n}\n",
  'src/b.ts': "import { missing } from './nowhere';\nexport const y = missing;\n",
  'src/ok.ts': 'export const ok = 1;\n',
};

const ESLINT_PROJECT: Record<string, string> = {
  'eslint.config.mjs': `export default [{
  files: ['**/*.js'],
  languageOptions: { sourceType: 'module', globals: { console: 'readonly' } },
  rules: { 'no-unused-vars': 'error', 'no-undef': 'error', 'prefer-const': 'warn', eqeqeq: 'warn' },
}];
`,
  'src/a.js': 'const unused = 1;\nlet x = 2;\nif (x == 3) { console.log(undefinedThing); }\n',
  'src/ok.js': 'export const ok = 1;\n',
};

/** MOCHA_PROJECT with its failing test fixed and a function no test calls, so coverage is partial. */
const COVERED_PROJECT: Record<string, string> = {
  ...MOCHA_PROJECT,
  'calc.js': `${MOCHA_PROJECT['calc.js']}exports.div = (a, b) => {\n  if (b === 0) throw new Error('division by zero');\n  return a / b;\n};\n`,
  'test/calc.test.js': MOCHA_PROJECT['test/calc.test.js'].replace('calc.sub(3, 1), 1', 'calc.sub(3, 1), 2'),
};

describe('gate output parsers: tsc, eslint, coverage (real tools)', function () {
  // Real tools start slowly on a busy machine; the unit suite's default 20 s is too tight.
  this.timeout(RUN_TIMEOUT_MS);
  const { tools: toolchain, project } = useToolProjects();

  it('reads tsc errors in the plain and the --pretty (coloured) form alike', async () => {
    const p = await project(TS_PROJECT);
    const expected = {
      count: 3,
      errors: [
        { file: 'src/a.ts', line: 1, message: "TS2322: Type 'string' is not assignable to type 'number'." },
        { file: 'src/a.ts', line: 3, message: "TS2322: Type 'string' is not assignable to type 'number'." },
        { file: 'src/b.ts', line: 1, message: "TS2307: Cannot find module './nowhere' or its corresponding type declarations." },
      ],
    };
    const plain = await runTool([...toolchain().bin('typescript', 'tsc'), '-p', '.'], p.dir);
    assert.equal(plain.exitCode, 2, plain.output);
    assert.deepEqual(parseGateOutput('types', plain.output).typeErrors, expected);
    assert.deepEqual(parseGateOutput('custom', plain.output), { typeErrors: expected }, 'a custom gate reads whatever it recognises');
    const pretty = await runTool([...toolchain().bin('typescript', 'tsc'), '-p', '.', '--pretty'], p.dir);
    assert.match(pretty.output, /Found 3 errors in 2 files/);
    assert.deepEqual(parseGateOutput('types', pretty.output).typeErrors, expected);

    await fs.rm(p.path('src/a.ts'));
    await fs.rm(p.path('src/b.ts'));
    const clean = await runTool([...toolchain().bin('typescript', 'tsc'), '-p', '.'], p.dir);
    assert.equal(clean.exitCode, 0, clean.output);
    assert.deepEqual(parseGateOutput('types', clean.output), {}, 'a clean tsc prints nothing: nothing to report');
  });

  it('reads eslint stylish output (plain and coloured) and eslint -f json the same way', async () => {
    const p = await project(ESLINT_PROJECT);
    const problems = [
      { file: 'src/a.js', line: 1, rule: 'no-unused-vars', severity: 'error', message: "'unused' is assigned a value but never used" },
      { file: 'src/a.js', line: 2, rule: 'prefer-const', severity: 'warning', message: "'x' is never reassigned. Use 'const' instead" },
      { file: 'src/a.js', line: 3, rule: 'eqeqeq', severity: 'warning', message: "Expected '===' and instead saw '=='" },
      { file: 'src/a.js', line: 3, rule: 'no-undef', severity: 'error', message: "'undefinedThing' is not defined" },
    ];
    for (const color of [false, true]) {
      const run = await runTool([...toolchain().bin('eslint'), ...(color ? ['--color'] : []), 'src'], p.dir);
      assert.equal(run.exitCode, 1, run.output);
      assert.deepEqual(
        parseGateOutput('lint', run.output, { cwd: p.dir }).lintProblems,
        { errors: 2, warnings: 2, problems },
        `color: ${color}`,
      );
    }
    const json = await runTool([...toolchain().bin('eslint'), '-f', 'json', 'src'], p.dir);
    const fromJson = parseGateOutput('lint', `npm warn something\n${json.output}`, { cwd: p.dir }).lintProblems;
    // The JSON form keeps the message's final period, which stylish drops.
    assert.deepEqual(fromJson, { errors: 2, warnings: 2, problems: problems.map((x) => ({ ...x, message: `${x.message}.` })) });
  });

  it('reads coverage from the c8 text table, the json-summary file, lcov and text-summary, all agreeing', async () => {
    const p = await project(COVERED_PROJECT);
    const c8 = (...reporters: string[]) =>
      runTool(
        [...toolchain().bin('c8'), ...reporters.map((r) => `--reporter=${r}`), ...toolchain().bin('mocha').slice(1), 'test/calc.test.js'],
        p.dir,
      );

    const table = await c8('text', 'json-summary');
    assert.equal(table.exitCode, 0, table.output);
    const summary = JSON.parse(await p.read('coverage/coverage-summary.json')) as {
      total: { lines: { pct: number; covered: number; total: number } };
    };
    const lines = summary.total.lines;
    assert.ok(lines.pct > 0 && lines.pct < 100, `partial coverage expected, got ${lines.pct}`);
    const fromTable = parseGateOutput('coverage', table.output, { cwd: p.dir });
    assert.deepEqual(fromTable.coverage, { percent: lines.pct, source: 'text table (% Lines)' });
    assert.deepEqual([fromTable.tests?.passed, fromTable.tests?.failed], [3, 0], 'the tests the coverage command ran are counted too');

    const silent = await c8('json-summary');
    assert.doesNotMatch(silent.output, /All files/);
    assert.deepEqual(parseGateOutput('coverage', silent.output, { cwd: p.dir }).coverage, {
      percent: lines.pct,
      source: 'coverage/coverage-summary.json (lines)',
    });
    assert.equal(parseGateOutput('coverage', silent.output).coverage, undefined, 'files are read only with a cwd');

    await fs.rm(p.path('coverage'), { recursive: true });
    const lcov = await c8('lcovonly');
    assert.equal(lcov.exitCode, 0, lcov.output);
    const fromLcovFile = parseGateOutput('coverage', lcov.output, { cwd: p.dir }).coverage;
    assert.deepEqual(fromLcovFile, { percent: lines.pct, source: 'coverage/lcov.info (lines)' });
    const lcovText = await p.read('coverage/lcov.info');
    assert.deepEqual(parseGateOutput('coverage', `${lcov.output}\n${lcovText}`).coverage, {
      ...fromLcovFile,
      source: 'lcov in the output (lines)',
    });

    const textSummary = await c8('text-summary');
    assert.deepEqual(parseGateOutput('coverage', textSummary.output).coverage, { percent: lines.pct, source: 'text-summary (lines)' });
  });

  it('reads the coverage table jest prints with --coverage alongside the test counts', async () => {
    const p = await project({
      'package.json': JSON.stringify({ name: 'jc', private: true }),
      'calc.js': COVERED_PROJECT['calc.js'],
      'calc.test.js': "const calc = require('./calc');\ntest('adds', () => expect(calc.add(1, 2)).toBe(3));\n",
    });
    const run = await runTool(
      [...toolchain().bin('jest'), '--ci', '--coverage', '--coverageReporters=text', '--coverageReporters=json-summary'],
      p.dir,
    );
    assert.equal(run.exitCode, 0, run.output);
    const summary = JSON.parse(await p.read('coverage/coverage-summary.json')) as { total: { lines: { pct: number } } };
    const parsed = parseGateOutput('tests', run.output, { cwd: p.dir });
    assert.deepEqual(parsed.coverage, { percent: summary.total.lines.pct, source: 'text table (% Lines)' });
    assert.deepEqual([parsed.tests?.passed, parsed.tests?.total], [1, 1]);
  });
});
