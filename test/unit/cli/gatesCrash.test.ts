import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { waitFor } from '../../helpers/waitFor';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCliInProcess, startCli } from '../helpers/cliHarness';
import { firstCallOf, GATE_JS, gateConfig, gatesFast, ownGates, readStamps, slotAgent } from '../helpers/slowGate';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * Issue 34: a run killed while two tasks' gates run without their agent slots (the slots went
 * to a third task, killed mid-conversation), then run again: every task goes on from its
 * checkpoint — the two finish the iteration their model run had recorded (commit and gates,
 * no model call again) — and each lands exactly once.
 */
describe('a parallel run killed while gates run without their slots, then run again', function () {
  this.timeout(120_000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let stamps: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n', 'gate.js': GATE_JS } });
    stamps = await ws.outsideDir();
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await gatesFast(stamps).catch(() => undefined); // a gate the killed run left behind ends
    await server.close();
    await ws.cleanup();
  });

  it('resumes the tasks that were on their gates and the one that was talking; all land once', async () => {
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
      loop: { maxIterations: 4, maxParallel: 2, maxConcurrentGates: 2 },
      gates: gateConfig(stamps, 60_000),
      commands: { sandbox: 'off' },
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    for (const [file, content] of [
      ['a.num', '2'],
      ['b.num', '3'],
      ['c.num', '1'],
    ]) {
      const added = await runCliInProcess(
        ['task', 'add', `Write ${file}`, '--prompt', `WRITE ${file} <<${content}>>`, '--promise', `${file}`],
        ws.dir,
      );
      assert.equal(added.code, 0, added.stderr);
    }
    // the third task's conversation never ends in the first run
    const never = new Promise<void>(() => {});
    let killed = false;
    server.push(...Array.from({ length: 16 }, () => slotAgent((file) => (file === 'c.num' && !killed ? never : undefined))));
    const first = startCli(['run'], ws.dir);
    await waitFor('both first tasks on their gates', async () => ownGates(await readStamps(stamps)).length >= 2, 60_000);
    await waitFor('the third task talking in a slot they gave away', () => firstCallOf(server.requests, 'c.num'), 60_000);
    first.child.kill('SIGKILL');
    assert.equal((await first.done).code, null);
    killed = true;
    assert.ok(
      ownGates(await readStamps(stamps)).every((s) => s.end === undefined),
      'killed while the gates ran',
    );

    const status = await startCli(['status'], ws.dir).done;
    assert.equal(status.code, 0, status.stderr);
    for (const id of ['T-001', 'T-002'])
      assert.match(status.stdout, new RegExp(`${id} in_progress at iteration 1 \\(interrupted after its model run`), status.stdout);
    assert.match(status.stdout, /T-003 in_progress at iteration 1 \(interrupted mid-iteration\)/);

    await gatesFast(stamps);
    const chats = () => server.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    const before = chats();
    const second = await startCli(['run'], ws.dir).done;
    assert.equal(second.code, 0, second.stderr + second.stdout);
    assert.match(second.stdout, /finishing it without calling the model again/, 'the two on their gates finished their recorded iteration');
    const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
    assert.deepEqual(
      tasks.map((t) => t.status),
      ['done', 'done', 'done'],
    );
    const landed = ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean);
    assert.deepEqual([...landed].sort(), ['T-001', 'T-002', 'T-003'], 'each task landed exactly once');
    assert.equal(chats() - before, 2, 'only the third task talked to the model again (write, complete)');
    assert.equal(ws.exists('.ralph/run.lock'), false);
  });
});
