/**
 * End to end in Chromium: a person plans tasks from a PRD and reviews them in the plan review
 * (edits a title, drops a task, accepts), then asks `@ralph /status` in the chat view. The
 * planning model is the scripted OpenAI-compatible server; the chat's model the test
 * extension's scripted chat model (code-server's chat without Copilot). Screenshots of both.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, FrameLocator, Page } from 'playwright-core';
import { planReply, PRD, proposed, SHOP_PLAN } from '../fixtures/intake/planDocs';
import { startScriptedServer, type ScriptedServer } from '../fixtures/scriptedServer';
import { startCodeServer, type CodeServerHost } from '../runner/codeServerHost';
import { packLmFixture } from '../runner/lmFixture';
import { until, Workbench } from './workbench';
import { e2eTeardown, e2eWorkspace, VSIX } from './suite';

const KEY_ENV = 'RALPH_E2E_KEY';

describe('intake in the browser: the plan review and @ralph /status', function () {
  this.timeout(240_000);
  let host: CodeServerHost;
  let server: ScriptedServer;
  let context: BrowserContext;
  let page: Page;
  let wb: Workbench;
  let workspace: string;
  const screenshots: string[] = [];
  const consoleErrors: string[] = [];
  const tasks = () =>
    (
      JSON.parse(fs.readFileSync(path.join(workspace, '.ralph', 'tasks.json'), 'utf8')) as {
        tasks: { id: string; title: string; status: string }[];
      }
    ).tasks;

  before(async () => {
    server = await startScriptedServer({
      steps: [
        planReply(
          [...SHOP_PLAN, proposed('docs', { title: 'Document sign-in', type: 'docs', dependsOn: ['login-form'] })],
          'Payments are out of scope, as the PRD says.',
        ),
      ],
    });
    workspace = e2eWorkspace();
    fs.mkdirSync(path.join(workspace, 'docs'), { recursive: true });
    fs.writeFileSync(path.join(workspace, 'docs', 'prd.md'), PRD);
    fs.mkdirSync(path.join(workspace, '.ralph'), { recursive: true });
    fs.writeFileSync(
      path.join(workspace, '.ralph', 'config.json'),
      JSON.stringify(
        { llm: { baseUrl: server.url, apiKeyEnv: KEY_ENV, models: ['scripted-planner'], maxRetries: 0 }, loop: { maxParallel: 1 } },
        null,
        2,
      ),
    );
    const now = new Date().toISOString();
    const seeded = [
      {
        id: 'T-001',
        title: 'Set up the database',
        prompt: 'p',
        promise: 'q',
        status: 'done',
        iterations: 3,
        createdAt: now,
        updatedAt: now,
      },
      {
        id: 'T-002',
        title: 'Pick a session store',
        prompt: 'p',
        promise: 'q',
        status: 'needs_help',
        blockedReason: 'Redis or the database?',
        iterations: 1,
        createdAt: now,
        updatedAt: now,
      },
    ];
    fs.writeFileSync(path.join(workspace, '.ralph', 'tasks.json'), JSON.stringify({ version: 1, tasks: seeded }, null, 2));
    const fixtureVsix = packLmFixture();
    host = await startCodeServer({
      installExtensions: [VSIX, fixtureVsix],
      env: { [KEY_ENV]: 'sk-e2e-intake' },
      userSettings: {
        'workbench.colorTheme': 'Default Light Modern',
        'window.autoDetectColorScheme': false,
        'workbench.tips.enabled': false,
        'git.enabled': false,
        'chat.disableAIFeatures': false,
      },
    });
    fs.rmSync(path.dirname(fixtureVsix), { recursive: true, force: true });
    context = await host.newContext({ viewport: { width: 1440, height: 900 } });
    page = await context.newPage();
    page.on('console', (message) => {
      if (/Refused to|Content Security Policy/i.test(message.text())) consoleErrors.push(message.text());
    });
    wb = new Workbench(page);
    await page.goto(host.workbenchUrl({ folder: workspace }), { waitUntil: 'domcontentloaded', timeout: 120_000 });
    await wb.ready();
  });

  e2eTeardown('intake-', () => ({ editor: { host, context, page, wb }, workspace, screenshots }), { afterClose: () => server?.close() });

  /** The plan review's page (webview iframe → its active frame). */
  const review = (): FrameLocator => page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');

  it('plans docs/prd.md: the review shows the proposal, keeps edits, and saves only on Accept', async () => {
    await wb.openRalphView();
    await wb.runCommand('Ralph: Plan Tasks from Document');
    await wb.answerPick('Plan tasks from which document?', 'docs/prd.md');
    const body = review().locator('body[data-status="reviewing"]');
    await body.waitFor({ timeout: 90_000 });
    await until('four proposed tasks', async () => (await body.getAttribute('data-tasks')) === '4');
    const cards = review().locator('section.task');
    assert.equal(await cards.count(), 4);
    assert.equal(tasks().length, 2, 'nothing is saved while the person reviews');

    // edit a title (the host keeps it), drop a task
    const title = review().locator('section.task[data-key="cart"] .field-title input');
    await title.fill('Cart that survives a reload');
    await title.press('Tab');
    await until(
      'the edited title back from the host',
      async () =>
        (await review().locator('section.task[data-key="cart"] .field-title input').inputValue()) === 'Cart that survives a reload',
    );
    await review().locator('section.task[data-key="docs"] vscode-button', { hasText: 'Drop' }).click();
    await until('three tasks after the drop', async () => (await review().locator('body').getAttribute('data-tasks')) === '3');
    await wb.hideBottomPanel();
    // the person makes a dependency cycle: Accept is refused, the cycle named
    await review()
      .locator('section.task[data-key="login-form"] input[type="checkbox"][aria-label="Sign-in form runs after Account lockout"]')
      .check();
    const problems = review().locator('.problems', { hasText: 'Cannot be accepted yet' });
    await problems.waitFor({ timeout: 20_000 });
    assert.match(await problems.innerText(), /dependency cycle "Sign-in form" → "Account lockout" → "Sign-in form"/);
    assert.equal(
      await review().locator('footer vscode-button[disabled]', { hasText: 'Accept' }).count(),
      1,
      'Accept is disabled while the cycle stands',
    );
    await review()
      .locator('body')
      .evaluate((body) => body.ownerDocument.defaultView?.scrollTo(0, 0));
    screenshots.push(await wb.screenshot('plan-review-cycle', wb.editorArea()));
    await review()
      .locator('section.task[data-key="login-form"] input[type="checkbox"][aria-label="Sign-in form runs after Account lockout"]')
      .uncheck();
    await problems.waitFor({ state: 'detached', timeout: 20_000 });
    await review()
      .locator('body')
      .evaluate((body) => body.ownerDocument.defaultView?.scrollTo(0, 0));
    assert.equal(
      await review().locator('section.task[data-key="cart"] select').first().inputValue(),
      'feature',
      'the edit kept the other fields',
    );
    screenshots.push(await wb.screenshot('plan-review', wb.editorArea()));

    await review().locator('footer vscode-button', { hasText: 'Accept 3 tasks' }).click();
    await review().locator('body[data-status="accepted"]').waitFor({ timeout: 30_000 });
    await until('the accepted tasks in the store', async () => tasks().length === 5);
    assert.deepEqual(
      tasks()
        .slice(2)
        .map((t) => t.title),
      ['Sign-in form', 'Account lockout', 'Cart that survives a reload'],
    );
    await wb.treeRow('Cart that survives a reload').waitFor({ timeout: 30_000 });
    screenshots.push(await wb.screenshot('plan-review-accepted'));
    assert.deepEqual(consoleErrors, []);
    await wb.runCommand('View: Close All Editors');
  });

  it('@ralph /status in the chat view says where the tasks stand', async () => {
    await wb.runCommand('Chat: Open Chat');
    // wide enough for the status table
    await wb.runCommand('Maximize Secondary Side Bar');
    const input = page.locator('.interactive-input-part .monaco-editor').first();
    await input.waitFor({ timeout: 60_000 });
    // code-server's chat without Copilot opens with no model ("Models" offers only a Copilot
    // sign-in) and fails the first request; that request makes it list the editor's other models
    // and pick one. So a first, harmless request — then a new chat for the question itself.
    const send = async (text: string) => {
      await input.click();
      await page.keyboard.type(text);
      await page.keyboard.press('Enter');
    };
    await send('@ralph /review ');
    await page.locator('.interactive-input-part', { hasText: 'Scripted' }).first().waitFor({ timeout: 90_000 });
    await page
      .locator('.interactive-item-container', { hasText: /No task awaits your review|failed|error/i })
      .first()
      .waitFor({ timeout: 60_000 })
      .catch(() => undefined);
    await input.click();
    await page.keyboard.press('Control+L');
    await until('a new, empty chat', async () => (await page.locator('.interactive-item-container').count()) === 0, 30_000);
    const answer = page.locator('.interactive-item-container', { hasText: /Ralph Loop — 5 tasks/ }).last();
    await send('@ralph /status ');
    await answer.waitFor({ timeout: 60_000 });
    // the answer streams in: read it once its last part (the button) is there
    await answer.getByRole('button', { name: 'Open Progress Panel' }).waitFor({ timeout: 60_000 });
    const text = await answer.innerText();
    assert.match(text, /3 to do, 1 done, 1 needs help/);
    assert.match(text, /T-002 asks: Redis or the database\?/);
    assert.match(text, /Ready to run: T-003/);
    await answer.getByRole('button', { name: 'Open Progress Panel' }).waitFor({ timeout: 10_000 });
    await answer.scrollIntoViewIfNeeded();
    screenshots.push(await wb.screenshot('chat-ralph-status'));
    screenshots.push(await wb.screenshot('chat-ralph-status-answer', answer));
    assert.deepEqual(
      tasks().map((t) => t.status),
      ['done', 'needs_help', 'todo', 'todo', 'todo'],
      'asking for the status changes nothing',
    );
  });
});
