/**
 * `ralph run` with the real OpenCode (issue 46): the pinned `opencode-ai` from the npm registry, its
 * provider the scripted OpenAI-compatible server on 127.0.0.1 (`@ai-sdk/openai-compatible` in the
 * person's own `opencode.json`), works on a real git project. Ralph's gates, not the CLI's word,
 * decide. Nothing stands in for the CLI.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { type ScriptedServer, startScriptedServer } from '../fixtures/scriptedServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import {
  agentCliProject,
  ocBash,
  ocComplete,
  OPENCODE_MODEL,
  opencodeAgent,
  opencodeEnv,
  opencodeIteration,
  opencodePrompt,
  processesIn,
} from '../unit/helpers/agentCliRun';
import { runCli } from '../unit/helpers/cliHarness';
import { GREETER_FIXED_JS } from '../unit/helpers/greeterProject';
import type { TempWorkspace } from '../unit/helpers/tempWorkspace';

const FIX = `cat > greeter.js <<'EOF'\n${GREETER_FIXED_JS}EOF`;

describe('ralph run on OpenCode (the real CLI, a scripted OpenAI-compatible endpoint)', function () {
  this.timeout(180_000);
  let opencode: string;
  let server: ScriptedServer | undefined;
  let ws: TempWorkspace | undefined;
  let home: string | undefined;

  beforeEach(function () {
    opencode = agentCliOrSkip('opencode', this).bin;
  });
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
    if (home) await fs.rm(home, { recursive: true, force: true });
    server = ws = home = undefined;
  });

  async function setUp(plan: Parameters<typeof opencodeAgent>[0], loop: Record<string, unknown> = {}) {
    server = await startScriptedServer({ steps: Array.from({ length: 40 }, () => opencodeAgent(plan)) });
    const made = await opencodeEnv(server.url);
    home = made.home;
    ws = await agentCliProject('opencode', opencode, loop, { model: OPENCODE_MODEL });
    return { env: made.env, ws };
  }

  const taskOf = async (w: TempWorkspace) => JSON.parse(await w.read('.ralph/tasks.json')).tasks[0];

  it('an honest fix: done, on main; its commands and the MCP complete in the run log, its tokens on the receipt (parallel worktrees)', async () => {
    const { env, ws: w } = await setUp([[ocBash(FIX), ocBash('npm test'), ocComplete('add adds'), { text: 'Fixed add.' }]]);
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    assert.equal(w.git('show', 'main:greeter.js'), GREETER_FIXED_JS.trim());
    assert.match(run.stdout, /iteration 1\/2 \(OpenCode: scripted\/scripted-model\)/);
    assert.match(run.stdout, /⌁ opencode session ses_\S+/);
    assert.match(run.stdout, /→ bash .*cat > greeter\.js/);
    assert.match(run.stdout, /→ ralph_ralph_complete /);
    assert.match(run.stdout, /⚑ COMPLETE/);
    assert.match(run.stdout, /spent this run: [1-9]\d* calls?, [1-9]\d* in \//);
    // one request a turn of the script: no title request, nothing else reached the model
    assert.equal(server!.requests.filter((r) => opencodeIteration(r) === 0).length, 0);
    assert.deepEqual(await processesIn(w.dir), []);
  });

  it('COMPLETE with no change: not done; the next fresh session is told the failing test (maxParallel 1)', async () => {
    const { env, ws: w } = await setUp(
      [[{ text: 'Looks fine. <ralph>COMPLETE</ralph>' }], [ocBash(FIX), { text: 'Fixed. <ralph>COMPLETE</ralph>' }]],
      { maxParallel: 1 },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    const second = server!.requests.find((r) => opencodeIteration(r) === 2);
    assert.ok(second, 'a second session ran');
    assert.match(opencodePrompt(second), /adds two numbers/);
    const secondSession = server!.requests.filter((r) => opencodeIteration(r) === 2);
    assert.ok(
      secondSession.every((r) => (r.body?.messages ?? []).filter((m) => m.role === 'user').length === 1),
      'a fresh session: no message of the first one',
    );
  });

  it('the upstream test rewritten to pass: not done, though the suite is green and OpenCode says COMPLETE', async () => {
    const weaken = `cat > greeter.test.js <<'EOF'\nconst test = require('node:test');\ntest('greets by name', () => {});\nEOF`;
    const { env, ws: w } = await setUp([[ocBash(weaken), { text: 'Tests pass. <ralph>COMPLETE</ralph>' }]], { maxIterations: 1 });
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.notEqual((await taskOf(w)).status, 'done');
    assert.match(w.git('show', 'main:greeter.js'), /a - b/);
  });

  it('a refused key: the iteration ends in an error with OpenCode own message, the task not done', async () => {
    server = await startScriptedServer({ steps: Array.from({ length: 4 }, () => ({ fault: 'status' as const, status: 401 })) });
    const made = await opencodeEnv(server.url);
    home = made.home;
    ws = await agentCliProject('opencode', opencode, { maxParallel: 1, maxIterations: 2 }, { model: OPENCODE_MODEL });
    const run = await runCli(['run'], ws.dir, made.env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /OpenCode exited with code 1: .*401/);
    assert.notEqual((await taskOf(ws)).status, 'done');
  });
});
