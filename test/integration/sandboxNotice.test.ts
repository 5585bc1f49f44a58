import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { bubblewrapInstall } from '../../src/core/commands/sandboxAdvice';
import type { RalphEvent } from '../../src/core/events';
import type { RalphExtensionApi } from '../../src/extension';
import { startScriptedServer, type ScriptedServer } from '../fixtures/scriptedServer';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_INTEGRATION_KEY';
const ACCEPT = 'Accept the Risk';

/** Where a program is on this PATH, or undefined. */
function which(name: string): string | undefined {
  try {
    return execFileSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

describe('the no-sandbox notification (issue 48, real extension host)', function () {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const configFile = () => path.join(workspace(), '.ralph', 'config.json');
  let api: RalphExtensionApi;
  let server: ScriptedServer | undefined;
  let originalConfig: string;
  let originalPath: string | undefined;
  /** A PATH with git and the shells but no bwrap: this machine without the sandbox. */
  let bare: string;
  let runs = 0;

  before(async function () {
    if (process.platform !== 'linux') this.skip(); // bubblewrap is Linux's sandbox; elsewhere the notice has no install command
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    process.env[KEY_ENV] = 'sk-integration-test';
    originalConfig = await fs.readFile(configFile(), 'utf8');
    bare = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-no-bwrap-'));
    for (const program of ['git', 'bash', 'sh', 'node', 'env']) {
      const found = which(program);
      if (found) await fs.symlink(found, path.join(bare, program));
    }
    originalPath = process.env.PATH;
    process.env.PATH = bare;
  });
  after(async () => {
    if (originalPath !== undefined) process.env.PATH = originalPath;
    // the suites share one workspace: leave the configuration as it was found
    if (originalConfig !== undefined) await fs.writeFile(configFile(), originalConfig);
    if (bare) await fs.rm(bare, { recursive: true, force: true });
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  /** One task whose agent runs one command, then COMPLETE; the run's warnings and the notifications shown (answered with `answer`). */
  async function runOnce(commands: Record<string, unknown>, answer: string | undefined) {
    server = await startScriptedServer({
      steps: [
        { toolCalls: [{ name: 'run_command', arguments: { command: `echo ${++runs} > sandbox-notice-${runs}.txt` } }] },
        { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'written', promiseEvidence: 'the file' } }] },
      ],
    });
    const llm = { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 };
    await fs.writeFile(configFile(), JSON.stringify({ llm, loop: { maxIterations: 2 }, commands }, null, 2));
    const task = (await vscode.commands.executeCommand('ralph.addTask', { title: `No sandbox ${runs}`, prompt: 'p', promise: 'q' })) as {
      id: string;
    };
    const shown: { message: string; actions: readonly string[] }[] = [];
    const warnings: string[] = [];
    const prompts = api.setPrompts({ warn: async (message, actions) => (shown.push({ message, actions }), answer) });
    const subscription = api.bus.subscribe((event: RalphEvent) => {
      if (event.type === 'warning') warnings.push(event.code);
    });
    try {
      // this task alone: the suites share one workspace, whose store may hold other suites' tasks
      const summary = (await vscode.commands.executeCommand('ralph.runSelectedTask', task.id)) as {
        results: { taskId: string; status: string }[];
      };
      assert.deepEqual(
        summary.results.map((r) => [r.taskId, r.status]),
        [[task.id, 'done']],
      );
      await api.sandboxNotice!.settled(); // the notice is shown from the bus, after the event: until it was answered
    } finally {
      subscription.dispose();
      prompts.dispose();
    }
    return { shown, warnings };
  }

  it('the first run without bwrap shows it once, with the command that installs bubblewrap; the next run does not', async () => {
    await api.sandboxNotice!.forget();
    const first = await runOnce({ sandbox: 'auto' }, undefined);
    assert.ok(first.warnings.includes('no-sandbox'), `warnings: ${first.warnings.join(', ')}`);
    assert.equal(first.shown.length, 1);
    assert.match(first.shown[0].message, /without a sandbox/);
    assert.ok(first.shown[0].message.includes(bubblewrapInstall()), first.shown[0].message);
    assert.deepEqual(first.shown[0].actions, ['Install in Terminal', ACCEPT]);

    const second = await runOnce({ sandbox: 'auto' }, undefined);
    assert.ok(second.warnings.includes('no-sandbox'), 'the run still warns in its log');
    assert.deepEqual(second.shown, [], 'told once: not again');
  });

  it('"Accept the Risk" sets commands.sandbox "off"; with it set the notice is never shown', async () => {
    await api.sandboxNotice!.forget();
    const accepted = await runOnce({ sandbox: 'auto' }, ACCEPT);
    assert.equal(accepted.shown.length, 1);
    // the choice was carried out before runOnce returned (settled)
    const config = JSON.parse(await fs.readFile(configFile(), 'utf8')) as { commands?: { sandbox?: string } };
    assert.equal(config.commands?.sandbox, 'off', 'the choice is written to .ralph/config.json');

    // set (here by the person's choice, or by hand): a run without a sandbox neither warns of it nor shows the notice, even to a machine never told
    await api.sandboxNotice!.forget();
    const off = await runOnce({ sandbox: 'off' }, ACCEPT);
    assert.ok(!off.warnings.includes('no-sandbox'), `warnings: ${off.warnings.join(', ')}`);
    assert.deepEqual(off.shown, []);
  });
});
