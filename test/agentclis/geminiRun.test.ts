/**
 * `ralph run` with the real Gemini CLI (issue 46): the pinned `@google/gemini-cli` from the npm
 * registry, pointed at the scripted Gemini API server on 127.0.0.1 (`GOOGLE_GEMINI_BASE_URL`, an
 * API key login in the person's own `~/.gemini/settings.json`), works on a real git project.
 * Ralph's gates, not the CLI's word, decide. Nothing stands in for the CLI.
 */
import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import { probeSandbox } from '../../src/core/commands/sandbox';
import { type GeminiServer, startGeminiServer } from '../fixtures/geminiServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import { agentCliProject, processesIn } from '../unit/helpers/agentCliRun';
import { runCli } from '../unit/helpers/cliHarness';
import { gComplete, GEMINI_MODEL, geminiAgent, geminiEnv, geminiIteration, geminiPrompt, gShell, gWrite } from '../unit/helpers/geminiRun';
import { GREETER_FIXED_JS } from '../unit/helpers/greeterProject';
import type { TempWorkspace } from '../unit/helpers/tempWorkspace';

/**
 * A shell command that tries to write outside the task's worktree: the main workspace, the home
 * folder, the task store, the worktree's own `.ralph/` (what it reports is read back from the requests).
 */
const ESCAPE = gShell(
  `node -e "const fs=require('fs'),p=require('path');let d=process.cwd();while(!fs.existsSync(p.join(d,'.ralph','worktrees')))d=p.dirname(d);const out=[];for(const [n,f] of [['main',p.join(d,'escaped.txt')],['home',p.join(require('os').homedir(),'escaped.txt')],['store',p.join(d,'.ralph','tasks.json')],['own',p.join('.ralph','tasks.json')]]){try{fs.writeFileSync(f,'{}');out.push('WROTE '+n)}catch(e){out.push('REFUSED '+n+':'+e.code)}}console.log(out.join(' '))"`,
);

/** The fix, written by Gemini CLI's `write_file` (its shell tool refuses the template literal's `${…}`). */
const FIX = gWrite('greeter.js', GREETER_FIXED_JS);

