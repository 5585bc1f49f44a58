import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import type { RalphEvent } from '../../../src/core/events';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { waitFor } from '../../helpers/waitFor';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCliInProcess, startCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * Issue 34: a run killed (SIGKILL) in the middle of an iteration's part of the suite — the
 * affected tests — then run again. The task goes on from its checkpoint: the iteration its model
 * run recorded is finished without calling the model again, its part runs again (the killed run's
 * verdict was never written), and the whole suite decides COMPLETE. One agent (the workspace) and
 * the default three (a worktree, the base run beside the first iteration).
 */
const TEST_HEAD = "const test = require('node:test');\nconst assert = require('node:assert/strict');\n";

/** test/a.test.js: once the agent's change is in and `hold` exists, it says so (`<hold>.running`) and waits, bounded, for `hold` to go. */
function files(hold: string): Record<string, string> {
  const h = JSON.stringify(hold);
  return {
    'package.json': `${JSON.stringify({ name: 'pair', private: true, scripts: { test: 'node --test' } }, null, 2)}\n`,
    'src/a.js': 'exports.a = () => 1;\n',
    'src/b.js': 'exports.b = () => 2;\n',
    'test/a.test.js': `${TEST_HEAD}const fs = require('node:fs');
const { a } = require('../src/a');
if (/v2/.test(fs.readFileSync(require.resolve('../src/a'), 'utf8')) && fs.existsSync(${h})) {
  fs.writeFileSync(${h} + '.running', String(process.pid));
  const until = Date.now() + 60000;
  while (fs.existsSync(${h}) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
}
test('a is one', () => assert.equal(a(), 1));
`,
    'test/b.test.js': `${TEST_HEAD}const { b } = require('../src/b');\ntest('b is two', () => assert.equal(b(), 2));\n`,
  };
}

async function events(ws: TempWorkspace, log: string): Promise<RalphEvent[]> {
  const text = await fs.readFile(ws.path(path.join('.ralph/runs', log)), 'utf8');
  return text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RalphEvent);
}

describe('a run killed in the middle of an iteration’s affected tests, then run again', function () {
  this.timeout(120_000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let hold: string;
  let holdDir: string;
  beforeEach(async () => {
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await fs.rm(holdDir, { recursive: true, force: true }); // a part the killed run left behind ends
    await server.close();
    await ws.cleanup();
  });

  for (const maxParallel of [1, 3]) {
    it(`finishes the recorded iteration, runs its part again, and the whole suite decides (maxParallel ${maxParallel})`, async () => {
      holdDir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-hold-'));
      hold = path.join(holdDir, 'hold');
      ws = await makeTempWorkspace({ commit: true, files: files(hold) });
      assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
      const config = {
        llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
        loop: { maxIterations: 3, maxParallel },
        gates: [{ name: 'tests', command: 'npm test', kind: 'tests', required: true }],
        commands: { sandbox: 'off' },
      };
      await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
      const added = await runCliInProcess(
        ['task', 'add', 'Mark a', '--prompt', 'Mark src/a.js as v2.', '--promise', 'a.js says v2'],
        ws.dir,
      );
      assert.equal(added.code, 0, added.stderr);
      server.push(
        () => {
          void fs.writeFile(hold, '');
          return { toolCalls: [{ name: 'write_file', arguments: { path: 'src/a.js', content: 'exports.a = () => 1; // v2\n' } }] };
        },
        { content: 'marked; the tests next\n<ralph>PROGRESS:60</ralph>' },
        { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'a.js marked v2', promiseEvidence: 'src/a.js ends in // v2' } }] },
      );
      const first = startCli(['run'], ws.dir);
      await waitFor('the part running, held', () => existsSync(`${hold}.running`), 60_000);
      const [killedLog] = await fs.readdir(ws.path('.ralph/runs'));
      first.child.kill('SIGKILL');
      assert.equal((await first.done).code, null);
      const killed = (await events(ws, killedLog)).filter((e) => e.type === 'gate.started' && e.iteration === 1);
      assert.deepEqual(
        killed.map((e) => e.type === 'gate.started' && [e.command, e.scope]),
        [['npm test -- test/a.test.js', 'affected']],
        'killed in the part: the test the change reaches',
      );

      await fs.rm(hold);
      const status = await startCli(['status'], ws.dir).done;
      assert.match(status.stdout, /T-001 in_progress at iteration 1 \(interrupted after its model run/, status.stdout);
      const chats = () => server.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
      const before = chats();
      const second = await startCli(['run'], ws.dir).done;
      assert.equal(second.code, 0, second.stderr + second.stdout);
      assert.match(second.stdout, /finishing it without calling the model again/);
      const log = (await fs.readdir(ws.path('.ralph/runs'))).find((f) => f !== killedLog)!;
      const gates = (await events(ws, log)).flatMap((e) =>
        e.type === 'gate.finished' && e.taskId === 'T-001' && e.iteration !== undefined
          ? [[e.iteration, e.passed, e.scope?.kind, e.tests?.total]]
          : [],
      );
      assert.deepEqual(
        gates,
        [
          [1, true, 'affected', 1],
          [2, true, 'full', 2],
        ],
        'the recorded iteration’s part again (one test), then the whole suite at COMPLETE',
      );
      assert.equal(chats() - before, 1, 'the model was called once more: the COMPLETE of iteration 2');
      const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
      assert.equal(tasks[0].status, 'done');
      assert.match(await ws.read('src/a.js'), /v2/);
      // one commit of iteration 1 (made before the kill), not a second one on the resume
      const subjects = ws.git('log', '--format=%s', 'main').split('\n');
      assert.equal(subjects.filter((s) => s === 'ralph(T-001): iteration 1').length, maxParallel === 1 ? 1 : 0, subjects.join('\n'));
      if (maxParallel > 1) {
        const landed = ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean);
        assert.deepEqual(landed, ['T-001'], 'landed once');
      }
      assert.equal(ws.exists('.ralph/run.lock'), false);
    });
  }
});
