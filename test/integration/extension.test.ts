import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import type { RalphEvent } from '../../src/core/events';
import type { TaskNode, TaskTreeNode } from '../../src/ui/taskTree';
import { startScriptedServer, type ScriptedServer } from '../fixtures/scriptedServer';
import { waitFor as waitUntil } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_INTEGRATION_KEY';

async function activate(): Promise<RalphExtensionApi> {
  const extension = vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID);
  assert.ok(extension, `extension ${EXTENSION_ID} is installed in the host`);
  return extension.activate();
}

// a hang bound (a file written → code-server's watcher → the workbench → the extension host → the tree), not a speed check
const waitFor = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> =>
  waitUntil(what, probe, timeoutMs);

/** The tree as a person sees it: group label → task labels. */
function treeShape(api: RalphExtensionApi): Record<string, string[]> {
  const tree = api.tree!;
  const shape: Record<string, string[]> = {};
  // the extension runs from its bundle, so its classes are not the ones this file could import: check `kind`
  for (const group of tree.getChildren() as TaskTreeNode[]) {
    assert.equal(group.kind, 'group');
    const label = String(tree.getTreeItem(group).label);
    shape[label] = tree.getChildren(group).map((node) => {
      assert.equal(node.kind, 'task');
      return `${(node as TaskNode).task.id} ${(node as TaskNode).task.title}`;
    });
  }
  return shape;
}

describe('Ralph Loop extension', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  let server: ScriptedServer | undefined;

  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('activates with the workspace folder and its services', async () => {
    const api = await activate();
    assert.equal(api.workspace, workspace());
    assert.ok(api.tree && api.statusBar && api.runs);
    assert.ok(api.activationMs > 0);
    // a figure for the record (budgets are checked by benchmarks, never by timed assertions)
    console.log(`      activation took ${api.activationMs.toFixed(1)} ms`);
  });

  it('registers every command of package.json, and package.json lists every registered command', async () => {
    const api = await activate();
    const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
    const manifest = JSON.parse(await fs.readFile(path.join(extension.extensionPath, 'package.json'), 'utf8'));
    const contributed: string[] = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
    // VS Code adds `ralph.tasks.focus` & co. for the view itself: those are not ours to contribute
    const registered = (await vscode.commands.getCommands(true))
      .filter((id) => id.startsWith('ralph.') && !id.startsWith('ralph.tasks.'))
      .sort();
    assert.deepEqual(registered, contributed);
    assert.deepEqual([...api.commandIds].sort(), contributed);
    for (const command of manifest.contributes.commands)
      assert.equal(command.category, 'Ralph', `${command.command} has the Ralph category`);
  });

  it('initializes the workspace and shows the tasks of .ralph/tasks.json, following edits to the file', async () => {
    const api = await activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    const tasksFile = path.join(workspace(), '.ralph', 'tasks.json');
    const now = new Date().toISOString();
    const tasks = [
      { id: 'W-1', title: 'Written by hand', prompt: 'p', promise: 'q', status: 'todo', createdAt: now, updatedAt: now },
      {
        id: 'W-2',
        title: 'Already blocked',
        prompt: 'p',
        promise: 'q',
        status: 'blocked',
        blockedReason: 'no db',
        createdAt: now,
        updatedAt: now,
      },
    ];
    await fs.writeFile(tasksFile, JSON.stringify({ version: 1, tasks }, null, 2));
    const shape = await waitFor('the tree to show the edited file', () => {
      const current = treeShape(api);
      return current['To do (1)'] && current['Blocked (1)'] ? current : undefined;
    });
    assert.deepEqual(shape, { 'Blocked (1)': ['W-2 Already blocked'], 'To do (1)': ['W-1 Written by hand'] });
    const blocked = api.tree!.getChildren(api.tree!.getChildren()[0]!)[0] as TaskNode;
    const item = api.tree!.getTreeItem(blocked);
    assert.equal(item.contextValue, 'task.blocked');
    // leave a clean store for the next test
    await fs.writeFile(tasksFile, JSON.stringify({ version: 1, tasks: [] }, null, 2));
    await waitFor('the tree to empty', () => (Object.keys(treeShape(api)).length === 0 ? true : undefined));
  });

  it('Start Autopilot takes a task to done against the scripted model, and the tree and status bar follow', async () => {
    const api = await activate();
    server = await startScriptedServer({
      steps: [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'ralph-integration.txt', content: 'made by the loop\n' } }] },
        { content: 'wrote it <ralph>PROGRESS:60</ralph>' },
        {
          toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'file written', promiseEvidence: 'ralph-integration.txt exists' } }],
        },
      ],
    });
    process.env[KEY_ENV] = 'sk-integration-test';
    await vscode.commands.executeCommand('ralph.initWorkspace');
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 1 },
      loop: { maxIterations: 5 },
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));

    const task = (await vscode.commands.executeCommand('ralph.addTask', {
      title: 'Write the integration file',
      prompt: 'Create ralph-integration.txt',
      promise: 'ralph-integration.txt exists',
    })) as { id: string };
    assert.ok(task?.id, 'Add Task returns the new task');
    await waitFor('the new task in the tree', () => treeShape(api)['To do (1)']);

    const seen: { status: string[]; tree: Record<string, string[]>[] } = { status: [], tree: [] };
    const subscription = api.bus.subscribe((event: RalphEvent) => {
      if (event.type === 'iteration.started' || event.type === 'signal') seen.status.push(api.statusBar!.text);
      if (event.type === 'iteration.started') seen.tree.push(treeShape(api));
    });
    try {
      const summary = (await vscode.commands.executeCommand('ralph.startAutopilot')) as { results: { taskId: string; status: string }[] };
      assert.deepEqual(
        summary.results.map((r) => [r.taskId, r.status]),
        [[task.id, 'done']],
      );
    } finally {
      subscription.dispose();
    }

    assert.equal(await fs.readFile(path.join(workspace(), 'ralph-integration.txt'), 'utf8'), 'made by the loop\n');
    assert.match(seen.status[0], /\$\(sync~spin\) Ralph 1\/5/);
    assert.ok(
      seen.status.some((text) => /Ralph 1\/5 · 60%/.test(text)),
      `status bar showed progress: ${seen.status.join(' | ')}`,
    );
    assert.match(seen.status.at(-1)!, /Ralph 2\/5/);
    assert.deepEqual(seen.tree[0]['In progress (1)'], [`${task.id} Write the integration file`]);
    const done = await waitFor('the task under Done', () => treeShape(api)['Done (1)']);
    assert.deepEqual(done, [`${task.id} Write the integration file`]);
    assert.doesNotMatch(api.statusBar!.text, /sync~spin/);
    assert.equal(server.requests.filter((r) => r.path.endsWith('/chat/completions')).length, 3);
    assert.equal(server.requests[0].headers.authorization, 'Bearer sk-integration-test');
  });
});
