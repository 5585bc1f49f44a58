/**
 * `ralph run` with the real Claude Code (issue 46): the pinned `@anthropic-ai/claude-code` from the
 * npm registry, pointed at the scripted Anthropic Messages server on 127.0.0.1, works on a real git
 * project in parallel worktrees (the default configuration) and one task at a time; Ralph's gates,
 * not the CLI's word, decide. Nothing stands in for the CLI.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { type AnthropicServer, startAnthropicServer } from '../fixtures/anthropicServer';
import { probeSandbox } from '../../src/core/commands/sandbox';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import {
  agentCliProject,
  bash,
  claudeEnv,
  iterationOf,
  mcpComplete,
  processesIn,
  sessionAgent,
  sessionPrompt,
} from '../unit/helpers/agentCliRun';
import { runCli } from '../unit/helpers/cliHarness';
import { GREETER_FIXED_JS } from '../unit/helpers/greeterProject';
import type { TempWorkspace } from '../unit/helpers/tempWorkspace';

const FIX = `cat > greeter.js <<'EOF'\n${GREETER_FIXED_JS}EOF`;

describe('ralph run on Claude Code (the real CLI, a scripted Anthropic endpoint)', function () {
  this.timeout(180_000);
  let claude: string;
  let server: AnthropicServer | undefined;
  let ws: TempWorkspace | undefined;
  let home: string | undefined;

  beforeEach(function () {
    claude = agentCliOrSkip('claude-code', this).bin;
  });
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
    if (home) await fs.rm(home, { recursive: true, force: true });
    server = ws = home = undefined;
  });

  async function setUp(plan: Parameters<typeof sessionAgent>[0], loop: Record<string, unknown> = {}) {
    server = await startAnthropicServer({ steps: Array.from({ length: 40 }, () => sessionAgent(plan)) });
    const made = await claudeEnv(server.url);
    home = made.home;
    ws = await agentCliProject('claude-code', claude, loop);
    return { env: made.env, ws };
  }

  const taskOf = async (w: TempWorkspace) => JSON.parse(await w.read('.ralph/tasks.json')).tasks[0];

  it('an honest fix: done, on main, its tool calls in the run log, the CLI-reported cost on the receipt (parallel worktrees, the default)', async () => {
    const { env, ws: w } = await setUp([[bash(FIX), bash('npm test'), mcpComplete('add adds'), { text: 'Fixed add.' }]]);
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    // the whole CLI in Ralph's sandbox where bubblewrap works
    if ((await probeSandbox()).available) assert.match(run.stderr, /ralph: Claude Code runs in Ralph's sandbox \(bubblewrap\)/);
    const task = await taskOf(w);
    assert.equal(task.status, 'done');
    assert.equal(w.git('show', 'main:greeter.js'), GREETER_FIXED_JS.trim());
    assert.match(run.stdout, /iteration 1\/2 \(Claude Code: its default model\)/);
    assert.match(run.stdout, /⌁ claude-code session [0-9a-f-]{36}/);
    assert.match(run.stdout, /→ Bash .*cat > greeter\.js/);
    assert.match(run.stdout, /→ mcp__ralph__ralph_complete /);
    assert.match(run.stdout, /⚑ COMPLETE/);
    // Claude Code prices its own turns: the run's spend is its figure, reported by the provider
    const spent = /spent this run: .*against the budget: \$([0-9.]+)\)/.exec(run.stdout);
    assert.ok(spent && Number(spent[1]) > 0, run.stdout);
    assert.deepEqual(await processesIn(w.dir), []);
    // the session id in the task's record and its iteration report
    const session = /⌁ claude-code session (\S+)/.exec(run.stdout)?.[1];
    const record = JSON.parse(await w.read('.ralph/state/T-001.json'));
    assert.deepEqual(record.history[0].agentSession, { agent: 'claude-code', id: session, model: 'claude-opus-5-5' });
    assert.match(
      await w.read('.ralph/reports/T-001/iteration-1.md'),
      new RegExp(`Agent CLI session: claude-code ${session} \\(claude-opus-5-5\\)`),
    );
  });

  it('COMPLETE with no change: not done; the next fresh session is told the failing test, fixes it, done (maxParallel 1)', async () => {
    const { env, ws: w } = await setUp(
      [[{ text: 'All good. <ralph>COMPLETE</ralph>' }], [bash(FIX), mcpComplete('fixed add for real'), { text: 'Done.' }]],
      { maxParallel: 1 },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    const second = server!.mainRequests.find((r) => iterationOf(r) === 2);
    assert.ok(second, 'a second session ran');
    assert.match(sessionPrompt(second), /adds two numbers/);
    // a fresh session: its first request carries nothing of the first session's conversation
    const secondFirst = server!.mainRequests.filter((r) => iterationOf(r) === 2)[0];
    assert.equal((secondFirst.body?.messages ?? []).filter((m) => m.role === 'assistant').length, 0, 'a fresh session');
  });

  it('a deleted test is the gate weakened: not done, though the suite is green and the CLI says COMPLETE', async () => {
    const { env, ws: w } = await setUp(
      [[bash('git rm -q greeter.test.js && echo "require(\'./greeter\')" > greeter.test.js'), mcpComplete('tests pass')]],
      {
        maxIterations: 1,
      },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    const task = await taskOf(w);
    assert.notEqual(task.status, 'done');
    assert.equal(w.git('show', 'main:greeter.js').includes('a - b'), true, 'nothing landed');
  });

  it('a session that hangs is ended at the task time limit: timeout, no process left', async () => {
    server = await startAnthropicServer({ steps: [{ fault: 'hang' }] });
    const made = await claudeEnv(server.url);
    home = made.home;
    ws = await agentCliProject('claude-code', claude, { maxParallel: 1 });
    const tasks = JSON.parse(await ws.read('.ralph/tasks.json'));
    tasks.tasks[0].timeoutMinutes = 0.25;
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify(tasks, null, 2));
    const started = Date.now();
    const run = await runCli(['run'], ws.dir, made.env);
    assert.ok(Date.now() - started < 90_000, 'ended near the limit');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.equal((await taskOf(ws)).status, 'timeout');
    assert.deepEqual(await processesIn(ws.dir), []);
  });

  it("Ralph's rules judge its tool calls (PreToolUse): a delete outside the folder and a write to the task store are blocked, the agent told why", async () => {
    const outside = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-outside-'));
    await fs.writeFile(path.join(outside, 'keep.txt'), 'mine\n');
    try {
      const forge = { tools: [{ name: 'Write', input: { file_path: '.ralph/tasks.json', content: '{"version":1,"tasks":[]}' } }] };
      const { env, ws: w } = await setUp([[bash(`rm -rf ${outside}`), forge, bash(FIX), mcpComplete('fixed'), { text: 'Done.' }]], {
        maxParallel: 1,
      });
      const before = await w.read('.ralph/tasks.json');
      const run = await runCli(['run'], w.dir, env);
      assert.equal(run.code, 0, run.stdout + run.stderr);
      assert.equal(await fs.readFile(path.join(outside, 'keep.txt'), 'utf8'), 'mine\n');
      assert.match(run.stdout, /✗ Bash: .*Ralph refused this command/);
      assert.match(run.stdout, /✗ Write: .*belongs to the orchestrator/);
      const task = await taskOf(w);
      assert.equal(task.status, 'done');
      assert.equal(JSON.parse(before).tasks[0].prompt, task.prompt);
      // what the model was told, in the tool results of its next turn
      const told = JSON.stringify(server!.mainRequests.at(-1)?.body?.messages);
      assert.match(told, /Ralph refused this command/);
    } finally {
      await fs.rm(outside, { recursive: true, force: true });
    }
  });

  // Which of the two comes first is Claude Code's: its auto-compact at its threshold (the PreCompact
  // hook) or, when it does not compact first, the endpoint's "Prompt is too long"; each ends the session alike.
  it('a full context (PreCompact, or "Prompt is too long"): the session ends there, not as an error; the next fresh session is told so and finishes', async () => {
    const full = { ...bash('echo started > notes.txt'), usage: { input_tokens: 990_000, output_tokens: 50 } };
    const { env, ws: w } = await setUp(
      [
        [full, { text: 'still here' }],
        [bash(FIX), mcpComplete('fixed'), { text: 'Done.' }],
      ],
      { maxParallel: 1 },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.match(
      run.stdout,
      /Claude Code's context is full \((?:.*Prompt is too long|it was about to compact it)\): the session ends here and the next iteration starts fresh/,
    );
    assert.doesNotMatch(run.stdout, /iteration 1: error/);
    assert.equal((await taskOf(w)).status, 'done');
    const second = server!.mainRequests.find((r) => iterationOf(r) === 2);
    assert.ok(second);
    assert.match(sessionPrompt(second), /The previous session's context filled up before it finished/);
    assert.equal(w.git('show', 'main:notes.txt'), 'started', "the first session's work was kept");
  });

  it('a budget cap ends the session within the turn that reached it: no further model call, the task not done', async () => {
    const big = { ...bash('echo one > one.txt'), usage: { input_tokens: 50_000, output_tokens: 100 } };
    const { env, ws: w } = await setUp([[big, bash('echo two > two.txt'), mcpComplete('done'), { text: 'Done.' }]], { maxParallel: 1 });
    const config = JSON.parse(await w.read('.ralph/config.json'));
    config.budget = { taskMaxTokens: 20_000 };
    await fs.writeFile(w.path('.ralph/config.json'), JSON.stringify(config));
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /task T-001 token budget reached/);
    assert.equal(server!.mainRequests.length, 1, 'the turn that reached the cap was the last');
    assert.equal(w.exists('two.txt'), false);
    assert.notEqual((await taskOf(w)).status, 'done');
    assert.deepEqual(await processesIn(w.dir), []);
  });

  it('a configured CLI that is missing: exit 2 before any change, naming the agent and how to install it', async () => {
    const { env, ws: w } = await setUp([[{ text: 'unused' }]]);
    const config = JSON.parse(await w.read('.ralph/config.json'));
    config.agent.command = '/nonexistent/claude';
    await fs.writeFile(w.path('.ralph/config.json'), JSON.stringify(config));
    const head = w.git('rev-parse', 'HEAD');
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(
      run.stderr,
      /the agent Claude Code \(agent\.kind "claude-code"\) cannot run: agent\.command "\/nonexistent\/claude" was not found\. Install it with `npm install -g @anthropic-ai\/claude-code`/,
    );
    assert.equal(w.git('rev-parse', 'HEAD'), head);
    assert.equal((await taskOf(w)).status, 'todo');
    assert.equal(server!.requests.length, 0);
  });
});
