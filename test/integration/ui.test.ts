/**
 * The UI inside a real extension host (code-server + Chromium): the new commands, the tree's
 * context menus, the status bar's states, and the progress panel's protocol with the real
 * webview (ready → snapshot → incremental inputs; every inbound message checked by zod).
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphEventBody } from '../../src/core/events';
import type { RalphExtensionApi } from '../../src/extension';
import { stateDigest } from '../../src/protocol/panelState';
import type { TaskNode, TaskTreeNode } from '../../src/ui/taskTree';
import { startScriptedServer, type ScriptedServer } from '../fixtures/scriptedServer';
import { waitFor } from '../helpers/waitFor';
import { panelInSync } from './views';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_UI_TEST_KEY';
const STATUSES = ['todo', 'in_progress', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled', 'review'] as const;

async function activate(): Promise<RalphExtensionApi> {
  return vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
}

const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const tasksFile = () => path.join(workspace(), '.ralph', 'tasks.json');

async function writeTasks(
  api: RalphExtensionApi,
  tasks: { id: string; status: string; title?: string; iterations?: number; maxIterations?: number; blockedReason?: string }[],
): Promise<void> {
  const now = new Date().toISOString();
  const full = tasks.map((t) => ({
    title: `Task ${t.id}`,
    prompt: 'p',
    promise: 'q',
    iterations: 0,
    createdAt: now,
    updatedAt: now,
    ...t,
  }));
  await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: full }, null, 2));
  await api.tree!.refresh();
}

function taskNodes(api: RalphExtensionApi): TaskNode[] {
  const tree = api.tree!;
  return (tree.getChildren() as TaskTreeNode[]).flatMap((group) => tree.getChildren(group) as TaskNode[]);
}

/** Evaluates the `viewItem` part of a menu's `when` (the forms package.json uses). */
function viewItemMatches(when: string, contextValue: string): boolean {
  const regex = /viewItem =~ \/(.+?)\/(?:\s|$)/.exec(when);
  if (regex) return new RegExp(regex[1]).test(contextValue);
  const equal = /viewItem == ([\w.]+)/.exec(when);
  return equal ? equal[1] === contextValue : false;
}

/** The webview's own start (an iframe in the workbench, its bundle from code-server): a hang bound, as `panelInSync`'s. */
const WEBVIEW_WAIT_MS = 60_000;

function publish(api: RalphExtensionApi, bodies: RalphEventBody[], runId = `ui-${Date.now()}`): void {
  let seq = 0;
  for (const body of bodies) api.bus.publish({ ...body, runId, seq: ++seq, time: new Date().toISOString() } as never);
}

