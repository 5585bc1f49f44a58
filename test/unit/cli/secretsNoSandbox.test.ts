import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { openQuestion } from '../../../src/core/tasks/questions';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { requestText } from '../helpers/loopHarness';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { CLI_ENV, runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const MARKER = 'PRIVATE-KEY-MARKER-8f2c1e';

describe('secrets and history with commands.sandbox "off" (what runs on macOS and Windows)', function () {
  this.timeout(120000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let home: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
    home = await ws.outsideDir();
    await fs.mkdir(path.join(home, '.ssh'));
    await fs.writeFile(path.join(home, '.ssh', 'id_rsa'), `-----BEGIN OPENSSH PRIVATE KEY-----\n${MARKER}\n`);
    await fs.mkdir(path.join(home, '.aws'));
    await fs.writeFile(path.join(home, '.aws', 'credentials'), `[default]\naws_secret_access_key = ${MARKER}\n`);
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    await fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({
        llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
        loop: { maxIterations: 2, maxParallel: 1 },
        commands: { sandbox: 'off' },
      }),
    );
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  it("an agent's credential reads are refused and its history-destroying git is asked (refused unattended); nothing of the key reaches the model", async () => {
    const added = await runCliInProcess(['task', 'add', 'Work', '--prompt', 'write work.txt', '--promise', 'work.txt exists'], ws.dir);
    assert.equal(added.code, 0, added.stderr);
    const tries = [
      'cat ~/.ssh/id_rsa',
      'cat "$HOME/.aws/credentials"',
      'printenv',
      'python3 -c "print(open(\'' + path.join(home, '.ssh', 'id_rsa') + '\').read())"',
      'git stash',
      'git checkout -- .',
      'git commit --amend -m mine',
      'git reflog expire --expire=now --all && git gc --prune=now',
    ];
    server.push(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'work.txt', content: 'work\n' } }] },
      ...tries.map((command) => ({ toolCalls: [{ name: 'run_command', arguments: { command } }] })),
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote it', promiseEvidence: 'work.txt exists' } }] },
    );
    const env = { ...CLI_ENV, HOME: home };
    const run = await runCli(['run'], ws.dir, env);
    assert.equal(run.code, 0, run.stderr + run.stdout);
    const results = server.requests.slice(2).map((r) => {
      const last = (r.body?.messages ?? []).at(-1);
      return typeof last?.content === 'string' ? last.content : '';
    });
    for (const [i, command] of tries.entries()) {
      if (i < 4) assert.match(results[i], /refused by the built-in policy: .*(reading credentials|printing the environment)/, command);
      else assert.match(results[i], /needs a person's approval .*nobody can answe/, command);
    }
    for (const request of server.requests) assert.doesNotMatch(requestText(request), new RegExp(MARKER), 'the key never reaches the model');
    assert.equal(await ws.read('work.txt'), 'work\n', 'the work was neither stashed nor checked out');
    assert.equal(ws.git('stash', 'list'), '');
    assert.match(ws.git('log', '-1', '--format=%s'), /ralph\(T-001\): iteration 1/, 'no amended commit');
    const [task] = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
    // the agent did without the commands it was refused: done, and no question left open on it
    assert.equal(task.status, 'done');
    assert.equal(openQuestion(task.questions), undefined, JSON.stringify(task.questions));
  });
});
