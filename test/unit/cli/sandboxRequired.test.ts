import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { chatRequests, TEST_KEY, TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

describe('ralph run with commands.sandbox "required" where bubblewrap is missing', function () {
  if (process.platform !== 'linux') return;
  this.timeout(60_000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let bin: string;
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
    if (bin) await fs.rm(bin, { recursive: true, force: true });
  });

  it('exits 2 with a clear message before any model call', async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# x\n' } });
    server = await startScriptedServer({
      steps: [{ toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }] }],
    });
    // A PATH with git and nothing else: no bwrap to find.
    bin = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-nobwrap-'));
    await fs.symlink(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), path.join(bin, 'git'));
    const env = { ...TEST_GIT_ENV, PATH: bin, [TEST_KEY_ENV]: TEST_KEY };
    await fs.mkdir(ws.path('.ralph'), { recursive: true });
    await fs.writeFile(
      ws.path('.ralph/config.json'),
      JSON.stringify({ llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['m'] }, commands: { sandbox: 'required' } }),
    );
    assert.equal((await runCliInProcess(['task', 'add', 'T', '--prompt', 'p', '--promise', 'q'], ws.dir, env)).code, 0);
    const result = await runCli(['run'], ws.dir, env);
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /commands\.sandbox is "required" but the sandbox is not available/);
    assert.match(result.stderr, /bubblewrap/);
    assert.equal(chatRequests(server).length, 0);
  });
});
