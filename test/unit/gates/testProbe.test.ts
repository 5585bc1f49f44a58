import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { IsolatedCommandRunner, probeSandbox } from '../../../src/core/commands/sandbox';
import { SecretRedactor } from '../../../src/core/commands/secrets';
import type { GateConfig } from '../../../src/core/config/schema';
import { parseGateOutput } from '../../../src/core/gates/parsers';
import {
  ProbingGateRunner,
  RALPH_RUN_ENV,
  readTestLocations,
  TEST_PROBE_DIR_ENV,
  testProbeSource,
} from '../../../src/core/gates/probe/probeRunner';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import { withTestLocations } from '../../../src/core/gates/testLocations';
import type { GateRunner, GateRunResult } from '../../../src/core/gates/types';
import { useToolProjects } from './projects';
import { RUN_TIMEOUT_MS } from './toolchain';

/**
 * The test probe on real runners (mocha 11 and tape 5 from the parser tests' toolchain): it
 * reports where each test is defined — the test file, also when the library under test throws
 * and the failure's stack starts in the library — for CommonJS and ESM test files, through npm
 * scripts, and inside the bubblewrap sandbox.
 */
const LIBRARY = {
  'lib.js':
    "exports.parse = (s) => {\n  if (typeof s !== 'string') throw new TypeError('parse wants a string');\n  return s.split(',');\n};\n",
};

const MOCHA_PROJECT = {
  ...LIBRARY,
  'package.json': JSON.stringify({ name: 'pm', private: true, scripts: { test: 'mocha "test/**/*.test.*"' } }),
  'test/parse.test.js': `const assert = require('node:assert');
const { parse } = require('../lib');
describe('parse', () => {
  it('splits', () => assert.deepStrictEqual(parse('a,b'), ['a', 'b']));
  it('rejects a number', () => assert.deepStrictEqual(parse(1), []));
  it.skip('later', () => {});
});
`,
  'test/esm.test.mjs': `import assert from 'node:assert';
import lib from '../lib.js';
describe('esm', () => {
  it('throws from the library', () => assert.deepStrictEqual(lib.parse(2), []));
});
`,
};

const TAPE_PROJECT = {
  ...LIBRARY,
  'package.json': JSON.stringify({ name: 'pt', private: true, scripts: { test: "tape 'test/**/*.js' 'test/**/*.mjs'" } }),
  'test/a.js': `const test = require('tape');
const { parse } = require('../lib');
test('splits', (t) => { t.deepEqual(parse('a,b'), ['a', 'b']); t.end(); });
test('splits', (t) => { t.equal(parse('a').length, 2, 'one item'); t.end(); });
`,
  'test/b.mjs': `import test from 'tape';
test('splits', (t) => { t.ok(true); t.end(); });
test('esm only', (t) => { t.ok(true); t.end(); });
`,
  'test/c.js': `const test = require('tape');
require('../helpers/cases')(test, 'from a helper');
`,
  'helpers/cases.js': `module.exports = (test, name) => test(name, (t) => { t.ok(true); t.end(); });
`,
};

const gate = (command: string): GateConfig => ({ name: 'tests', kind: 'tests', command, required: true }) as GateConfig;

async function run(runner: GateRunner, cwd: string, command = 'npm test'): Promise<GateRunResult> {
  return runner.run({ gate: gate(command), cwd, timeoutMs: RUN_TIMEOUT_MS });
}

/** Each failing test with the file it is said to be in, once the run's locations are applied. */
function located(result: GateRunResult): { failures: [string, string | undefined][]; names: [string, string | undefined][] } {
  const parsed = parseGateOutput('tests', result.output).tests;
  assert.ok(parsed, result.output);
  const tests = withTestLocations(parsed, result.testLocations ?? []);
  return {
    failures: tests.failures.map((f) => [f.name, f.file]),
    names: (tests.names ?? []).map((t) => [t.name, t.file]),
  };
}

