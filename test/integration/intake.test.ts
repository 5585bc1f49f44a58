/**
 * Plan Tasks from Document and Import GitHub Issues in the real extension host: the planning
 * model is the scripted OpenAI-compatible server (through the real `openai` client), GitHub
 * the scripted REST API (through the real octokit); the plan review is driven through the same
 * door its webview uses (`receive`), after the webview itself said `ready`.
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import type { PlanReviewState } from '../../src/protocol/planReviewProtocol';
import type { Task } from '../../src/core/tasks/schema';
import { backlog, MILESTONES, OWNER, REPO, TOKEN } from '../fixtures/intake/githubBacklog';
import { planReply, PRD, proposed, SHOP_PLAN } from '../fixtures/intake/planDocs';
import { type ScriptedGitHub, startScriptedGitHub } from '../fixtures/scriptedGitHub';
import { type ScriptedServer, startScriptedServer } from '../fixtures/scriptedServer';
import { waitFor } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const KEY_ENV = 'RALPH_INTEGRATION_KEY';

describe('intake: plans from documents, tasks from GitHub issues', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const tasksFile = () => path.join(workspace(), '.ralph', 'tasks.json');
  let api: RalphExtensionApi;
  let server: ScriptedServer | undefined;
  let github: ScriptedGitHub | undefined;
  let originalConfig: string;
  const prompts: vscode.Disposable[] = [];

  const storeTasks = async (): Promise<Task[]> => (JSON.parse(await fs.readFile(tasksFile(), 'utf8')) as { tasks: Task[] }).tasks;

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID)!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    originalConfig = await fs.readFile(path.join(workspace(), '.ralph', 'config.json'), 'utf8');
  });
  after(async () => {
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), originalConfig);
  });
  beforeEach(async () => {
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
  });
  afterEach(async () => {
    for (const d of prompts.splice(0)) d.dispose();
    await server?.close();
    await github?.close();
    server = undefined;
    github = undefined;
    delete process.env.GITHUB_TOKEN;
    delete process.env.GITHUB_API_URL;
    await fs.writeFile(tasksFile(), JSON.stringify({ version: 1, tasks: [] }, null, 2));
  });

  async function configureModel(): Promise<ScriptedServer> {
    server = await startScriptedServer();
    process.env[KEY_ENV] = 'sk-integration-intake';
    const config = {
      llm: {
        baseUrl: server.url,
        apiKeyEnv: KEY_ENV,
        models: ['scripted-model'],
        maxRetries: 0,
        prices: { 'scripted-model': { input: 1, output: 4 } },
      },
      loop: { maxParallel: 1 },
    };
    await fs.writeFile(path.join(workspace(), '.ralph', 'config.json'), JSON.stringify(config, null, 2));
    return server;
  }

  it('Plan Tasks from Document: a review of the proposal; edits are kept, a cycle is refused with names, nothing is saved before Accept', async () => {
    const model = await configureModel();
    await fs.mkdir(path.join(workspace(), 'docs'), { recursive: true });
    await fs.writeFile(path.join(workspace(), 'docs', 'prd.md'), PRD);
    model.push(
      planReply([
        ...SHOP_PLAN,
        proposed('docs', { title: 'Document sign-in', type: 'docs', section: 'Sign-in', dependsOn: ['login-form'] }),
      ]),
    );

    await vscode.commands.executeCommand('ralph.planFromDocument', vscode.Uri.file(path.join(workspace(), 'docs', 'prd.md')));
    const review = api.planReviews!.current!;
    assert.ok(review, 'the review opened');
    // the webview loaded its script and said ready: the handshake of the real page
    await waitFor('the review webview to say ready', () => review.stats.ready > 0);
    assert.deepEqual(
      review.state.tasks.map((t) => t.title),
      ['Sign-in form', 'Account lockout', 'Persistent cart', 'Document sign-in'],
    );
    assert.equal(review.state.status, 'reviewing');
    assert.deepEqual(await storeTasks(), [], 'nothing is saved while the person reviews');
    assert.equal(model.requests[0].headers.authorization, 'Bearer sk-integration-intake');

    const states: PlanReviewState[] = [];
    const listening = review.onDidChange((s) => states.push(s));
    try {
      // a webview message that does not match the protocol is rejected, never acted on
      assert.equal(await review.receive({ type: 'edit', key: 'cart', fields: { complexity: 99 } }), false);
      assert.equal(
        await review.receive({
          type: 'edit',
          key: 'cart',
          fields: { title: 'Cart that survives a reload', promise: 'reload keeps the cart' },
        }),
        true,
      );
      assert.equal(review.state.tasks.find((t) => t.key === 'cart')?.type, 'feature', 'an edit changes only the fields it names');
      await review.receive({ type: 'move', key: 'cart', to: 0 });
      await review.receive({ type: 'merge', into: 'login-form', other: 'docs' });
      // the person makes a cycle: Accept is refused, naming the tasks
      await review.receive({ type: 'edit', key: 'login-form', fields: { dependsOn: ['lockout'] } });
      assert.match(
        review.state.problems.join(),
        /dependency cycle "Sign-in form \+ Document sign-in" → "Account lockout" → "Sign-in form \+ Document sign-in"/,
      );
      await review.receive({ type: 'accept' });
      assert.equal(review.state.status, 'reviewing');
      assert.match(review.state.error ?? '', /^Not saved: dependency cycle/);
      assert.deepEqual(await storeTasks(), []);
      await review.receive({ type: 'edit', key: 'login-form', fields: { dependsOn: [] } });
      await review.receive({ type: 'drop', key: 'lockout' });
      await review.receive({ type: 'accept' });
    } finally {
      listening.dispose();
    }
    assert.equal(review.state.status, 'accepted', review.state.error);
    assert.ok(states.some((s) => s.status === 'saving'));
    const saved = await storeTasks();
    assert.deepEqual(
      saved.map((t) => [t.id, t.title, t.source]),
      [
        ['T-001', 'Cart that survives a reload', 'docs/prd.md#cart'],
        ['T-002', 'Sign-in form + Document sign-in', 'docs/prd.md#sign-in'],
      ],
    );
    assert.equal(saved[0].promise, 'reload keeps the cart');
    assert.equal(saved[1].check, 'npm test -- --grep login');
    const report = await fs.readFile(path.join(workspace(), '.ralph', 'reports', 'plans', `${review.runId}.md`), 'utf8');
    assert.match(report, /## Cost receipt/);
    assert.match(report, /## Accepted .*\n- T-001: Cart that survives a reload\n- T-002: Sign-in form \+ Document sign-in/);
    await waitFor('the tree to show the accepted tasks', () => api.tree!.snapshot.length === 2);
  });

  it('Import GitHub Issues: shows what it will do, asks for a missing promise, imports and re-imports without duplicates', async () => {
    github = await startScriptedGitHub({
      owner: OWNER,
      repo: REPO,
      issues: backlog(),
      milestones: MILESTONES,
      token: TOKEN,
      maxPerPage: 3,
    });
    process.env.GITHUB_TOKEN = TOKEN;
    process.env.GITHUB_API_URL = github.url;
    const confirmations: string[] = [];
    const asked: string[] = [];
    prompts.push(
      api.setPrompts({
        confirm: async (message, detail) => (confirmations.push(`${message}\n${detail}`), true),
        input: async (options) => (
          asked.push(options.title ?? ''),
          options.title?.includes('#3') ? 'checkout passes 50 runs in a row' : undefined
        ),
      }),
    );
    const result = (await vscode.commands.executeCommand('ralph.importGithubIssues', { repo: 'acme/shop', labels: ['ralph'] })) as {
      added: Task[];
    };
    assert.equal(result.added.length, 7);
    assert.match(confirmations[0], /^Import from acme\/shop\?\n10 issues: 7 to add, 0 to update, 0 unchanged, 3 flagged/);
    assert.deepEqual(
      asked,
      ['Ralph: #3 Investigate flaky checkout', 'Ralph: #12 Dark mode'],
      'asked once per issue, though it read them twice',
    );
    const tasks = await storeTasks();
    assert.equal(tasks.find((t) => t.id === 'GH-3')?.promise, 'checkout passes 50 runs in a row');
    assert.deepEqual(tasks.find((t) => t.id === 'GH-8')?.dependsOn, ['GH-3']);
    assert.equal(tasks.find((t) => t.id === 'GH-2')?.source, 'https://github.com/acme/shop/issues/2');
    assert.ok(
      github.requests.every((r) => r.auth === 'ok'),
      'the token went in the Authorization header',
    );
    assert.ok(!(await fs.readFile(tasksFile(), 'utf8')).includes(TOKEN));

    github.setIssue(1, { title: 'Sign-in form, again' });
    confirmations.length = 0;
    const again = (await vscode.commands.executeCommand('ralph.importGithubIssues', { repo: 'acme/shop', labels: ['ralph'] })) as {
      updated: Task[];
      added: Task[];
    };
    assert.deepEqual([again.added.length, again.updated.map((t) => t.id)], [0, ['GH-1']]);
    assert.equal((await storeTasks()).length, 7, 'a re-import never duplicates');
    await waitFor('the tree to show the imported tasks', () => api.tree!.snapshot.length === 7);
  });
});
