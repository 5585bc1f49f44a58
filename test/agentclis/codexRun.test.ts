/**
 * `ralph run` with the real Codex CLI (issue 46): the pinned `@openai/codex` from the npm registry,
 * pointed at the scripted Responses API server on 127.0.0.1 through `agent.args` (`-c` overrides of
 * the person's own provider), in its own `workspace-write` sandbox, works on a real git project.
 * Ralph's gates, not the CLI's word, decide. Nothing stands in for the CLI.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { type ResponsesServer, startResponsesServer } from '../fixtures/responsesServer';
import { probeSandbox } from '../../src/core/commands/sandbox';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import {
  agentCliProject,
  codexAgent,
  codexComplete,
  codexEnv,
  codexIteration,
  codexPrompt,
  processesIn,
  shell,
} from '../unit/helpers/agentCliRun';
import { runCli } from '../unit/helpers/cliHarness';
import { GREETER_FIXED_JS } from '../unit/helpers/greeterProject';
import type { TempWorkspace } from '../unit/helpers/tempWorkspace';

const FIX = `cat > greeter.js <<'EOF'\n${GREETER_FIXED_JS}EOF`;

describe('ralph run on Codex (the real CLI, a scripted Responses endpoint)', function () {
  this.timeout(180_000);
  let codex: string;
  let server: ResponsesServer | undefined;
  let ws: TempWorkspace | undefined;
  let home: string | undefined;

  beforeEach(function () {
    codex = agentCliOrSkip('codex', this).bin;
  });
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
    if (home) await fs.rm(home, { recursive: true, force: true });
    server = ws = home = undefined;
  });

  async function setUp(plan: Parameters<typeof codexAgent>[0], loop: Record<string, unknown> = {}) {
    server = await startResponsesServer({ steps: Array.from({ length: 40 }, () => codexAgent(plan)) });
    const made = await codexEnv(server.url);
    home = made.home;
    // a model Codex has no settings of: its MCP tools are listed to the model directly
    ws = await agentCliProject('codex', codex, loop, { model: 'scripted-codex', args: made.args });
    return { env: made.env, ws };
  }

  const taskOf = async (w: TempWorkspace) => JSON.parse(await w.read('.ralph/tasks.json')).tasks[0];

  it('an honest fix: done, on main; its commands and the MCP complete in the run log, its tokens on the receipt (parallel worktrees)', async () => {
    const { env, ws: w } = await setUp([[shell(FIX), shell('npm test'), codexComplete('add adds'), { text: 'Fixed add.' }]]);
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    // the whole CLI in Ralph's sandbox where bubblewrap works (Codex's own sandbox nests inside it: its shell wrote the fix)
    if ((await probeSandbox()).available) assert.match(run.stderr, /ralph: Codex runs in Ralph's sandbox \(bubblewrap\)/);
    assert.equal((await taskOf(w)).status, 'done');
    assert.equal(w.git('show', 'main:greeter.js'), GREETER_FIXED_JS.trim());
    assert.match(run.stdout, /iteration 1\/2 \(Codex: scripted-codex\)/);
    assert.match(run.stdout, /⌁ codex session \S+/);
    assert.match(run.stdout, /→ shell .*cat > greeter\.js/);
    assert.match(run.stdout, /→ mcp__ralph__ralph_complete /);
    assert.match(run.stdout, /⚑ COMPLETE/);
    assert.match(run.stdout, /spent this run: [1-9]\d* calls?, [1-9]\d* in \//);
    assert.deepEqual(await processesIn(w.dir), []);
  });

  it('COMPLETE with no change: not done; the next fresh session is told the failing test (maxParallel 1)', async () => {
    const { env, ws: w } = await setUp(
      [[{ text: 'Looks fine. <ralph>COMPLETE</ralph>' }], [shell(FIX), { text: 'Fixed. <ralph>COMPLETE</ralph>' }]],
      {
        maxParallel: 1,
      },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    const second = server!.turns.find((r) => codexIteration(r) === 2);
    assert.ok(second, 'a second session ran');
    assert.match(codexPrompt(second), /adds two numbers/);
  });

  it('the upstream test rewritten to pass: not done, though the suite is green and Codex says COMPLETE', async () => {
    const weaken = `cat > greeter.test.js <<'EOF'\nconst test = require('node:test');\ntest('greets by name', () => {});\nEOF`;
    const { env, ws: w } = await setUp([[shell(weaken), { text: 'Tests pass. <ralph>COMPLETE</ralph>' }]], { maxIterations: 1 });
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.notEqual((await taskOf(w)).status, 'done');
    assert.match(w.git('show', 'main:greeter.js'), /a - b/);
  });

  it('an API error: the iteration ends in an error with Codex own message, the task not done', async () => {
    server = await startResponsesServer({ steps: Array.from({ length: 4 }, () => ({ fault: 'status' as const, status: 401 })) });
    const made = await codexEnv(server.url);
    home = made.home;
    ws = await agentCliProject('codex', codex, { maxParallel: 1, maxIterations: 2 }, { model: 'scripted-codex', args: made.args });
    const run = await runCli(['run'], ws.dir, made.env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /Codex exited with code 1: .*401/);
    assert.notEqual((await taskOf(ws)).status, 'done');
  });
});