describe('the test probe', function () {
  this.timeout(RUN_TIMEOUT_MS);
  const { project } = useToolProjects();
  const plain = () => new ProbingGateRunner(new ProcessGateRunner(new NodeCommandRunner()));

  it('is found beside the compiled code, as it is beside the bundles', () => {
    assert.ok(testProbeSource(), 'testProbe.js is missing beside probeRunner.js');
  });

  it('mocha: every test in its file (CommonJS and ESM), a failure thrown by the library in its test file', async () => {
    const p = await project(MOCHA_PROJECT);
    const result = await run(plain(), p.dir);
    assert.notEqual(result.exitCode, 0, result.output);
    const { failures, names } = located(result);
    assert.deepEqual(failures.sort(), [
      ['esm throws from the library', 'test/esm.test.mjs'],
      ['parse rejects a number', 'test/parse.test.js'],
    ]);
    assert.deepEqual(names.sort(), [
      ['esm throws from the library', 'test/esm.test.mjs'],
      ['parse later', 'test/parse.test.js'],
      ['parse rejects a number', 'test/parse.test.js'],
      ['parse splits', 'test/parse.test.js'],
    ]);
    assert.ok(!failures.some(([, file]) => file === 'lib.js'), 'the library is never taken for the test');
  });

  it('tape: the file tape was loading when each test was registered, under the names the parser gives repeated ones', async () => {
    const p = await project(TAPE_PROJECT);
    const result = await run(plain(), p.dir);
    assert.notEqual(result.exitCode, 0, result.output);
    const { failures, names } = located(result);
    assert.deepEqual(failures, [['splits (2)', 'test/a.js']]);
    // a test a helper registers is the test file's that was loading: the helper is not a test file
    assert.deepEqual(names, [
      ['splits', 'test/a.js'],
      ['splits (2)', 'test/a.js'],
      ['from a helper', 'test/c.js'],
      ['splits (3)', 'test/b.mjs'],
      ['esm only', 'test/b.mjs'],
    ]);
  });

  it('runs inside the bubblewrap sandbox: its folder is writable there, the records come back', async function () {
    const probe = await probeSandbox();
    if (!probe.available) return this.skip();
    const p = await project(MOCHA_PROJECT);
    const isolated = new IsolatedCommandRunner(
      new NodeCommandRunner(),
      { root: p.dir, commands: { sandbox: 'required', network: false, env: [] }, keyVariables: [] },
      new SecretRedactor(),
    );
    const result = await run(new ProbingGateRunner(new ProcessGateRunner(isolated)), p.dir);
    assert.notEqual(result.exitCode, 0, result.output);
    assert.deepEqual(located(result).failures.sort(), [
      ['esm throws from the library', 'test/esm.test.mjs'],
      ['parse rejects a number', 'test/parse.test.js'],
    ]);
  });

  it('changes nothing else: the same output and exit code, a process without a runner writes nothing, the folder is removed', async () => {
    const p = await project(MOCHA_PROJECT);
    const bare = await run(new ProcessGateRunner(new NodeCommandRunner()), p.dir);
    const probed = await run(plain(), p.dir);
    const timeless = (text: string) => text.replace(/\(\d+ms\)/g, '');
    assert.equal(timeless(probed.output), timeless(bare.output));
    assert.equal(probed.exitCode, bare.exitCode);
    let seen: Record<string, string> | undefined;
    const spy: GateRunner = {
      async run(request) {
        seen = { ...request.env, ...request.appendEnv };
        return new ProcessGateRunner(new NodeCommandRunner()).run(request);
      },
    };
    const quiet = await run(new ProbingGateRunner(spy), p.dir, `node -e "require('node:path'); console.log('fine')"`);
    assert.equal(quiet.output.trim(), 'fine');
    assert.equal(quiet.testLocations, undefined);
    assert.deepEqual(Object.keys(seen ?? {}).sort(), [...RALPH_RUN_ENV].sort());
    assert.equal(existsSync(path.dirname(seen![TEST_PROBE_DIR_ENV])), false, 'the run folder is gone');
  });

  it('appends to the NODE_OPTIONS a gate already has', async () => {
    const p = await project(MOCHA_PROJECT);
    const result = await run(plain(), p.dir, `NODE_OPTIONS=--no-warnings npm test`);
    assert.equal(located(result).failures.length, 2);
    const direct = await new NodeCommandRunner().run({
      command: 'echo "$NODE_OPTIONS"',
      cwd: p.dir,
      timeoutMs: 10_000,
      maxOutputChars: 1000,
      env: { NODE_OPTIONS: '--no-warnings' },
      appendEnv: { NODE_OPTIONS: '--require "/x y/probe.cjs"' },
    });
    assert.equal(direct.output.trim(), '--no-warnings --require "/x y/probe.cjs"');
  });
});

describe('test locations from the probe', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-probe-read-'));
    await fs.mkdir(path.join(dir, 'records'));
  });
  afterEach(() => fs.rm(dir, { recursive: true, force: true }));

  it('a name in two files is located nowhere; files are relative to the run; broken lines are skipped', async () => {
    const rec = (name: string, file: string) => JSON.stringify({ runner: 'mocha', name, file, status: 'pass' });
    await fs.writeFile(
      path.join(dir, 'records', '1-0.ndjson'),
      [rec('a', '/w/test/a.js'), rec('twice', '/w/test/a.js'), '{"half'].join('\n'),
    );
    await fs.writeFile(
      path.join(dir, 'records', '2-0.ndjson'),
      [rec('twice', '/w/test/b.js'), rec('a', '/w/test/a.js'), rec('out', '/elsewhere/x.js')].join('\n'),
    );
    assert.deepEqual(await readTestLocations(dir, '/w'), [
      { name: 'a', file: 'test/a.js' },
      { name: 'out', file: '/elsewhere/x.js' },
    ]);
  });

  it('fill only the tests whose file the output did not say, by exact name', () => {
    const tests = withTestLocations(
      {
        passed: 1,
        failed: 1,
        skipped: 0,
        total: 2,
        failures: [{ name: 'b', file: 'said.test.js' }],
        names: [
          { name: 'a', status: 'pass' },
          { name: 'b', status: 'fail', file: 'said.test.js' },
        ],
      },
      [
        { name: 'a', file: 'a.test.js' },
        { name: 'b', file: 'other.test.js' },
        { name: 'a', file: 'a2.test.js' },
      ],
    );
    assert.deepEqual(tests.names, [
      { name: 'a', status: 'pass' },
      { name: 'b', status: 'fail', file: 'said.test.js' },
    ]);
    assert.deepEqual(tests.failures, [{ name: 'b', file: 'said.test.js' }]);
  });
});