describe('UI: commands, tree menus, status bar', () => {
  let api: RalphExtensionApi;

  before(async () => {
    api = await activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
  });

  after(async () => {
    await writeTasks(api, []);
  });

  it('contributes every command of DESIGN §1 in the Ralph category', async () => {
    const manifest = JSON.parse(
      await fs.readFile(path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'package.json'), 'utf8'),
    );
    const titles = manifest.contributes.commands.map((c: { title: string }) => c.title);
    const design = [
      'Initialize Workspace',
      'Add Task',
      'Start Autopilot',
      'Run Selected Task',
      'Pause',
      'Resume',
      'Stop',
      'Retry Task',
      'Edit Task',
      'Increase Limit',
      'Rollback Task',
      'Open Progress Panel',
      'Show Report',
      'Set API Key',
      'Run Quality Gates',
    ];
    for (const title of design) assert.ok(titles.includes(title), `missing command "${title}"`);
    const byId = Object.fromEntries(
      manifest.contributes.commands.map((c: { command: string; enablement?: string }) => [c.command, c.enablement]),
    );
    assert.equal(byId['ralph.pause'], 'ralph.state == running');
    assert.equal(byId['ralph.resume'], 'ralph.state == paused');
    assert.ok(manifest.contributes.walkthroughs?.[0]?.steps?.length >= 4, 'a walkthrough with its four steps');
  });

  it('gives each task the contextValue task.<status>, and each status exactly the menu items its actions allow', async () => {
    await writeTasks(
      api,
      STATUSES.map((status, i) => ({ id: `S-${i + 1}`, status, iterations: status === 'todo' ? 0 : 1 })),
    );
    const manifest = JSON.parse(
      await fs.readFile(path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'package.json'), 'utf8'),
    );
    const menu: { command: string; when: string; group: string }[] = manifest.contributes.menus['view/item/context'].filter(
      (m: { group: string }) => !m.group.startsWith('inline'),
    );
    const expected: Record<string, string[]> = {
      'ralph.runSelectedTask': ['todo', 'in_progress', 'halted'],
      'ralph.retryTask': ['timeout', 'failed', 'halted', 'cancelled', 'blocked', 'needs_help', 'done', 'review'],
      'ralph.unblockTask': ['blocked', 'needs_help'],
      'ralph.answerTask': ['blocked', 'needs_help'],
      'ralph.approveTask': ['review'],
      'ralph.requestChanges': ['review'],
      'ralph.rejectTask': ['review'],
      'ralph.conveneCouncil': ['todo', 'blocked', 'needs_help', 'failed', 'timeout', 'halted'],
      'ralph.showChanges': [...STATUSES],
      'ralph.editTask': ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled', 'review'],
      'ralph.increaseMaxIterations': ['todo', 'in_progress', 'timeout', 'halted', 'failed'],
      'ralph.rollbackTask': ['done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled'],
      'ralph.cancelTask': ['todo', 'blocked', 'needs_help', 'timeout', 'failed', 'halted'],
      'ralph.deleteTask': ['todo', 'done', 'blocked', 'needs_help', 'failed', 'timeout', 'halted', 'cancelled', 'review'],
      'ralph.showReport': [...STATUSES],
      'ralph.openPanel': [...STATUSES],
      // dispatch a ready task, or send a stopped one to the forge again (the follower's Retry)
      'ralph.runOnGitHubActions': ['todo', 'failed', 'timeout', 'halted', 'blocked', 'needs_help'],
    };
    const nodes = await waitFor('all ten tasks in the tree', () =>
      taskNodes(api).length === STATUSES.length ? taskNodes(api) : undefined,
    );
    for (const node of nodes) {
      const item = api.tree!.getTreeItem(node);
      assert.equal(item.contextValue, `task.${node.task.status}`);
      const offered = menu
        .filter((m) => viewItemMatches(m.when, item.contextValue!))
        .map((m) => m.command)
        .sort();
      const allowed = Object.entries(expected)
        .filter(([, statuses]) => statuses.includes(node.task.status))
        .map(([command]) => command)
        .sort();
      assert.deepEqual(offered, allowed, `menu of a ${node.task.status} task`);
    }
    const running = nodes.find((n) => n.task.status === 'in_progress')!;
    assert.equal(api.tree!.getTreeItem(running).description, 'iteration 1');
  });

  it('Retry, Unblock, Cancel, Increase Max Iterations, Edit and Delete change the store as their names say', async () => {
    await writeTasks(api, [
      { id: 'A-1', status: 'timeout', iterations: 5, maxIterations: 5 },
      { id: 'A-2', status: 'blocked', iterations: 2, blockedReason: 'needs a database' },
      { id: 'A-3', status: 'todo' },
      { id: 'A-4', status: 'failed', iterations: 3 },
    ]);
    const retried = (await vscode.commands.executeCommand('ralph.retryTask', 'A-1')) as { status: string; iterations: number };
    assert.deepEqual([retried.status, retried.iterations], ['todo', 0]);
    const unblocked = (await vscode.commands.executeCommand('ralph.unblockTask', 'A-2')) as { status: string; blockedReason?: string };
    assert.deepEqual([unblocked.status, unblocked.blockedReason], ['todo', undefined]);
    const raised = (await vscode.commands.executeCommand('ralph.increaseMaxIterations', 'A-3', 7)) as { maxIterations: number };
    assert.equal(raised.maxIterations, 50 + 7, 'the default limit (50) plus 7');
    const edited = (await vscode.commands.executeCommand('ralph.editTask', 'A-3', { title: 'Renamed', promise: 'all green' })) as {
      title: string;
      promise: string;
    };
    assert.deepEqual([edited.title, edited.promise], ['Renamed', 'all green']);
    // asked through the input boxes: the prompts port answers like a person would
    // the three boxes, then the settings menu: the check (its executable promise), then Done
    const answers = ['Renamed again', 'p', 'q', 'node check.js'];
    const choices = ['check', 'done'];
    const answering = api.setPrompts({ input: async () => answers.shift(), choose: async () => choices.shift() as never });
    try {
      const viaBoxes = (await vscode.commands.executeCommand('ralph.editTask', 'A-3')) as { title: string; check?: string };
      assert.deepEqual([viaBoxes.title, viaBoxes.check], ['Renamed again', 'node check.js']);
    } finally {
      answering.dispose();
    }
    const cancelled = (await vscode.commands.executeCommand('ralph.cancelTask', 'A-4')) as { status: string };
    assert.equal(cancelled.status, 'cancelled');
    const declining = api.setPrompts({ confirm: async () => false });
    try {
      assert.equal(await vscode.commands.executeCommand('ralph.deleteTask', 'A-4'), false);
    } finally {
      declining.dispose();
    }
    const confirming = api.setPrompts({ confirm: async () => true });
    try {
      assert.equal(await vscode.commands.executeCommand('ralph.deleteTask', 'A-4'), true);
    } finally {
      confirming.dispose();
    }
    const stored = JSON.parse(await fs.readFile(tasksFile(), 'utf8')).tasks.map(
      (t: { id: string; status: string }) => `${t.id}:${t.status}`,
    );
    assert.deepEqual(stored, ['A-1:todo', 'A-2:todo', 'A-3:todo']);
  });

  it('Rollback Task names the commits in its confirmation and, once confirmed, reverts only that task', async () => {
    const git = (...args: string[]) =>
      execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
        cwd: workspace(),
        encoding: 'utf8',
      }).trim();
    const base = git('rev-parse', 'HEAD');
    await writeTasks(api, [{ id: 'R-1', status: 'done', iterations: 1 }]);
    await fs.mkdir(path.join(workspace(), '.ralph', 'state'), { recursive: true });
    const usage = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
    const checkpoint = {
      version: 1,
      taskId: 'R-1',
      runId: 'r',
      iteration: 1,
      phase: 'between',
      elapsedMs: 10,
      baseCommit: base,
      commits: 1,
      consecutiveErrors: 0,
      usage,
      history: [],
      updatedAt: new Date().toISOString(),
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'state', 'R-1.json'), JSON.stringify(checkpoint));
    await fs.writeFile(path.join(workspace(), 'made-by-task.txt'), 'x\n');
    git('add', 'made-by-task.txt');
    git('commit', '-q', '-m', 'ralph(R-1): iteration 1');
    const taskCommit = git('rev-parse', 'HEAD');
    await fs.writeFile(path.join(workspace(), 'made-later-by-user.txt'), 'mine\n');
    git('add', 'made-later-by-user.txt');
    git('commit', '-q', '-m', 'user work after the task');
    const userCommit = git('rev-parse', 'HEAD');

    const asked: string[] = [];
    const declining = api.setPrompts({ confirm: async (message, detail) => (asked.push(`${message}\n${detail}`), false) });
    try {
      assert.equal(await vscode.commands.executeCommand('ralph.rollbackTask', 'R-1'), undefined);
    } finally {
      declining.dispose();
    }
    assert.ok(asked[0].includes(`${taskCommit.slice(0, 7)} ralph(R-1): iteration 1`), asked[0]);
    assert.doesNotMatch(asked[0], /reset --hard/);
    assert.equal(git('rev-parse', 'HEAD'), userCommit, 'declined: nothing changed');

    const confirming = api.setPrompts({ confirm: async () => true });
    try {
      const result = (await vscode.commands.executeCommand('ralph.rollbackTask', 'R-1')) as {
        applied: { commit: string };
        task: { status: string };
      };
      assert.equal(result.task.status, 'todo');
      assert.equal(git('rev-parse', 'HEAD'), result.applied.commit);
    } finally {
      confirming.dispose();
    }
    assert.equal(git('rev-parse', 'HEAD^'), userCommit, 'a new commit on top; no history rewritten');
    await assert.rejects(fs.stat(path.join(workspace(), 'made-by-task.txt')));
    assert.equal(await fs.readFile(path.join(workspace(), 'made-later-by-user.txt'), 'utf8'), 'mine\n', 'later work is kept');
  });

  it('the status bar shows idle, running, paused, attention and back, and the run controls follow `ralph.state`', async () => {
    const server: ScriptedServer = await startScriptedServer({ steps: [] });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    server.push(
      async () => {
        await held;
        return { content: 'working <ralph>PROGRESS:40</ralph>' };
      },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'ok' } }] },
    );
    process.env[KEY_ENV] = 'sk-ui-test';
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0 },
      loop: { maxIterations: 4 },
      gates: [],
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));
    await writeTasks(api, [{ id: 'B-1', status: 'todo', title: 'Status bar task' }]);
    assert.equal(api.statusBar!.state, 'idle');

    const run = vscode.commands.executeCommand('ralph.startAutopilot') as Thenable<{ results: { status: string }[] } | undefined>;
    try {
      await waitFor('the running state', () => api.statusBar!.state === 'running' && api.statusBar!.text.includes('1/4'));
      assert.match(api.statusBar!.text, /^\$\(sync~spin\) Ralph 1\/4/);
      assert.equal(await vscode.commands.executeCommand('ralph.pause'), true);
      await waitFor('the paused state', () => api.statusBar!.state === 'paused');
      assert.match(api.statusBar!.text, /Ralph 1\/4 · paused/);
      assert.equal(api.runs!.status.state, 'paused');
      assert.equal(await vscode.commands.executeCommand('ralph.resume'), true);
      await waitFor('running again', () => api.statusBar!.state === 'running');

      publish(api, [
        { type: 'warning', taskId: 'B-1', code: 'no-commits', message: 'No commits in 5 iterations: the agent may be stuck.' },
      ]);
      await waitFor('the attention state', () => api.statusBar!.state === 'attention');
      const warning = api.panelModel!.state.warnings.find((w) => w.code === 'no-commits' && !w.resolved)!;
      assert.ok(warning, 'the warning is in the panel model');
      assert.equal(await api.panel!.receive({ type: 'warningAction', warningId: warning.id, action: 'continue' }), true);
      await waitFor('the warning answered', () => api.panelModel!.state.warnings.find((w) => w.id === warning.id)?.resolved === 'continue');
      await waitFor('attention cleared', () => api.statusBar!.state === 'running');
    } finally {
      release();
    }
    const summary = await run;
    assert.deepEqual(
      summary?.results.map((r) => r.status),
      ['done'],
    );
    await waitFor('idle again', () => api.statusBar!.state === 'idle');
    await server.close();

    await writeTasks(api, [{ id: 'B-2', status: 'blocked', blockedReason: 'needs a key' }]);
    await waitFor(
      'attention for a blocked task',
      () => api.statusBar!.state === 'attention' && /Ralph · 1 question$/.test(api.statusBar!.text),
    );
  });
});

