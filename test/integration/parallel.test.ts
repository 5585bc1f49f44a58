/**
 * Parallel agents in the real extension host: two agents at once against the scripted model
 * server, each in its own worktree; the progress panel's agent tiles and merge-queue entries
 * (checked against the real webview's acknowledged state), the tree's queued / checking rows and
 * worktree tooltips, and the status bar's `Ralph 2 agents` / `· 1 queued`. Then the recovery
 * commands on a kept worktree: Clean Up Worktree (refused with uncommitted work unless
 * confirmed) and Retry's choice between continuing in it and starting fresh.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import { runningAgents } from '../../src/protocol/panelState';
import { startScriptedServer, type RecordedRequest, type ScriptedServer, type Step } from '../fixtures/scriptedServer';
import { panelInSync as panelApplied, taskNode, tooltipText } from './views';
import { waitFor as waitUntil } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_PARALLEL_TEST_KEY';
/** Bounds each wait (the machine is shared and slow); a miss names what was awaited. */
const WAIT_MS = 120_000;

const waitFor = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = WAIT_MS): Promise<T> =>
  waitUntil(what, probe, timeoutMs);

const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const releaseFile = () => path.join(workspace(), '.ralph', 'runs', `release-merge-check-${process.pid}`);
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], { cwd: workspace(), encoding: 'utf8' }).trim();

/**
 * The required gate: passes at once in a task's worktree; in the merge queue's worktree (the
 * merged check) it waits until the release file exists, so the test can look at the queue while
 * a task is being checked. Bounded: it fails after two minutes rather than hang. The file lies in
 * the workspace (`.ralph/runs`, ignored by git): the sandbox gives commands a private /tmp, but
 * shows a worktree's main workspace read-only even when it is under /tmp (as this one is) — a
 * file beside the extension would be hidden when the clone itself lives under /tmp.
 */
const gateJs = (release: string) => `const fs = require('fs'); const path = require('path');
if (path.basename(process.cwd()) !== '_merge') { console.log('1 passed, 0 failed'); process.exit(0); }
const release = ${JSON.stringify(release)};
const until = Date.now() + 120000;
(function wait() {
  if (fs.existsSync(release)) { console.log('2 passed, 0 failed'); process.exit(0); }
  if (Date.now() > until) { console.log('the test never released the merged check'); process.exit(1); }
  setTimeout(wait, 100);
})();
`;

