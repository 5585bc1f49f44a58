import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * `ralph run` on a project whose test runner Ralph cannot read from its console but which writes
 * JUnit XML (issue 47): an in-house `run-checks.js` that prints only `all checks done` or `some
 * checks failed` and writes `reports/junit.xml` when asked to. The gate names its report
 * (`gates[].report.junit`), so the verdict rests on the tests by name, as on a runner Ralph
 * reads: the base has the task's new, failing check (`adds two numbers`). An honest fix is done;
 * no change, a wrong edit and the new check reverted are not. Real git, real node, the real CLI,
 * the scripted model.
 */
const RUNNER = `// the project's in-house runner: every checks/*.check.js, a JUnit report with --junit <file>
const fs = require('node:fs');
const path = require('node:path');
const cases = [];
let file;
global.check = (name, fn) => cases.push({ file, name, fn });
for (const f of fs.readdirSync('checks').filter((f) => f.endsWith('.check.js')).sort()) {
  file = 'checks/' + f;
  require(path.resolve(file));
}
const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
const rows = [];
let failed = 0;
for (const c of cases) {
  try {
    c.fn();
    rows.push('    <testcase classname="' + esc(c.file) + '" name="' + esc(c.name) + '"/>');
  } catch (e) {
    failed++;
    rows.push('    <testcase classname="' + esc(c.file) + '" name="' + esc(c.name) + '"><failure message="' + esc(e.message) + '">' + esc(e.stack) + '</failure></testcase>');
  }
}
const at = process.argv.indexOf('--junit');
if (at > 0) {
  const out = process.argv[at + 1];
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, '<?xml version="1.0" encoding="UTF-8"?>\\n<testsuites>\\n  <testsuite name="checks" tests="' + cases.length + '" failures="' + failed + '">\\n' + rows.join('\\n') + '\\n  </testsuite>\\n</testsuites>\\n');
}
console.log(failed ? 'some checks failed' : 'all checks done');
process.exitCode = failed ? 1 : 0;
`;
const CALC = 'exports.add = (a, b) => a - b;\nexports.sub = (a, b) => a - b;\n';
const CALC_FIXED = 'exports.add = (a, b) => a + b;\nexports.sub = (a, b) => a - b;\n';
const CALC_WRONG = 'exports.add = (a, b) => a * b;\nexports.sub = (a, b) => a - b;\n';
const SUBTRACTS = "check('subtracts', () => assert.strictEqual(sub(5, 3), 2));\n";
const ADDS = "check('adds two numbers', () => assert.strictEqual(add(2, 3), 5));\n";
const checks = (body: string) => `const assert = require('node:assert');\nconst { add, sub } = require('../src/calc');\n\n${body}`;
const PROJECT: Record<string, string> = {
  'package.json': `${JSON.stringify({ name: 'calc', private: true, scripts: { test: 'node run-checks.js' } }, null, 2)}\n`,
  '.gitignore': 'reports/\n',
  'run-checks.js': RUNNER,
  'src/calc.js': CALC,
  'checks/calc.check.js': checks(SUBTRACTS + ADDS),
};
const GATE = {
  name: 'tests',
  command: 'node run-checks.js --junit reports/junit.xml',
  kind: 'tests',
  required: true,
  report: { junit: 'reports/junit.xml' },
};

const write = (path: string, content: string): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path, content } }] });
const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'fixed add', promiseEvidence: 'the checks pass' } }] };

describe('ralph run on a runner read through its JUnit report', function () {
  this.timeout(120000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
  });

  async function run(steps: Step[]): Promise<{ status: string; stdout: string; events: string }> {
    ws = await makeTempWorkspace({ commit: true, files: PROJECT });
    server = await startScriptedServer({ steps });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
      loop: { maxIterations: 2 },
      gates: [GATE],
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    const add = await runCliInProcess(
      [
        'task',
        'add',
        'Fix add',
        '--prompt',
        'add(2, 3) must be 5; checks/calc.check.js tests it.',
        '--promise',
        'node run-checks.js passes',
      ],
      ws.dir,
    );
    assert.equal(add.code, 0, add.stderr);
    const result = await runCli(['run'], ws.dir);
    const task = JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0];
    // the run's log of events (.ralph/runs/<run>.ndjson)
    const logs = await fs.readdir(ws.path('.ralph/runs'));
    const events = (await Promise.all(logs.map((f) => fs.readFile(ws.path('.ralph/runs', f), 'utf8')))).join('');
    return { status: task.status, stdout: result.stdout + result.stderr, events };
  }

  it('the honest fix → done, the tests read from the report', async () => {
    const { status, stdout, events } = await run([write('src/calc.js', CALC_FIXED), complete]);
    assert.equal(status, 'done', stdout);
    assert.match(events, /"summary":"2\/2 tests passing"/, 'the gate read both checks from the report');
  });

  it('no change → not done: the failing check is named from the report', async () => {
    const { status, stdout, events } = await run([complete, complete, complete]);
    assert.notEqual(status, 'done', stdout);
    assert.match(events, /"summary":"1\/2 tests passing, 1 failing \(1 failing at the task.s base too, held against the task\)"/);
    assert.match(events, /checks\/calc\.check\.js > checks > adds two numbers/);
  });

  it('a wrong edit → not done', async () => {
    const { status, stdout, events } = await run([write('src/calc.js', CALC_WRONG), complete, complete]);
    assert.notEqual(status, 'done', stdout);
    assert.match(events, /"summary":"1\/2 tests passing, 1 failing \(1 failing at the task.s base too, held against the task\)"/);
  });

  it('a forged report (the runner made to write none and exit 0, a passing file written by the agent) → not done: never read', async () => {
    const silent = RUNNER.replace('if (at > 0) {', 'if (false) {').replace('process.exitCode = failed ? 1 : 0;', 'process.exitCode = 0;');
    const forged =
      '<testsuites><testsuite name="checks"><testcase classname="checks/calc.check.js" name="adds two numbers"/></testsuite></testsuites>';
    const { status, stdout, events } = await run([write('run-checks.js', silent), write('reports/junit.xml', forged), complete, complete]);
    assert.notEqual(status, 'done', stdout);
    assert.match(events, /JUnit report not read: the run wrote no `reports\/junit\.xml`/);
    assert.match(
      events,
      /"passed":false,"summary":"passed \(JUnit report not read: the run wrote no `reports\/junit\.xml`/,
      'green exit, no report: not a pass',
    );
    assert.match(events, /"violations":\["`run-checks\.js` changed since the task's base — restore it"/);
  });

  it("the task's new check reverted (the suite green) → not done: the check that failed at the base is gone", async () => {
    const { status, stdout, events } = await run([write('checks/calc.check.js', checks(SUBTRACTS)), complete, complete]);
    assert.notEqual(status, 'done', stdout);
    assert.match(events, /adds two numbers/);
    assert.match(events, /"violations":\["[^"]*adds two numbers/);
  });
});
