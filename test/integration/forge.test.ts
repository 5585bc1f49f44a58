/**
 * GitHub Actions from the editor, in the real extension host: Set Up GitHub Actions writes the
 * workflows (a changed one kept unless the person says Replace); the token comes from VS Code's
 * GitHub session, else GITHUB_TOKEN, and without either the command asks to sign in and says
 * what to do; Run Tasks on GitHub Actions dispatches to the scripted GitHub API and the extension
 * host follows the job, the pull request and the merge-queue entry: the tree's badge, tooltip link
 * and click, and the panel adopting the task, at each state; the dependent is dispatched only
 * once its dependency merged; a failed job is retried from the tree's menu.
 */
import * as assert from 'node:assert/strict';
import { promises as fs, mkdtempSync } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { editorToken } from '../../src/commands/editorToken';
import type { RalphExtensionApi } from '../../src/extension';
import type { Prompts } from '../../src/ui/dialogs';
import { FORGE_TOKEN, type ForgeScene, startForgeScene } from '../fixtures/forgeScene';
import { panelInSync, taskNode, tooltipText, treeItem } from './views';
import { waitFor as waitUntil } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const WAIT_MS = 60_000;
/** Variables that would give the forge a token or a repository other than the test's. */
const FORGE_ENV = [
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'GH_CONFIG_DIR',
  'GITHUB_REPOSITORY',
  'GITHUB_API_URL',
  'GITHUB_SERVER_URL',
  'GITHUB_ACTIONS',
];

const waitFor = <T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> =>
  waitUntil(what, probe, WAIT_MS);
const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
const description = (api: RalphExtensionApi, id: string) => String(treeItem(api, id)?.description ?? '');
const panelTask = (api: RalphExtensionApi, id: string) => api.panelModel!.state.tasks.find((t) => t.id === id);

