import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { probeSandbox } from '../../../src/core/commands/sandbox';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import {
  agentSteps,
  ALLOWLIST_GITIGNORE,
  CACHY_CLI,
  CALC_FIXED,
  type CachyProject,
  makeCachyProject,
  PLAIN_GITIGNORE,
  toolResults,
} from '../helpers/cachyProject';
import { runCli } from '../helpers/cliHarness';

/**
 * Issue 36, through the real `ralph` CLI: a project whose test runner keeps a cache in
 * node_modules/.cache (and warns when it cannot save its stats in its own package), whose
 * .gitignore is an allowlist or ignores .ralph/, with a nested .gitignore and core.excludesFile,
 * runs in a task's worktree (the default loop.maxParallel) and in the workspace
 * (loop.maxParallel 1) as its own test command runs there; the agent cannot change its runner.
 */
describe("a real project's own test command in a task (runner cache in node_modules/.cache, allowlist .gitignore, ignored .ralph/)", function () {
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

  const cases = [
    { gitignore: ALLOWLIST_GITIGNORE, style: 'an allowlist .gitignore', maxParallel: undefined },
    { gitignore: ALLOWLIST_GITIGNORE, style: 'an allowlist .gitignore', maxParallel: 1 },
    { gitignore: PLAIN_GITIGNORE, style: 'an ignored .ralph/', maxParallel: undefined },
    { gitignore: PLAIN_GITIGNORE, style: 'an ignored .ralph/', maxParallel: 1 },
  ];
  for (const c of cases) {
    const where = c.maxParallel === 1 ? 'in the workspace (loop.maxParallel 1)' : "in a task's worktree (the default loop.maxParallel)";
    it(`${c.style}, ${where}: done in one iteration, only the fix committed, the runner untouched, its cache where it belongs`, async () => {
      const p = (project = await makeCachyProject({ gitignore: c.gitignore }));
      await p.configure(server.url, c.maxParallel ? { loop: { maxIterations: 3, maxParallel: 1 } } : {});
      await p.addTask();
      server.push(...agentSteps(8));
      const run = await runCli(['run'], p.ws.dir);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      const [task] = TaskFileSchema.parse(JSON.parse(await p.ws.read('.ralph/tasks.json'))).tasks;
      assert.equal(task.status, 'done', run.stdout);
      assert.equal(task.iterations, 1, run.stdout);
      // the fix, and only it, is on main: no test output, log, link, or Ralph file
      assert.equal(p.ws.git('show', 'main:src/calc.js') + '\n', CALC_FIXED);
      const changed = p.ws.git('diff', '--name-only', 'main~1', 'main').split('\n');
      assert.deepEqual(changed, ['src/calc.js']);
      assert.equal(await p.ws.read('src/calc.js'), CALC_FIXED, 'your working tree followed');
      assert.equal(p.ws.git('status', '--porcelain'), '');
      // the agent could not change its test runner: its command met a read-only file system, its file tool a refusal
      assert.equal(await p.ws.read('node_modules/cachy/cli.js'), CACHY_CLI);
      const tried = toolResults(server.requests.find((r) => toolResults(r).length === 2)!).join('\n');
      assert.match(tried, /Read-only file system/);
      assert.match(tried, c.maxParallel === 1 ? /read-only to the agent/ : /outside the workspace/);
      // the runner's cache: the workspace's own in place; a worktree's own (gone with it) in a task
      const cache = p.ws.path('node_modules/.cache/cachy');
      if (c.maxParallel === 1) assert.ok(readdirSync(cache).length > 0, 'cached in the workspace');
      else assert.equal(existsSync(cache), false, "the workspace's cache was never written by a task");
      // a tool that merely warns about its read-only package is no reason to stop: the base's own failing test is the task's
      assert.doesNotMatch(run.stdout, /cannot run/);
    });
  }

  it("without the sandbox (commands.sandbox off), in a task's worktree: the runner writes the workspace's cache, the task is done in one iteration", async () => {
    const p = (project = await makeCachyProject({ gitignore: ALLOWLIST_GITIGNORE }));
    await p.configure(server.url, { commands: { sandbox: 'off' } });
    await p.addTask();
    server.push(...agentSteps(6, false));
    const run = await runCli(['run'], p.ws.dir);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const [task] = TaskFileSchema.parse(JSON.parse(await p.ws.read('.ralph/tasks.json'))).tasks;
    assert.equal(task.status, 'done', run.stdout + run.stderr);
    assert.equal(task.iterations, 1);
    assert.deepEqual(p.ws.git('diff', '--name-only', 'main~1', 'main').split('\n'), ['src/calc.js']);
    assert.ok(readdirSync(p.ws.path('node_modules/.cache/cachy')).length > 0);
  });
});