describe('UI: progress panel protocol with the real webview', () => {
  let api: RalphExtensionApi;

  before(async () => {
    api = await activate();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('handshake: the webview says ready, gets a snapshot, then incremental inputs, and acknowledges each state', async () => {
    const readyBefore = api.panel!.stats.ready;
    await vscode.commands.executeCommand('ralph.openPanel');
    await waitFor('the webview to say ready', () => api.panel!.stats.ready > readyBefore, WEBVIEW_WAIT_MS);
    await panelInSync(api, 'the snapshot to be applied');
    const snapshots = api.panel!.stats.snapshots;

    publish(api, [
      { type: 'task.started', taskId: 'P-1', title: 'Panel task', iteration: 1, maxIterations: 3, resumed: false },
      { type: 'iteration.started', taskId: 'P-1', iteration: 1, maxIterations: 3, model: 'm' },
      { type: 'signal', taskId: 'P-1', iteration: 1, signal: { kind: 'PROGRESS', percent: 30 } },
    ]);
    await panelInSync(api, 'the incremental inputs to be applied');
    assert.equal(api.panel!.stats.snapshots, snapshots, 'no new snapshot: the inputs came incrementally');
    assert.ok(api.panel!.stats.batches > 0);
    assert.equal(api.panelModel!.state.tasks.find((t) => t.id === 'P-1')?.progress, 30);
  });

  it('rejects invalid messages from the webview (zod) and acts on valid ones', async () => {
    const rejected = api.panel!.stats.rejected;
    const bad: unknown[] = [
      { type: 'command', command: 'workbench.action.quit' },
      { type: 'openFile', path: '../../etc/passwd' },
      { type: 'ready', seq: 'x' },
      { type: 'applied', seq: 1 },
      'ready',
      null,
    ];
    for (const message of bad) assert.equal(await api.panel!.receive(message), false, JSON.stringify(message));
    assert.equal(api.panel!.stats.rejected, rejected + bad.length);
    assert.match(api.panel!.stats.lastRejection ?? '', /\w/);
    const snapshots = api.panel!.stats.snapshots;
    assert.equal(await api.panel!.receive({ type: 'resync' }), true);
    assert.equal(api.panel!.stats.snapshots, snapshots + 1);
    await panelInSync(api, 'the resync snapshot to be applied');
  });

  it('a burst of 1,000 events reaches the panel in a few batches and the panel ends in the same state (counted)', async () => {
    const batches = api.panel!.stats.batches;
    const bodies: RalphEventBody[] = [
      { type: 'task.started', taskId: 'P-2', title: 'Burst', iteration: 1, maxIterations: 100, resumed: false },
      { type: 'iteration.started', taskId: 'P-2', iteration: 1, maxIterations: 100, model: 'm' },
    ];
    for (let i = 0; bodies.length < 1000; i++) {
      if (i % 4 === 0)
        bodies.push({ type: 'tool.call', taskId: 'P-2', iteration: 1, callId: `c${i}`, tool: 'search', args: `{"query":"q${i}"}` });
      else if (i % 4 === 1)
        bodies.push({
          type: 'tool.result',
          taskId: 'P-2',
          iteration: 1,
          callId: `c${i - 1}`,
          tool: 'search',
          ok: true,
          summary: `${i} matches`,
          durationMs: 1,
        });
      else bodies.push({ type: 'model.delta', taskId: 'P-2', iteration: 1, text: `token ${i} ` });
    }
    bodies.push({ type: 'signal', taskId: 'P-2', iteration: 1, signal: { kind: 'PROGRESS', percent: 99 } });
    const seqBefore = api.panelModel!.seq;
    publish(api, bodies);
    assert.equal(api.panelModel!.seq, seqBefore + bodies.length, 'every event changed the model');
    await panelInSync(api, 'the last input of the burst to be applied');
    assert.equal(api.panel!.lastApplied!.seq, seqBefore + bodies.length);
    const sent = api.panel!.stats.batches - batches;
    assert.ok(sent >= 1 && sent <= 20, `${sent} batches for ${bodies.length} events`);
    assert.equal(api.panelModel!.state.tasks.find((t) => t.id === 'P-2')?.progress, 99);
  });

  it('shows the same state when hidden and shown again, and when closed and reopened', async () => {
    const digest = stateDigest(api.panelModel!.state);
    const ready = api.panel!.stats.ready;
    // another editor in the same group hides the panel: its webview is torn down
    const doc = await vscode.workspace.openTextDocument({ content: 'hide the panel' });
    await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.Active });
    await waitFor('the panel hidden', () => !api.panel!.visible);
    await vscode.commands.executeCommand('ralph.openPanel');
    await waitFor('the webview ready again', () => api.panel!.stats.ready > ready, WEBVIEW_WAIT_MS);
    await panelInSync(api, 'the state after showing again');
    assert.equal(api.panel!.lastApplied!.digest, digest);

    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await waitFor('the panel closed', () => !api.panel!.isOpen);
    const readyAgain = api.panel!.stats.ready;
    await vscode.commands.executeCommand('ralph.openPanel', 'P-2');
    await waitFor('the reopened webview ready', () => api.panel!.stats.ready > readyAgain, WEBVIEW_WAIT_MS);
    await panelInSync(api, 'the state after reopening');
    assert.equal(api.panel!.lastApplied!.digest, digest);
  });
});
