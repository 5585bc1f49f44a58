/**
 * One run at a time between the editor and the CLI on the same folder: while the extension runs
 * a task, `ralph run` in a terminal is refused (exit 2, the extension host named as the holder)
 * and a second start in the window is refused too; while the CLI runs, the editor's start is
 * refused naming the CLI's process. (Two editor windows are two processes like these.)
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import { startScriptedServer, type ScriptedServer, type Step } from '../fixtures/scriptedServer';
import { waitFor } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_RUNLOCK_TEST_KEY';
const WAIT_MS = 120_000;

const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;

/** `ralph <args>` from the built CLI, in the workspace; resolves with its exit code and output once it ends. */
function cli(args: string[]): { pid: number | undefined; done: Promise<{ code: number | null; stdout: string; stderr: string }> } {
  const file = path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'dist', 'cli.js');
  const child = spawn(process.execPath, [file, ...args], {
    cwd: workspace(),
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  return { pid: child.pid, done: new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr }))) };
}

async function writeTasks(api: RalphExtensionApi, tasks: { id: string; status: string; title: string }[]): Promise<void> {
  const now = new Date().toISOString();
  const full = tasks.map((t) => ({ prompt: 'write a file', promise: 'it exists', iterations: 0, createdAt: now, updatedAt: now, ...t }));
  await fs.writeFile(path.join(workspace(), '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: full }, null, 2));
  await api.tree!.refresh();
}

/** The agent: its first call waits for `release`, then it writes a file and completes. */
function heldAgent(release: Promise<void>, file: string): Step[] {
  return [
    async () => {
      await release;
      return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: 'made\n' } }] };
    },
    { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: `${file} exists` } }] },
  ];
}

describe('One run at a time: the editor and the CLI share the run lock', function () {
  this.timeout(300_000);
  let api: RalphExtensionApi;
  let server: ScriptedServer;

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    server = await startScriptedServer();
    process.env[KEY_ENV] = 'sk-runlock-test';
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0, requestTimeoutMs: 120000 },
      loop: { maxIterations: 2, maxParallel: 1 },
      commands: { sandbox: 'off' },
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));
  });

  after(async () => {
    await writeTasks(api, []);
    await server.close();
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), '{}\n');
  });

  it('while the editor runs, `ralph run` exits 2 naming the extension host, and a second start in the window is refused', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server.push(...heldAgent(held, 'from-editor.txt'));
    await writeTasks(api, [{ id: 'RL-1', status: 'todo', title: 'Run in the editor' }]);
    const calls = server.requests.length;
    const run = vscode.commands.executeCommand('ralph.startAutopilot') as Thenable<
      { results: { taskId: string; status: string }[] } | undefined
    >;
    try {
      await waitFor('the editor run at its model call', () => server.requests.length > calls, WAIT_MS);
      const refused = await cli(['run']).done;
      assert.equal(refused.code, 2, refused.stdout + refused.stderr);
      assert.match(
        refused.stderr,
        new RegExp(
          `another Ralph run holds \\.ralph/run\\.lock: pid ${process.pid} on host .*; the pid is alive and looks like a Ralph run`,
        ),
      );
      await assert.rejects(api.runs!.start(), /already running in this window/);
      assert.equal(server.requests.length, calls + 1, 'no second agent reached the model');
    } finally {
      release();
    }
    const summary = await run;
    assert.deepEqual(
      summary?.results.map((r) => [r.taskId, r.status]),
      [['RL-1', 'done']],
    );
    await waitFor(
      'the lock released',
      async () => !(await fs.stat(path.join(workspace(), '.ralph', 'run.lock')).catch(() => undefined)),
      WAIT_MS,
    );
  });

  it("while `ralph run` runs in a terminal, the editor refuses to start, naming the CLI's process", async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server.push(...heldAgent(held, 'from-cli.txt'));
    await writeTasks(api, [{ id: 'RL-2', status: 'todo', title: 'Run in the terminal' }]);
    const calls = server.requests.length;
    const terminal = cli(['run']);
    try {
      await waitFor('the CLI run at its model call', () => server.requests.length > calls, WAIT_MS);
      await assert.rejects(api.runs!.start(), (error: Error) =>
        new RegExp(`another Ralph run holds \\.ralph/run\\.lock: pid ${terminal.pid} on host .*looks like a Ralph run`).test(error.message),
      );
      assert.equal(server.requests.length, calls + 1, 'the editor started no agent');
    } finally {
      release();
    }
    const ended = await terminal.done;
    assert.equal(ended.code, 0, ended.stdout + ended.stderr);
    assert.equal(await fs.readFile(path.join(workspace(), 'from-cli.txt'), 'utf8'), 'made\n');
  });
});
