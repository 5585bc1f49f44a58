import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const cli = (args: string[], cwd: string) => runCli(args, cwd);

describe('spend in the ralph CLI: the run summary and status --json', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
  });

  it("prints the run's total and each task's, and status --json carries every task's receipt", async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer({
      steps: [
        {
          content: 'working <ralph>PROGRESS:50</ralph>',
          usage: { prompt_tokens: 1000, completion_tokens: 100, cached_tokens: 600, cost: 0.002 },
        },
        {
          toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'ok' } }],
          usage: { prompt_tokens: 1000, completion_tokens: 50, cached_tokens: 900 },
        },
      ],
    });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: {
        baseUrl: server.url,
        apiKeyEnv: TEST_KEY_ENV,
        models: ['model-a'],
        maxRetries: 0,
        prices: { 'model-a': { input: 1, output: 4, cachedInput: 0.1 } },
      },
      loop: { maxIterations: 4 },
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    assert.equal((await runCliInProcess(['task', 'add', 'Write', 'hello', '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);

    const run = await cli(['run'], ws.dir);
    assert.equal(run.code, 0, run.stderr);
    // estimate: (400×1 + 600×0.1 + 100×4 + 100×1 + 900×0.1 + 50×4) / 1e6 = $0.00125
    const line = '2 calls, 2000 in (1500 cached) / 150 out tokens, est. $0.00125; $0.00200 (provider-reported, 1 of 2 calls)';
    assert.ok(run.stdout.includes(`● T-001 DONE after 2 iterations: `), run.stdout);
    assert.ok(run.stdout.includes(`  $ ${line}`), run.stdout);
    // against the budget: the provider's $0.002 for the first call, the estimate $0.00039 for the second
    assert.ok(run.stdout.includes(`spent this run: ${line} (against the budget: $0.00239)\n  T-001: ${line}`), run.stdout);

    const status = JSON.parse((await cli(['status', '--json'], ws.dir)).stdout);
    assert.equal(status.receipts['T-001'].total.calls, 2);
    assert.equal(status.receipts['T-001'].total.cachedPromptTokens, 1500);
    assert.equal(status.receipts['T-001'].byRole.orchestrator.providerReportedCalls, 1);
    assert.equal(status.spent.providerUsd, 0.002);
    const human = await cli(['status'], ws.dir);
    assert.match(human.stdout, /spent by 1 task \(see their final reports for the receipts\): 2 calls, 2000 in \(1500 cached\)/);
  });
});