describe('ralph run on Gemini CLI (the real CLI, a scripted Gemini API endpoint)', function () {
  this.timeout(180_000);
  let gemini: string;
  let server: GeminiServer | undefined;
  let ws: TempWorkspace | undefined;
  let home: string | undefined;

  beforeEach(function () {
    gemini = agentCliOrSkip('gemini', this).bin;
  });
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
    if (home) await fs.rm(home, { recursive: true, force: true });
    server = ws = home = undefined;
  });

  async function setUp(plan: Parameters<typeof geminiAgent>[0], loop: Record<string, unknown> = {}) {
    server = await startGeminiServer({ steps: Array.from({ length: 40 }, () => geminiAgent(plan)) });
    const made = await geminiEnv(server.url);
    home = made.home;
    ws = await agentCliProject('gemini', gemini, loop, { model: GEMINI_MODEL });
    return { env: made.env, ws };
  }

  const taskOf = async (w: TempWorkspace) => JSON.parse(await w.read('.ralph/tasks.json')).tasks[0];

  it('an honest fix: done, on main; its commands and the MCP complete in the run log, its tokens on the receipt (parallel worktrees)', async () => {
    const { env, ws: w } = await setUp([
      [ESCAPE, FIX, gShell('git add greeter.js && npm test'), gComplete('add adds'), { text: 'Fixed add.' }],
    ]);
    const tasksBefore = await w.read('.ralph/tasks.json');
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    assert.equal(w.git('show', 'main:greeter.js'), GREETER_FIXED_JS.trim());
    // Ralph's sandbox around the CLI (its shell commands are judged by nobody else): writes outside the task's folder fail
    if ((await probeSandbox()).available) {
      assert.match(run.stderr, /ralph: Gemini CLI runs in Ralph's sandbox \(bubblewrap\)/);
      const outputs = server!.turns.map((r) => JSON.stringify(r.body?.contents ?? [])).join('\n');
      assert.match(outputs, /REFUSED main:EROFS REFUSED home:EROFS REFUSED store:EROFS REFUSED own:E[A-Z]+/);
      assert.doesNotMatch(outputs, /fatal:/, "the CLI's own git works in its worktree");
      assert.equal(existsSync(w.path('escaped.txt')), false);
      assert.equal(existsSync(`${home}/escaped.txt`), false);
      assert.doesNotMatch(run.stdout, /control file|restored/i, 'nothing of .ralph/ was written for the guard to put back');
      assert.notEqual(await w.read('.ralph/tasks.json'), '{}');
      assert.notEqual(tasksBefore, '{}');
    }
    assert.match(run.stdout, /iteration 1\/2 \(Gemini CLI: gemini-2\.5-pro\)/);
    assert.match(run.stdout, /⌁ gemini session [0-9a-f-]{36}/);
    assert.match(run.stdout, /→ write_file .*greeter\.js/);
    assert.match(run.stdout, /→ run_shell_command .*npm test/);
    assert.match(run.stdout, /→ mcp_ralph_ralph_complete /);
    assert.match(run.stdout, /⚑ COMPLETE/);
    assert.match(run.stdout, /spent this run: [1-9]\d* calls?, [1-9]\d* in \//);
    // every request was a turn of the script, for the model named: no router, no side call
    assert.deepEqual(
      server!.requests.map((r) => `${r.kind} ${r.model} ${r.outcome}`),
      Array(5).fill(`turn ${GEMINI_MODEL} reply`),
    );
    assert.equal(server!.requests[0].headers['x-goog-api-key'], 'test-gemini-key');
    assert.deepEqual(await processesIn(w.dir), []);
    const own = JSON.parse(await fs.readFile(`${home}/.gemini/settings.json`, 'utf8'));
    assert.deepEqual(own, { security: { auth: { selectedType: 'gemini-api-key' } } }, 'the person’s own settings are not written');
  });

  it('COMPLETE with no change: not done; the next fresh session is told the failing test (maxParallel 1)', async () => {
    const { env, ws: w } = await setUp(
      [[{ text: 'Looks fine. <ralph>COMPLETE</ralph>' }], [FIX, { text: 'Fixed. <ralph>COMPLETE</ralph>' }]],
      { maxParallel: 1 },
    );
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    assert.equal((await taskOf(w)).status, 'done');
    const second = server!.turns.filter((r) => geminiIteration(r) === 2);
    assert.ok(second.length > 0, 'a second session ran');
    assert.match(geminiPrompt(second[0]), /adds two numbers/);
    assert.ok(
      second.every((r) => !(r.body?.contents ?? []).some((c) => c.role === 'model' && JSON.stringify(c).includes('Looks fine'))),
      'a fresh session: nothing of the first one',
    );
  });

  it('the upstream test rewritten to pass: not done, though the suite is green and Gemini says COMPLETE', async () => {
    const weaken = `cat > greeter.test.js <<'EOF'\nconst test = require('node:test');\ntest('greets by name', () => {});\nEOF`;
    const { env, ws: w } = await setUp([[gShell(weaken), { text: 'Tests pass. <ralph>COMPLETE</ralph>' }]], { maxIterations: 1 });
    const run = await runCli(['run'], w.dir, env);
    assert.notEqual(run.code, 0, run.stdout);
    assert.notEqual((await taskOf(w)).status, 'done');
    assert.match(w.git('show', 'main:greeter.js'), /a - b/);
  });

  it('a session that hangs is ended at the task time limit: timeout, no process left', async () => {
    server = await startGeminiServer({ steps: [{ fault: 'hang' }] });
    const made = await geminiEnv(server.url);
    home = made.home;
    ws = await agentCliProject('gemini', gemini, { maxParallel: 1 }, { model: GEMINI_MODEL });
    const tasks = JSON.parse(await ws.read('.ralph/tasks.json'));
    tasks.tasks[0].timeoutMinutes = 0.25;
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify(tasks, null, 2));
    // unwrapped here (Claude Code's hang test ends a sandboxed session): said on the run's first lines
    const config = JSON.parse(await ws.read('.ralph/config.json'));
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ ...config, commands: { sandbox: 'off' } }, null, 2));
    const started = Date.now();
    const run = await runCli(['run'], ws.dir, made.env);
    assert.match(run.stderr, /ralph: warning: Gemini CLI runs without Ralph's sandbox \(commands\.sandbox is "off"\)/);
    assert.ok(Date.now() - started < 90_000, 'ended near the limit');
    assert.equal(run.code, 1, run.stdout + run.stderr);
    assert.equal((await taskOf(ws)).status, 'timeout');
    assert.deepEqual(await processesIn(ws.dir), []);
    // and in the run's log, as a warning the editor shows: once for the run
    const logs = (await fs.readdir(ws.path('.ralph/runs'))).filter((f) => f.endsWith('.ndjson'));
    const events = (await Promise.all(logs.map((f) => ws!.read(`.ralph/runs/${f}`))))
      .flatMap((text) => text.split('\n').filter(Boolean))
      .map((line) => JSON.parse(line) as { type: string; code?: string; message?: string });
    const unconfined = events.filter((e) => e.type === 'warning' && e.code === 'agent-cli-unsandboxed');
    assert.equal(unconfined.length, 1, JSON.stringify(unconfined));
    assert.match(unconfined[0].message ?? '', /^Gemini CLI runs without Ralph's sandbox \(commands\.sandbox is "off"\)/);
  });

  it('a refused key: the task halts on an auth fault with Gemini CLI own message, not done', async () => {
    server = await startGeminiServer({ steps: Array.from({ length: 4 }, () => ({ fault: 'status' as const, status: 401 })) });
    const made = await geminiEnv(server.url);
    home = made.home;
    ws = await agentCliProject('gemini', gemini, { maxParallel: 1, maxIterations: 2 }, { model: GEMINI_MODEL });
    const reports = async () => (await fs.readdir(os.tmpdir())).filter((f) => f.startsWith('gemini-client-error-')).length;
    const before = await reports();
    const run = await runCli(['run'], ws.dir, made.env);
    assert.equal(await reports(), before, 'its error report stayed in the session’s own temporary folder');
    assert.notEqual(run.code, 0, run.stdout);
    assert.match(run.stdout, /Gemini CLI exited with code \d+: .*401.*API key not valid/);
    assert.equal((await taskOf(ws)).status, 'halted', 'an auth fault halts the task: no iteration can get past it');
    assert.equal(server.turns.length, 1, 'one refused request: neither the CLI nor Ralph tried the same key again');
  });

  it('a configured CLI that is missing: exit 2 before any change, naming the agent and how to install it', async () => {
    const { env, ws: w } = await setUp([[{ text: 'unused' }]]);
    const config = JSON.parse(await w.read('.ralph/config.json'));
    config.agent.command = '/nonexistent/gemini';
    await fs.writeFile(w.path('.ralph/config.json'), JSON.stringify(config));
    const head = w.git('rev-parse', 'HEAD');
    const run = await runCli(['run'], w.dir, env);
    assert.equal(run.code, 2, run.stdout + run.stderr);
    assert.match(run.stderr, /the agent Gemini CLI \(agent\.kind "gemini"\) cannot run: .*npm install -g @google\/gemini-cli/);
    assert.equal(w.git('rev-parse', 'HEAD'), head);
    assert.equal(server!.requests.length, 0);
  });
});
