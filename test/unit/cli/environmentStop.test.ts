import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { probeSandbox } from '../../../src/core/commands/sandbox';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { agentSteps, CALC_FIXED, type CachyProject, makeCachyProject, PLAIN_GITIGNORE } from '../helpers/cachyProject';
import { runCli } from '../helpers/cliHarness';

/** The project's test, which needs a fixture the developer keeps out of git (a credentials file, say). */
const NEEDS_SECRET = `const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const { add } = require('../src/calc');

test('adds two numbers', () => {
  const secret = JSON.parse(fs.readFileSync(require('node:path').join(__dirname, 'fixtures', 'secret.json'), 'utf8'));
  assert.equal(secret.ok, true);
  assert.equal(add(2, 3), 5);
});
`;

/**
 * Issue 36: a repository's test command that cannot run where the task runs, for a reason no
 * change of the agent fixes, is said at the task's first gate run — the gate, its command, the
 * error, the setting to use — and the task stops instead of iterating to its limit.
 */
describe('a test command that cannot run where the task runs: said at the first gate run, with the setting to use', function () {
  if (process.platform !== 'linux') return;
  this.timeout(240_000);
  let server: ScriptedServer;
  let project: CachyProject | undefined;
  before(async function () {
    const probe = await probeSandbox();
    if (!probe.available) {
      console.log(`      skipped: no working bubblewrap here (${probe.reason})`);
      this.skip();
    }
  });
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
    await project?.ws.cleanup();
    project = undefined;
  });
  const tasks = async (p: CachyProject) => TaskFileSchema.parse(JSON.parse(await p.ws.read('.ralph/tasks.json'))).tasks;

  it('a runner that dies writing into its own installed package, in the workspace: halted before any model call', async () => {
    const p = (project = await makeCachyProject({ gitignore: PLAIN_GITIGNORE, script: 'cachy --strict-stats test/calc.test.js' }));
    await p.configure(server.url, { loop: { maxIterations: 3, maxParallel: 1 } });
    await p.addTask();
    server.push(...agentSteps(8));
    const run = await runCli(['run'], p.ws.dir);
    assert.equal(run.code, 1, run.stdout + run.stderr);
    const [task] = await tasks(p);
    assert.equal(task.status, 'halted');
    assert.match(
      task.blockedReason ?? '',
      /^the gate tests \(`npm test`\) cannot run here: it writes .*node_modules\/cachy\/last-run\.json, inside the installed dependencies, which are read-only .*Its output: ".*EROFS.*"\. Make the tool keep what it writes under node_modules\/\.cache .*"commands\.sandbox": "off".*stopped at its first run of the gates/,
    );
    assert.equal(server.requests.length, 0, 'no model call was spent on it');
    assert.match(run.stdout, /HALTED.*cannot run here/);
  });

  it("the same in a task's worktree: halted after its first iteration, not at the limit", async () => {
    const p = (project = await makeCachyProject({ gitignore: PLAIN_GITIGNORE, script: 'cachy --strict-stats test/calc.test.js' }));
    await p.configure(server.url);
    await p.addTask();
    server.push(...agentSteps(12));
    const run = await runCli(['run'], p.ws.dir);
    const [task] = await tasks(p);
    assert.equal(task.status, 'halted', run.stdout);
    assert.equal(task.iterations, 1);
    assert.match(task.blockedReason ?? '', /^the gate tests \(`npm test`\) cannot run in a task's worktree: it writes .*last-run\.json/);
  });

  it("a fixture kept out of git, in a task's worktree: names worktrees.link; once linked, the task is done", async () => {
    const p = (project = await makeCachyProject({ gitignore: PLAIN_GITIGNORE, files: { 'test/calc.test.js': NEEDS_SECRET } }));
    await fs.appendFile(p.ws.path('test/.gitignore'), 'fixtures/\n');
    p.ws.git('commit', '-qam', 'fixtures stay local');
    await p.ws.write('test/fixtures/secret.json', '{"ok":true}\n');
    await p.configure(server.url);
    const id = await p.addTask();
    server.push(...agentSteps(12));
    await runCli(['run'], p.ws.dir);
    const [task] = await tasks(p);
    assert.equal(task.status, 'halted');
    assert.match(
      task.blockedReason ?? '',
      /cannot run in a task's worktree: it needs test\/fixtures, which is in your working tree but not committed .*Add "test\/fixtures" to "worktrees\.link" in \.ralph\/config\.json/,
    );
    // as the message says
    await p.configure(server.url, { worktrees: { link: ['node_modules', 'test/fixtures'] } });
    assert.equal((await runCli(['task', 'retry', id], p.ws.dir)).code, 0);
    server.push(...agentSteps(12));
    const again = await runCli(['run'], p.ws.dir);
    assert.equal(again.code, 0, again.stdout + again.stderr);
    assert.equal((await tasks(p))[0].status, 'done');
    assert.equal(await p.ws.read('src/calc.js'), CALC_FIXED);
    assert.equal(p.ws.git('status', '--porcelain'), '');
  });
});
