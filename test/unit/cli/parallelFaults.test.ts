import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('a parallel run meeting bad input', function () {
  this.timeout(120000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
    assert.equal((await runCli(['init'], ws.dir)).code, 0);
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 }, loop: { maxIterations: 3, maxParallel: 3 } }));
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  it('a corrupt checkpoint with no good backup ends the run with exit 2 and the message on stderr; the task is kept as it was, as with one agent', async () => {
    const added = await runCli(['task', 'add', 'Write a', '--prompt', 'WRITE a.txt', '--promise', 'a.txt exists'], ws.dir);
    const id = added.stdout.trim();
    const file = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json')));
    await fs.writeFile(ws.path('.ralph/tasks.json'), JSON.stringify({ ...file, tasks: file.tasks.map((t) => ({ ...t, status: 'in_progress', iterations: 2 })) }));
    await ws.write(`.ralph/state/${id}.json`, '{"version":1, torn');
    for (const agents of [3, 1]) {
      await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify({ llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 }, loop: { maxIterations: 3, maxParallel: agents } }));
      const run = await runCli(['run'], ws.dir);
      assert.equal(run.code, 2, `${agents} agents: ${run.stdout}${run.stderr}`);
      assert.match(run.stderr, new RegExp(`^ralph: \\.ralph/state/${id}\\.json is unreadable .*no good backup.*rm \\.ralph/state/${id}\\.json$`, 'm'));
      const [task] = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
      assert.equal(task.status, 'in_progress', 'kept, never failed');
      assert.equal(task.iterations, 2);
      assert.equal(server.requests.length, 0);
      assert.equal(await ws.read(`.ralph/state/${id}.json`), '{"version":1, torn', 'the file is left for the user to repair');
    }
  });
});