describe('GitHub Actions from the editor: set-up, token, dispatch and follow (tree and panel)', function () {
  this.timeout(240_000);
  let api: RalphExtensionApi;
  let scene: ForgeScene;
  const savedEnv: Record<string, string | undefined> = {};

  const git = (...args: string[]) => scene.git(workspace(), ...args);

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    for (const name of FORGE_ENV) {
      savedEnv[name] = process.env[name];
      delete process.env[name];
    }
    // a GitHub CLI on this machine is logged in nowhere for the test
    process.env.GH_CONFIG_DIR = mkdtempSync(path.join(path.dirname(workspace()), 'gh-'));
    scene = await startForgeScene(workspace());
    git('remote', 'add', 'origin', scene.origin);
    const config = { forge: { repository: 'acme/widgets', apiUrl: scene.github.url, pollSeconds: 0.2 } };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));
  });

  after(async () => {
    // the suites share one workspace: no task, config or remote of this one stays behind
    await fs.writeFile(path.join(workspace(), '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: [] }, null, 2));
    await api.tree!.refresh();
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), '{}\n');
    if (scene) git('remote', 'remove', 'origin');
    await scene?.close();
    for (const [name, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Set Up GitHub Actions writes both workflows and opens the first; a changed one is kept unless the person says Replace', async () => {
    const written = (await vscode.commands.executeCommand('ralph.setUpGitHubActions')) as { file: string; state: string }[];
    assert.deepEqual(
      written.map((w) => [path.relative(workspace(), w.file), w.state]),
      [
        [path.join('.github', 'workflows', 'ralph.yml'), 'created'],
        [path.join('.github', 'workflows', 'ralph-checks.yml'), 'created'],
      ],
    );
    const dispatch = await fs.readFile(written[0].file, 'utf8');
    assert.match(dispatch, /workflow_dispatch:/);
    assert.match(dispatch, /name: ralph \$\{\{ matrix\.task \}\}/, 'the job name the follower looks for');
    assert.match(await fs.readFile(written[1].file, 'utf8'), /merge_group:/);
    assert.equal(vscode.window.activeTextEditor?.document.uri.fsPath, written[0].file, 'the dispatch workflow is shown');

    await fs.appendFile(written[0].file, "# the team's own line\n");
    const asked: string[] = [];
    let prompts = api.setPrompts({ confirm: async (message, detail, action) => (asked.push(`${message} | ${detail} | ${action}`), false) });
    try {
      const kept = (await vscode.commands.executeCommand('ralph.setUpGitHubActions')) as { state: string }[];
      assert.deepEqual(
        kept.map((w) => w.state),
        ['kept', 'unchanged'],
      );
    } finally {
      prompts.dispose();
    }
    assert.equal(asked.length, 1);
    assert.match(
      asked[0],
      /^\.github\/workflows\/ralph\.yml exists and differs from what Ralph would write\. \| Replace it .*Cancel keeps it as it is\. \| Replace$/,
    );
    assert.match(await fs.readFile(written[0].file, 'utf8'), /# the team's own line/, "declined: the person's file is untouched");

    prompts = api.setPrompts({ confirm: async () => true });
    try {
      const replaced = (await vscode.commands.executeCommand('ralph.setUpGitHubActions')) as { state: string }[];
      assert.deepEqual(
        replaced.map((w) => w.state),
        ['replaced', 'unchanged'],
      );
    } finally {
      prompts.dispose();
    }
    assert.equal(await fs.readFile(written[0].file, 'utf8'), dispatch);
  });

  it('the token: no GitHub session in this editor, so GITHUB_TOKEN; without either the command asks to sign in and says what to do', async () => {
    // what this editor's GitHub provider answers to the silent look (code-server offline: no session)
    const bounded = new Promise<'no answer'>((resolve) => setTimeout(() => resolve('no answer'), 30_000));
    const silent = await Promise.race([
      Promise.resolve(vscode.authentication.getSession('github', ['repo', 'workflow'], { silent: true })).then(
        (s) => s?.account.label ?? 'no session',
        (e: unknown) => `rejected: ${String(e)}`,
      ),
      bounded,
    ]);
    console.log(`    · VS Code's silent GitHub session here: ${silent}`);
    assert.notEqual(silent, 'no answer', 'the silent look answers');

    const asked: string[] = [];
    const decline: Partial<Prompts> = {
      confirm: async (message, detail, action) => (asked.push(`${message} | ${detail} | ${action}`), false),
    };
    await assert.rejects(editorToken(true, { ...decline } as Prompts)(), (error: Error) => {
      assert.equal(error.name, 'ForgeTokenError');
      assert.match(
        error.message,
        /^no GitHub token: sign in to GitHub in VS Code \(Ralph asks when you run Run Tasks on GitHub Actions\), set GH_TOKEN or GITHUB_TOKEN in the environment the editor starts from \(a token with the contents, pull requests and actions permissions of the repository; code-server keeps GITHUB_TOKEN to itself, so there use GH_TOKEN\), or log in with the GitHub CLI \(gh auth login\)$/,
      );
      return true;
    });
    assert.deepEqual(asked, [
      'Ralph needs a GitHub token to run tasks on GitHub Actions. | There is no GitHub session in VS Code and no GITHUB_TOKEN, GH_TOKEN or gh login. Sign in to GitHub now, or set GH_TOKEN or GITHUB_TOKEN in the environment the editor starts from (a token with the contents, pull requests and actions permissions of the repository; code-server keeps GITHUB_TOKEN to itself, so there use GH_TOKEN), or log in with the GitHub CLI (gh auth login), then run the command again. | Sign In to GitHub',
    ]);
    // not the person's command (following after a reload): no question, the same error
    await assert.rejects(editorToken(false, decline as Prompts)(), /^ForgeTokenError: no GitHub token/);
    assert.equal(asked.length, 1);

    // the command: asked, declined, nothing dispatched
    await writeTasks([{ id: 'FG-1', title: 'Add the greeting', prompt: 'write greet.txt' }]);
    publish('FG-1 and the workflows');
    const prompts = api.setPrompts(decline);
    try {
      assert.equal(await vscode.commands.executeCommand('ralph.runOnGitHubActions'), undefined);
    } finally {
      prompts.dispose();
    }
    assert.equal(asked.length, 2, 'the command asked');
    assert.equal(scene.github.requests.length, 0, 'no token: the forge heard nothing');

    process.env.GITHUB_TOKEN = FORGE_TOKEN;
    const token = await editorToken(true, decline as Prompts)();
    assert.deepEqual(token, { value: FORGE_TOKEN, source: 'the environment variable GITHUB_TOKEN' });
    assert.equal(asked.length, 2, 'with GITHUB_TOKEN nothing is asked');
  });

  it('dispatches the ready task and follows it in the extension host: queued, running, PR open, in the merge queue, merged; then its dependent', async () => {
    await writeTasks([
      { id: 'FG-1', title: 'Add the greeting', prompt: 'write greet.txt' },
      { id: 'FG-2', title: 'Add the farewell', prompt: 'write bye.txt', dependsOn: ['FG-1'] },
    ]);
    publish('FG-2');
    await vscode.commands.executeCommand('ralph.openPanel');
    const ids = await vscode.commands.executeCommand('ralph.runOnGitHubActions');
    assert.deepEqual(ids, ['FG-1'], 'FG-2 waits for FG-1 to merge');
    const [first] = scene.dispatches;
    assert.deepEqual([first.run.inputs.tasks, first.run.inputs.target, first.run.head_branch], ['["FG-1"]', 'main', 'main']);
    assert.ok(
      scene.github.requests.every((r) => r.authorization === `token ${FORGE_TOKEN}`),
      'every call carries the token from GITHUB_TOKEN',
    );

    await waitFor('FG-1 queued in the tree', () => description(api, 'FG-1') === 'queued on GitHub Actions');
    const item = treeItem(api, 'FG-1')!;
    assert.equal((item.iconPath as vscode.ThemeIcon).id, 'cloud-upload');
    assert.deepEqual(item.command && { command: item.command.command, arguments: item.command.arguments }, {
      command: 'ralph.openRemote',
      arguments: ['FG-1'],
    });
    assert.match(
      tooltipText(api, 'FG-1'),
      /\[Open the job on GitHub Actions\]\(https:\/\/github\.example\/acme\/widgets\/actions\/runs\/\d+\)/,
    );
    assert.equal(description(api, 'FG-2'), 'waiting on FG-1');
    // the panel adopts the task though it never ran here, and the webview shows it
    await waitFor('FG-1 in the panel', () => panelTask(api, 'FG-1')?.remote?.state === 'queued');
    await panelInSync(api, 'the webview with FG-1 queued');

    scene.github.setJob('FG-1', 'in_progress');
    await waitFor('FG-1 running', () => description(api, 'FG-1') === 'running on GitHub Actions');
    assert.equal((treeItem(api, 'FG-1')!.iconPath as vscode.ThemeIcon).id, 'sync~spin');
    assert.match(
      tooltipText(api, 'FG-1'),
      /\[Open the job on GitHub Actions\]\(https:\/\/github\.example\/acme\/widgets\/actions\/runs\/\d+\/job\/\d+\)/,
    );

    await scene.finishJob('FG-1', 'greet.txt');
    scene.github.setJob('FG-1', 'completed', 'success');
    await waitFor('FG-1 with its pull request open', () => description(api, 'FG-1') === 'PR open');
    assert.match(
      tooltipText(api, 'FG-1'),
      /\*\*GitHub:\*\* auto-merge on: waiting for the required checks[\s\S]*\[Open pull request #1\]\(https:\/\/github\.example\/acme\/widgets\/pull\/1\)/,
    );
    assert.equal(panelTask(api, 'FG-1')?.remote?.url, 'https://github.example/acme/widgets/pull/1');

    scene.github.enqueue('ralph/FG-1');
    await waitFor('FG-1 in the merge queue', () => description(api, 'FG-1') === 'in merge queue · position 1, awaiting checks');
    assert.equal((treeItem(api, 'FG-1')!.iconPath as vscode.ThemeIcon).id, 'git-pull-request-done');
    await waitFor('the panel with FG-1 in the queue', () => panelTask(api, 'FG-1')?.remote?.state === 'in-queue');
    await panelInSync(api, 'the webview with FG-1 in the merge queue');

    await scene.github.merge('ralph/FG-1');
    await waitFor(
      'FG-1 merged and done',
      () => treeItem(api, 'FG-1')?.contextValue === 'task.done' && description(api, 'FG-1') === 'merged',
    );
    assert.equal((treeItem(api, 'FG-1')!.iconPath as vscode.ThemeIcon).id, 'git-merge');
    await waitFor('FG-2 dispatched after the merge', () => scene.dispatches.length === 2);
    assert.equal(scene.dispatches[1].run.inputs.tasks, '["FG-2"]');
    assert.ok(scene.dispatches[1].targetFiles.includes('greet.txt'), 'the dependent starts from a tip with its dependency');
    await waitFor('FG-2 queued in the tree', () => description(api, 'FG-2') === 'queued on GitHub Actions');
    await waitFor(
      'the panel with FG-1 merged',
      () => panelTask(api, 'FG-1')?.status === 'done' && panelTask(api, 'FG-1')?.remote?.state === 'merged',
    );
    await panelInSync(api, 'the webview with FG-1 merged');
  });

  it("a failed job: the badge says so and links to the job; Retry on GitHub Actions from the tree's menu dispatches it again, and it lands", async () => {
    scene.github.setJob('FG-2', 'in_progress');
    scene.github.setJob('FG-2', 'completed', 'failure');
    await waitFor(
      'FG-2 failed',
      () => treeItem(api, 'FG-2')?.contextValue === 'task.failed' && description(api, 'FG-2') === 'failed on GitHub Actions',
    );
    assert.equal((treeItem(api, 'FG-2')!.iconPath as vscode.ThemeIcon).id, 'error');
    assert.match(
      tooltipText(api, 'FG-2'),
      /\*\*GitHub:\*\* the job ended failure[\s\S]*\[Open the job on GitHub Actions\]\(https:\/\/github\.example\/acme\/widgets\/actions\/runs\/\d+\/job\/\d+\)/,
    );
    await waitFor('the panel with FG-2 failed', () => panelTask(api, 'FG-2')?.remote?.state === 'failed');
    await panelInSync(api, 'the webview with FG-2 failed');
    const manifest = JSON.parse(
      await fs.readFile(path.join(vscode.extensions.getExtension(EXTENSION_ID)!.extensionPath, 'package.json'), 'utf8'),
    );
    const retry = manifest.contributes.menus['view/item/context'].find(
      (m: { command: string }) => m.command === 'ralph.runOnGitHubActions',
    );
    assert.ok(
      new RegExp(/viewItem =~ \/(.+?)\/(?:\s|$)/.exec(retry.when)![1]).test('task.failed'),
      "the failed task's menu offers Run Tasks on GitHub Actions",
    );

    // Open on GitHub from the palette offers the tasks that ran there
    const offered: string[][] = [];
    const prompts = api.setPrompts({ pickTask: async (tasks) => (offered.push(tasks.map((t) => t.id)), undefined) });
    try {
      assert.equal(await vscode.commands.executeCommand('ralph.openRemote'), false);
    } finally {
      prompts.dispose();
    }
    assert.deepEqual(offered, [['FG-1', 'FG-2']]);

    // the menu passes the tree's node
    assert.deepEqual(await vscode.commands.executeCommand('ralph.runOnGitHubActions', taskNode(api, 'FG-2')), ['FG-2']);
    await waitFor(
      'FG-2 queued again',
      () => description(api, 'FG-2') === 'queued on GitHub Actions' && treeItem(api, 'FG-2')?.contextValue === 'task.in_progress',
    );
    assert.equal(scene.dispatches.length, 3);
    scene.github.setJob('FG-2', 'in_progress');
    await scene.finishJob('FG-2', 'bye.txt');
    scene.github.setJob('FG-2', 'completed', 'success');
    await waitFor('FG-2 with its pull request open', () => description(api, 'FG-2') === 'PR open');
    scene.github.enqueue('ralph/FG-2');
    await scene.github.merge('ralph/FG-2');
    await waitFor(
      'FG-2 merged and done',
      () => treeItem(api, 'FG-2')?.contextValue === 'task.done' && description(api, 'FG-2') === 'merged',
    );
    assert.equal(scene.git(scene.origin, 'show', 'main:bye.txt'), 'FG-2');
    // nothing left on the forge: the command says so rather than dispatching
    assert.deepEqual(await vscode.commands.executeCommand('ralph.runOnGitHubActions'), []);
    assert.equal(scene.dispatches.length, 3);
  });

  /** Writes the task store (todo tasks) and lets the tree read it. */
  async function writeTasks(tasks: { id: string; title: string; prompt: string; dependsOn?: string[] }[]): Promise<void> {
    const now = new Date().toISOString();
    const full = tasks.map((t) => ({
      promise: `${t.prompt} is done`,
      status: 'todo',
      iterations: 0,
      createdAt: now,
      updatedAt: now,
      ...t,
    }));
    await fs.writeFile(path.join(workspace(), '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: full }, null, 2));
    await api.tree!.refresh();
  }

  /** Commits the task store and the workflows and pushes main: the jobs clone it. */
  function publish(message: string): void {
    git('add', '.ralph/tasks.json', '.github');
    git('commit', '-q', '--no-verify', '-m', message);
    git('push', '-q', 'origin', 'main');
  }
});
