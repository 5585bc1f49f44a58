/**
 * `ralph run` with the real GitHub Copilot CLI (issue 46): the pinned `@github/copilot` from the npm
 * registry, offline, its model the scripted OpenAI-compatible server on 127.0.0.1
 * (`COPILOT_PROVIDER_BASE_URL`), works on a real git project. Ralph's gates, not the CLI's word,
 * decide. Nothing stands in for the CLI.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { type ScriptedServer, startScriptedServer } from '../fixtures/scriptedServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import { agentCliProject, processesIn } from '../unit/helpers/agentCliRun';
import { runCli } from '../unit/helpers/cliHarness';
import { COPILOT_MODEL, copilotAgent, copilotEnv, copilotIteration, copilotPrompt, cpBash, cpComplete } from '../unit/helpers/copilotCli';
import { GREETER_FIXED_JS } from '../unit/helpers/greeterProject';
import type { TempWorkspace } from '../unit/helpers/tempWorkspace';

const FIX = `cat > greeter.js <<'EOF'\n${GREETER_FIXED_JS}EOF`;

describe('ralph run on the Copilot CLI (the real CLI, offline, a scripted OpenAI-compatible endpoint)', function () {
  this.timeout(180_000);
  let copilot: string;
  let server: ScriptedServer | undefined;
  let ws: TempWorkspace | undefined;
  let home: string | undefined;

  beforeEach(function () {
    copilot = agentCliOrSkip('copilot', this).bin;
  });
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
    if (home) await fs.rm(home, { recursive: true, force: true });
    server = ws = home = undefined;
  });

  async function setUp(steps: Parameters<typeof startScriptedServer>[0], loop: Record<string, unknown> = {}) {
    server = await startScriptedServer(steps);
    const made = await copilotEnv(server.url);
    home = made.home;
    ws = await agentCliProject('copilot', copilot, loop, { model: COPILOT_MODEL });
    return { env: made.env, ws };
  }
  const planned = (plan: Parameters<typeof copilotAgent>[0]) => ({ steps: Array.from({ length: 40 }, () => copilotAgent(plan)) });

  const taskOf = async (w: TempWorkspace) => JSON.parse(await w.read('.ralph/tasks.json')).tasks[0];

  it('an honest fix: done, on main; its commands and the MCP complete in the run log, its tokens on the receipt (parallel worktrees)', async () => {
    const { env, ws: w } = await setUp(planned([[cpBash(FIX), cpBash('npm test'), cpComplete('add adds'), { text: 'Fixed add.' }]]));
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    assert.equal(w.git('show', 'main:greeter.js'), GREETER_FIXED_JS.trim());
    assert.match(run.stdout, /iteration 1\/2 \(Copilot CLI: scripted-model\)/);
    assert.match(run.stdout, /⌁ copilot session [0-9a-f-]{36}/);
    assert.match(run.stdout, /→ bash .*cat > greeter\.js/);
    assert.match(run.stdout, /→ ralph-ralph_complete /);
    assert.match(run.stdout, /⚑ COMPLETE/);
    assert.match(run.stdout, /spent this run: [1-9]\d* calls?, [1-9]\d* in \//);
    // one request a turn of the script: nothing else reached the model
    assert.equal(server!.requests.filter((r) => copilotIteration(r) === 0).length, 0);
    assert.deepEqual(await processesIn(w.dir), []);
  });

  it('COMPLETE with no change: not done; the next fresh session is told the failing test (`ralph run --agent copilot`, maxParallel 1)', async () => {
    server = await startScriptedServer(
      planned([[{ text: 'Looks fine. <ralph>COMPLETE</ralph>' }], [cpBash(FIX), { text: 'Fixed. <ralph>COMPLETE</ralph>' }]]),
    );
    const made = await copilotEnv(server.url);
    home = made.home;
    // the config's agent is the built-in one: the run's --agent puts the task on Copilot
    const w = (ws = await agentCliProject('builtin', copilot, { maxParallel: 1 }, { model: COPILOT_MODEL }));
    const env = made.env;
    const run = await runCli(['run', '--agent', 'copilot'], w.dir, env);
    assert.match(run.stdout, /iteration 1\/2 \(Copilot CLI: scripted-model\)/);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    const second = server!.requests.filter((r) => copilotIteration(r) === 2);
    assert.ok(second.length > 0, 'a second session ran');
    assert.match(copilotPrompt(second[0]), /adds two numbers/);
    assert.ok(
      second.every((r) => (r.body?.messages ?? []).filter((m) => m.role === 'user').length === 1),
      'a fresh session: no message of the first one',
    );
  });

  it('the upstream test deleted: not done, though the suite is green and Copilot says COMPLETE', async () => {
    const { env, ws: w } = await setUp(planned([[cpBash('rm greeter.test.js'), { text: 'Tests pass. <ralph>COMPLETE</ralph>' }]]), {
      maxIterations: 1,
    });
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.notEqual((await taskOf(w)).status, 'done');
    assert.match(w.git('show', 'main:greeter.js'), /a - b/);
    assert.doesNotThrow(() => w.git('show', 'main:greeter.test.js'), 'the test is still on main');
  });

  it('a session that hangs is ended at the task time limit: timeout, no process left', async () => {
    const { env, ws: w } = await setUp({ steps: [{ fault: 'hang' }] }, { maxParallel: 1 });
    const tasks = JSON.parse(await w.read('.ralph/tasks.json'));
    tasks.tasks[0].timeoutMinutes = 0.25;
    await fs.writeFile(w.path('.ralph/tasks.json'), JSON.stringify(tasks, null, 2));
    const started = Date.now();
    const run = await runCli(['run'], w.dir, env);
    assert.ok(Date.now() - started < 90_000, 'ended near the limit');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'timeout');
    assert.deepEqual(await processesIn(w.dir), []);
  });

  it('a refused key: the session ends at the first 401, an auth fault with Copilot’s message, the task not done', async () => {
    const { env, ws: w } = await setUp(
      { steps: Array.from({ length: 4 }, () => ({ fault: 'status' as const, status: 401 })) },
      { maxParallel: 1 },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /Copilot CLI: the model provider refused the credentials \(scripted 401\)/);
    assert.match(run.stdout, /HALTED after 1 iteration: authentication failed/);
    assert.notEqual((await taskOf(w)).status, 'done');
    assert.equal(server!.requests.length, 1, 'not retried: ended at the first refusal');
  });

  it('the CLI surfaces: `ralph doctor` names it, found or missing with its install command; a missing one stops the run with exit 2; `task add --agent copilot`', async () => {
    const made = await copilotEnv('http://127.0.0.1:9/v1');
    home = made.home;
    ws = await agentCliProject('copilot', '/nonexistent/copilot');
    const missing = await runCli(['doctor'], ws.dir, made.env);
    assert.match(
      missing.stdout,
      /^MISSING +agent Copilot CLI: .*agent\.command "\/nonexistent\/copilot" was not found.*\n\s+fix: npm install -g @github\/copilot/m,
    );
    const before = ws.git('rev-parse', 'HEAD');
    const refused = await runCli(['run'], ws.dir, made.env);
    assert.equal(refused.code, 2, refused.stdout + refused.stderr);
    assert.match(refused.stderr, /Copilot CLI[\s\S]*npm install -g @github\/copilot/);
    assert.equal(ws.git('rev-parse', 'HEAD'), before, 'nothing changed');
    const config = JSON.parse(await ws.read('.ralph/config.json'));
    config.agent.command = copilot;
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    const found = await runCli(['doctor', '--json'], ws.dir, made.env);
    const { checks } = JSON.parse(found.stdout) as { checks: { name: string; ok: boolean; detail: string }[] };
    assert.deepEqual(
      checks.filter((c) => c.name.startsWith('agent')).map((c) => [c.name, c.ok, c.detail.split('; ')[0]]),
      [['agent Copilot CLI', true, copilot]],
    );
    // and whether Ralph's sandbox confines it
    assert.match(checks.find((c) => c.name === 'agent Copilot CLI')!.detail, /; Copilot CLI runs (in|without) Ralph's sandbox/);
    const added = await runCli(
      ['task', 'add', 'Other', '--prompt', 'x', '--promise', 'y', '--agent', 'copilot', '--json'],
      ws.dir,
      made.env,
    );
    assert.equal(added.code, 0, added.stderr);
    assert.equal(JSON.parse(added.stdout).agent, 'copilot');
  });
});