async function writeTasks(
  api: RalphExtensionApi,
  tasks: { id: string; status: string; title: string; prompt?: string; priority?: number }[],
): Promise<void> {
  const now = new Date().toISOString();
  const full = tasks.map((t) => ({ prompt: 'p', promise: 'q', iterations: 0, createdAt: now, updatedAt: now, ...t }));
  await fs.writeFile(path.join(workspace(), '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: full }, null, 2));
  await api.tree!.refresh();
}

const panelInSync = (api: RalphExtensionApi, what: string): Promise<void> => panelApplied(api, what, WAIT_MS);

/**
 * The agents: a task's first request writes its file and reports PROGRESS:50; its second
 * (after the tool result) waits until both agents got there — two at once — and until the test
 * releases that task, then completes.
 */
function agents(release: Record<string, Promise<void>>, bothThere: Promise<void>, arrived: (id: string) => void): Step[] {
  const step: Step = async (request: RecordedRequest) => {
    const messages = request.body?.messages ?? [];
    const user = messages.find((m) => m.role === 'user');
    const text = typeof user?.content === 'string' ? user.content : '';
    const match = /TASK (\S+) WRITE (\S+)/.exec(text);
    if (!match) throw new Error(`no instruction in the request: ${text.slice(0, 200)}`);
    const [, id, file] = match;
    if (messages.at(-1)?.role !== 'tool') {
      return {
        content: `Writing ${file}. <ralph>PROGRESS:50</ralph>`,
        toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${id}\n` } }],
      };
    }
    arrived(id);
    await bothThere;
    await release[id];
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: `${file} exists` } }] };
  };
  return Array.from({ length: 12 }, () => step);
}

describe('Parallel agents: tiles, merge queue, tree and status bar in the extension host', function () {
  // two agents, two iteration gate runs, two merged checks through the Tasks API on a shared machine
  this.timeout(300_000);
  let api: RalphExtensionApi;
  let server: ScriptedServer | undefined;

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
  });

  after(async () => {
    // a test that failed half-way leaves its run waiting at the model: stop it, or the next
    // suite's Start Autopilot is refused (a run is active) and its tests fail for no fault of theirs
    if (api.runs?.running) await vscode.commands.executeCommand('ralph.stop');
    await waitFor('the run to end', () => !api.runs?.running || undefined);
    // the suites share one workspace: leave no task behind for the next suite's autopilot
    await writeTasks(api, []);
    await server?.close();
    await fs.rm(releaseFile(), { force: true });
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), '{}\n');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('two agents at once: a tile each, then the queue re-checks one while the other works on, and both land', async () => {
    const releases: Record<string, () => void> = {};
    const release = Object.fromEntries(['PA-1', 'PA-2'].map((id) => [id, new Promise<void>((resolve) => (releases[id] = resolve))]));
    const there = new Set<string>();
    let allThere!: () => void;
    const bothThere = new Promise<void>((resolve) => (allThere = resolve));
    server = await startScriptedServer({
      steps: agents(release, bothThere, (id) => {
        there.add(id);
        if (there.size === 2) allThere();
      }),
    });
    process.env[KEY_ENV] = 'sk-parallel-test';
    await fs.rm(releaseFile(), { force: true });
    await fs.writeFile(path.join(workspace(), 'gate.js'), gateJs(releaseFile()));
    git('add', 'gate.js');
    git('commit', '-q', '-m', 'a gate that holds the merged check');
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-model'], maxRetries: 0, requestTimeoutMs: 120000 },
      loop: { maxIterations: 4, maxParallel: 2 },
      // the gate answers by where it runs (it waits in the merge worktree): a result no other tree can stand for
      gates: [{ name: 'check', command: 'node gate.js', kind: 'tests', required: true, reuse: false }],
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));
    await writeTasks(api, [
      { id: 'PA-1', status: 'todo', title: 'Parallel one', prompt: 'TASK PA-1 WRITE one.txt', priority: 1 },
      { id: 'PA-2', status: 'todo', title: 'Parallel two', prompt: 'TASK PA-2 WRITE two.txt', priority: 2 },
    ]);
    await vscode.commands.executeCommand('ralph.openPanel');

    const run = vscode.commands.executeCommand('ralph.startAutopilot') as Thenable<
      { results: { taskId: string; status: string }[] } | undefined
    >;
    try {
      await bothThere;
      console.log('    · both agents at their second model call');
      // both agents hold their second model call: two running at once
      await waitFor('two tiles with progress', () => {
        const tiles = runningAgents(api.panelModel!.state);
        return tiles.length === 2 && tiles.every((t) => t.progress === 50);
      });
      const tiles = runningAgents(api.panelModel!.state);
      assert.deepEqual(tiles.map((t) => t.id).sort(), ['PA-1', 'PA-2']);
      for (const tile of tiles) {
        assert.equal(tile.worktree, `.ralph/worktrees/${tile.id}`);
        assert.equal(tile.iteration, 1);
        assert.equal(tile.maxIterations, 4);
        assert.equal(tile.lastSignal, 'PROGRESS:50');
        assert.equal(tile.model, 'scripted-model');
      }
      await panelInSync(api, 'the webview to show both tiles');
      await waitFor('the status bar counting agents', () => /^\$\(sync~spin\) Ralph 2 agents$/.test(api.statusBar!.text));
      // the tree refreshes on its own schedule: the status bar being current says nothing of it
      await waitFor("the worktree in PA-2's tooltip", () => /Worktree:.*\.ralph\/worktrees\/PA-2/s.test(tooltipText(api, 'PA-2')));
      assert.match(String(api.tree!.getTreeItem(taskNode(api, 'PA-1')!).description), /iteration 1\/4 · 50%/);

      // PA-1 completes; the merged check holds it in the queue while PA-2 still works
      releases['PA-1']();
      console.log('    · PA-1 released');
      await waitFor(
        'PA-1 checked in the merge queue',
        () => api.panelModel!.state.queue.find((q) => q.taskId === 'PA-1')?.state === 'checking',
      );
      await waitFor('the status bar with one agent and one queued', () =>
        /^\$\(sync~spin\) Ralph 1\/4 · 50% · 1 queued$/.test(api.statusBar!.text),
      );
      assert.deepEqual(
        runningAgents(api.panelModel!.state).map((t) => t.id),
        ['PA-2'],
        'PA-1 is no longer an agent tile',
      );
      const checking = api.tree!.getTreeItem(taskNode(api, 'PA-1')!);
      assert.equal(checking.description, 'merge check running');
      assert.equal((checking.iconPath as vscode.ThemeIcon).id, 'git-merge');
      await waitFor(
        'the merged check gate started',
        () => api.panelModel!.state.tasks.find((t) => t.id === 'PA-1')?.gatesMergeTarget === 'main',
      );
      await panelInSync(api, 'the webview to show the queue entry');

      console.log('    · PA-1 in the merged check');
      await fs.mkdir(path.dirname(releaseFile()), { recursive: true });
      await fs.writeFile(releaseFile(), 'go\n');
      await waitFor('PA-1 merged', () => api.panelModel!.state.queue.find((q) => q.taskId === 'PA-1')?.state === 'merged');
      const merged = api.panelModel!.state.queue.find((q) => q.taskId === 'PA-1')!;
      assert.deepEqual(
        merged.gates?.map((g) => [g.name, g.passed]),
        [['check', true]],
      );
      assert.match(merged.commit ?? '', /^[0-9a-f]{7,}$/);
      releases['PA-2']();
    } finally {
      for (const r of Object.values(releases)) r();
      await fs.mkdir(path.dirname(releaseFile()), { recursive: true });
      await fs.writeFile(releaseFile(), 'go\n');
    }
    const summary = await run;
    assert.deepEqual(summary?.results.map((r) => [r.taskId, r.status]).sort(), [
      ['PA-1', 'done'],
      ['PA-2', 'done'],
    ]);
    assert.equal(await fs.readFile(path.join(workspace(), 'one.txt'), 'utf8'), 'PA-1\n', 'the user tree followed the merges');
    assert.equal(await fs.readFile(path.join(workspace(), 'two.txt'), 'utf8'), 'PA-2\n');
    await waitFor('idle again', () => api.statusBar!.state === 'idle');
    assert.deepEqual(runningAgents(api.panelModel!.state), []);
    assert.deepEqual(
      api.panelModel!.state.queue.map((q) => `${q.taskId}:${q.state}`),
      ['PA-1:merged', 'PA-2:merged'],
    );
    await panelInSync(api, 'the webview at the end of the run');
  });

  it('Clean Up Worktree refuses uncommitted work unless confirmed; Retry asks continue or fresh', async () => {
    await writeTasks(api, [
      { id: 'KW-1', status: 'failed', title: 'Kept after a failure' },
      { id: 'KW-2', status: 'timeout', title: 'Timed out' },
    ]);
    for (const id of ['KW-1', 'KW-2'])
      git('worktree', 'add', '-q', '-b', `ralph/${id}`, path.join(workspace(), '.ralph', 'worktrees', id), 'main');
    const wt1 = path.join(workspace(), '.ralph', 'worktrees', 'KW-1');
    await fs.writeFile(path.join(wt1, 'unsaved.txt'), 'never committed\n');
    await api.tree!.refresh();
    const item = api.tree!.getTreeItem(taskNode(api, 'KW-1')!);
    assert.equal(item.contextValue, 'task.failed.worktree');
    assert.match(tooltipText(api, 'KW-1'), /Worktree:.*\.ralph\/worktrees\/KW-1/s);
    const manifest = JSON.parse(
      await fs.readFile(path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'package.json'), 'utf8'),
    );
    const cleanMenu = manifest.contributes.menus['view/item/context'].find(
      (m: { command: string }) => m.command === 'ralph.cleanUpWorktree',
    );
    const regex = new RegExp(/viewItem =~ \/(.+?)\/(?:\s|$)/.exec(cleanMenu.when)![1]);
    assert.ok(regex.test('task.failed.worktree') && regex.test('task.timeout.worktree'));
    assert.ok(!regex.test('task.failed') && !regex.test('task.in_progress.worktree') && !regex.test('task.done.worktree'));

    const asked: string[] = [];
    let prompts = api.setPrompts({ confirm: async (message, detail) => (asked.push(`${message}\n${detail}`), false) });
    try {
      assert.equal(await vscode.commands.executeCommand('ralph.cleanUpWorktree', 'KW-1'), undefined);
    } finally {
      prompts.dispose();
    }
    assert.match(asked[0], /uncommitted changes[\s\S]*unsaved\.txt[\s\S]*ralph\/KW-1 and its commits stay/);
    assert.equal(await fs.readFile(path.join(wt1, 'unsaved.txt'), 'utf8'), 'never committed\n', 'declined: nothing removed');

    prompts = api.setPrompts({ confirm: async () => true });
    try {
      const removed = (await vscode.commands.executeCommand('ralph.cleanUpWorktree', 'KW-1')) as { relative: string };
      assert.equal(removed.relative, '.ralph/worktrees/KW-1');
    } finally {
      prompts.dispose();
    }
    await assert.rejects(fs.stat(wt1));
    assert.equal(git('branch', '--list', 'ralph/KW-1'), 'ralph/KW-1', 'the branch stays');
    await waitFor('the tree without KW-1 worktree', () => api.tree!.getTreeItem(taskNode(api, 'KW-1')!).contextValue === 'task.failed');

    const choices: string[][] = [];
    prompts = api.setPrompts({ choose: async (_placeHolder, options) => (choices.push(options.map((o) => o.label)), 'fresh' as never) });
    try {
      const retried = (await vscode.commands.executeCommand('ralph.retryTask', 'KW-2')) as { status: string };
      assert.equal(retried.status, 'todo');
    } finally {
      prompts.dispose();
    }
    assert.equal(choices.length, 1, 'asked, since KW-2 has a worktree');
    assert.match(choices[0].join(' | '), /Continue in its worktree \| .*Start fresh from the current tip/);
    assert.equal(git('branch', '--list', 'ralph/KW-2'), '', 'fresh: the branch is dropped');
    await assert.rejects(fs.stat(path.join(workspace(), '.ralph', 'worktrees', 'KW-2')));
    git('branch', '-D', 'ralph/KW-1');
  });
});
