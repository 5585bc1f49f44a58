/**
 * `ralph run` up a ladder of agents (issue 46): a task stuck on the built-in agent with a cheap model
 * (the scripted OpenAI-compatible server) moves up to the real OpenCode (the pinned `opencode-ai`,
 * its provider the same scripted server), on the model the ladder's step names. Nothing stands in
 * for the CLI; the gates decide.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { type RecordedRequest, type ScriptedServer, startScriptedServer } from '../fixtures/scriptedServer';
import { agentCliOrSkip } from '../unit/helpers/agentClis';
import {
  NODE_TEST_GATE,
  ocBash,
  ocComplete,
  OPENCODE_MODEL,
  opencodeAgent,
  opencodeEnv,
  opencodeIteration,
} from '../unit/helpers/agentCliRun';
import { runCli, runCliInProcess } from '../unit/helpers/cliHarness';
import { TEST_KEY_ENV } from '../unit/helpers/loopHarness';
import { GREETER_FIXED_JS, GREETER_JS, GREETER_TEST, packageJson } from '../unit/helpers/greeterProject';
import { makeTempWorkspace, type TempWorkspace } from '../unit/helpers/tempWorkspace';

const FIX = `cat > greeter.js <<'EOF'\n${GREETER_FIXED_JS}EOF`;
const CHEAP = 'cheap-model';
/**
 * OpenCode's scripted provider has two models: the one the ladder's step names, and another that
 * OpenCode picks by itself when it is told no model (so a step whose model did not reach it fails).
 */
const NAMED = 'scripted-model';
const NAMED_OPENCODE = OPENCODE_MODEL;
const OTHER = 'strong-model';

describe('ralph run up the escalation ladder: from the built-in agent to OpenCode (the real CLI)', function () {
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

  it('two failed iterations on the cheap built-in model, then OpenCode on the named model fixes the task: done', async () => {
    // one endpoint for both agents: the built-in agent asks for the cheap model and never fixes anything;
    // OpenCode on the model the step names fixes add in the session of iteration 3 (on another model it does nothing)
    const onCli = opencodeAgent([[], [], [ocBash(FIX), ocBash('npm test'), ocComplete('add adds'), { text: 'Fixed add.' }]]);
    const step = (request: RecordedRequest) =>
      request.body?.model === NAMED ? onCli(request) : { content: 'I read greeter.js; I am not sure what is wrong.' };
    server = await startScriptedServer({ steps: Array.from({ length: 60 }, () => step), models: [CHEAP, NAMED, OTHER] });
    const made = await opencodeEnv(server.url);
    home = made.home;
    // the person's OpenCode has two models of the scripted provider
    const opencodeJson = path.join(made.env.XDG_CONFIG_HOME!, 'opencode', 'opencode.json');
    const own = JSON.parse(await fs.readFile(opencodeJson, 'utf8'));
    own.provider.scripted.models[OTHER] = { name: 'Another model' };
    await fs.writeFile(opencodeJson, JSON.stringify(own, null, 2));
    // the person has OpenCode on PATH: the ladder's step names the agent, not where it is
    const env = { ...made.env, PATH: `${path.dirname(opencode)}${path.delimiter}${process.env.PATH ?? ''}` };
    ws = await makeTempWorkspace({
      commit: true,
      files: { 'package.json': packageJson('node --test'), 'greeter.js': GREETER_JS, 'greeter.test.js': GREETER_TEST },
    });
    const init = await runCliInProcess(['init'], ws.dir, env);
    assert.equal(init.code, 0, init.stderr);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: [CHEAP], maxRetries: 0 },
      escalation: { threshold: 2, ladder: [CHEAP, { agent: 'opencode', model: NAMED_OPENCODE }] },
      gates: [NODE_TEST_GATE],
      loop: { maxIterations: 4, maxParallel: 1 },
    };
    await fs.writeFile(ws.path('.ralph/config.json'), `${JSON.stringify(config, null, 2)}\n`);
    ws.git('add', '-A');
    ws.git('commit', '-qm', 'ralph init');
    const added = await runCliInProcess(
      ['task', 'add', 'Fix add', '--prompt', 'add(2, 3) must be 5: fix greeter.js', '--promise', 'npm test passes', '--complexity', '2'],
      ws.dir,
      env,
    );
    assert.equal(added.code, 0, added.stderr);

    const run = await runCli(['run'], ws.dir, env);
    assert.equal(run.code, 0, run.stdout + run.stderr);
    const task = JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0];
    assert.equal(task.status, 'done');
    assert.equal(ws.git('show', 'main:greeter.js'), GREETER_FIXED_JS.trim());
    // the run log: two iterations on the cheap model, the escalation naming the agent and model, then OpenCode
    assert.match(run.stdout, /iteration 1\/4 \(cheap-model\)/);
    assert.match(run.stdout, /iteration 2\/4 \(cheap-model\)/);
    assert.match(run.stdout, /escalated cheap-model → OpenCode: scripted\/scripted-model/);
    assert.match(run.stdout, /iteration 3\/4 \(OpenCode: scripted\/scripted-model\)/);
    assert.match(run.stdout, /⌁ opencode session ses_\S+/);
    // what reached the model: the built-in agent's requests only before the move, OpenCode's only after it
    const cheap = server.requests.filter((r) => r.body?.model === CHEAP);
    const cli = server.requests.filter((r) => r.body?.model === NAMED);
    assert.equal(server.requests.filter((r) => r.body?.model === OTHER).length, 0, "nothing on OpenCode's other model");
    assert.ok(cheap.length >= 2, `the built-in agent ran twice (${cheap.length} requests)`);
    assert.ok(cli.length >= 3, `OpenCode ran (${cli.length} requests)`);
    assert.ok(
      cli.every((r) => opencodeIteration(r) === 3),
      'every OpenCode session is the third iteration',
    );
    assert.ok(Math.max(...cheap.map((r) => r.seq)) < Math.min(...cli.map((r) => r.seq)), 'OpenCode only after the built-in agent');
    // the task's record: the agent and model of each iteration, and the ladder's move
    const checkpoint = JSON.parse(await ws.read(`.ralph/state/${task.id}.json`));
    assert.deepEqual(
      checkpoint.history.map((r: { model: string }) => r.model),
      [CHEAP, CHEAP, `OpenCode: ${NAMED_OPENCODE}`],
    );
    assert.equal(checkpoint.history[2].agentSession?.agent, 'opencode');
    assert.deepEqual(
      checkpoint.escalation.history.map((e: { from: string; to: string }) => [e.from, e.to]),
      [[CHEAP, `OpenCode: ${NAMED_OPENCODE}`]],
    );
    const log = await runLogEvents(ws);
    const escalation = log.find((e) => e.type === 'escalation');
    assert.equal(escalation?.toAgent, 'opencode');
    assert.equal(escalation?.toModel, NAMED_OPENCODE);
    assert.deepEqual(
      log.filter((e) => e.type === 'iteration.started').map((e) => e.agent),
      ['builtin', 'builtin', 'opencode'],
    );
  });
});

/** The run's NDJSON log events. */
async function runLogEvents(ws: TempWorkspace): Promise<Record<string, unknown>[]> {
  const dir = ws.path('.ralph/runs');
  const files = (await fs.readdir(dir)).filter((f) => f.endsWith('.ndjson'));
  assert.equal(files.length, 1, `one run log: ${files.join(', ')}`);
  const text = await fs.readFile(path.join(dir, files[0]), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}
