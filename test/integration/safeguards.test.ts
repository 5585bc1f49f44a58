import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphEvent } from '../../src/core/events';
import type { RalphExtensionApi } from '../../src/extension';
import { startScriptedServer, type ScriptedServer } from '../fixtures/scriptedServer';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_INTEGRATION_KEY';
const complete = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'e' } }] };

describe('safeguards in the editor (core warnings, real extension host)', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  let server: ScriptedServer | undefined;
  let api: RalphExtensionApi;
  let originalConfig: string;
  const configFile = () => path.join(workspace(), '.ralph', 'config.json');

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    process.env[KEY_ENV] = 'sk-integration-test';
    originalConfig = await fs.readFile(configFile(), 'utf8');
  });
  after(async () => {
    // the suites share one workspace: leave the configuration as it was found
    await fs.writeFile(configFile(), originalConfig);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function configure(extra: Record<string, unknown>): Promise<void> {
    const config = {
      llm: { baseUrl: server!.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 },
      loop: { maxIterations: 4 },
      ...extra,
    };
    await fs.writeFile(configFile(), JSON.stringify(config, null, 2));
  }

  it('pauses the autopilot on repeated errors until the person answers, then Resume goes on', async () => {
    // a rejected request (422) errors the iteration; a 401 would halt the task at once (auth fault)
    server = await startScriptedServer({ steps: [{ fault: 'status', status: 422 }, complete] });
    await configure({ safeguards: { errorThreshold: 1 } });
    const task = (await vscode.commands.executeCommand('ralph.addTask', { title: 'Survive an error', prompt: 'p', promise: 'q' })) as {
      id: string;
    };

    const seen: string[] = [];
    const subscription = api.bus.subscribe((event: RalphEvent) => {
      if (event.type === 'warning' && event.code === 'error-threshold') {
        seen.push('warning');
        // the loop now waits for an answer: the controller says paused, and Resume answers it
        setTimeout(async () => {
          seen.push(`paused=${api.runs!.paused}`);
          seen.push(`resume=${await vscode.commands.executeCommand('ralph.resume')}`);
        }, 200);
      }
      if (event.type === 'warning.answered') seen.push(`answered:${event.action}`);
    });
    const summary = (await vscode.commands.executeCommand('ralph.startAutopilot')) as { results: { taskId: string; status: string }[] };
    subscription.dispose();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[task.id, 'done']],
    );
    assert.deepEqual(seen, ['warning', 'paused=true', 'answered:continue', 'resume=true']);
    assert.equal(server.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 2);
  });

  it('raises the iteration-ratio warning from the core without stopping the loop', async () => {
    server = await startScriptedServer({ steps: [{ content: 'working <ralph>PROGRESS:30</ralph>' }, complete] });
    await configure({ safeguards: { iterationWarnRatio: 0.25 } });
    const task = (await vscode.commands.executeCommand('ralph.addTask', { title: 'Ratio', prompt: 'p', promise: 'q' })) as { id: string };
    const warnings: RalphEvent[] = [];
    const subscription = api.bus.subscribe((event: RalphEvent) => {
      if (event.type === 'warning' || event.type === 'warning.answered') warnings.push(event);
    });
    const summary = (await vscode.commands.executeCommand('ralph.startAutopilot')) as { results: { taskId: string; status: string }[] };
    subscription.dispose();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[task.id, 'done']],
    );
    const warning = warnings.find((w) => w.type === 'warning');
    assert.ok(
      warning && warning.type === 'warning' && warning.code === 'iteration-ratio' && /1 of 4 iterations used/.test(warning.message),
    );
    assert.ok(warnings.some((w) => w.type === 'warning.answered' && w.action === 'continue'));
  });

  it('pauses the autopilot at the spend-rate alarm naming the task, the model and the rate; Stop halts the task', async () => {
    const cost = (usd: number) => ({ prompt_tokens: 100, completion_tokens: 10, cost: usd });
    server = await startScriptedServer({
      steps: [
        { content: 'working <ralph>PROGRESS:30</ralph>', usage: cost(1) },
        { ...complete, usage: cost(0.01) },
      ],
    });
    await configure({ budget: { maxCostPerHourUsd: 0.5 } });
    const task = (await vscode.commands.executeCommand('ralph.addTask', { title: 'Spend fast', prompt: 'p', promise: 'q' })) as {
      id: string;
    };

    const seen: string[] = [];
    let message = '';
    const subscription = api.bus.subscribe((event: RalphEvent) => {
      if (event.type === 'warning' && event.code === 'spend-rate') {
        seen.push('warning');
        message = event.message;
        setTimeout(async () => {
          seen.push(`paused=${api.runs!.paused}`);
          await vscode.commands.executeCommand('ralph.stop');
        }, 200);
      }
      if (event.type === 'warning.answered') seen.push(`answered:${event.code}:${event.action}`);
    });
    const summary = (await vscode.commands.executeCommand('ralph.startAutopilot')) as { results: { taskId: string; status: string }[] };
    subscription.dispose();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[task.id, 'halted']],
    );
    assert.deepEqual(seen, ['warning', 'paused=true', 'answered:spend-rate:stop']);
    assert.match(
      message,
      new RegExp(
        `^spend rate .*/h: \\$1\\.00 spent in the last 5 min, at or over budget\\.maxCostPerHourUsd \\$0\\.500/h — most of it by task ${task.id} on scripted-model$`,
      ),
    );
    const calls = server.requests.filter((r) => r.path.endsWith('/chat/completions'));
    assert.equal(calls.length, 2, 'after the alarm only the bounded wind-down turn for the progress notes');
    assert.equal(calls[1].body?.max_completion_tokens, 1500, 'the wind-down turn is capped');
    assert.deepEqual(
      calls[1].body?.tools?.map((t) => t.function.name),
      ['write_file', 'edit_file'],
    );
  });
});
