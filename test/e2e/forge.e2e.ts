/**
 * End to end in Chromium, tasks on GitHub Actions: the packaged extension in code-server against
 * the scripted GitHub API and a bare origin. First without any GitHub token (this editor has no
 * GitHub session offline, and code-server keeps GITHUB_TOKEN to itself): Ralph's question, the
 * person's No, and a sign-in that cannot complete, each with what to do. Then with GH_TOKEN: Run
 * Tasks on GitHub Actions from the palette, the forge moving six tasks to every remote state at
 * once, the tree's badges and the panel's header badge (light and dark screenshots), their links
 * opening the job or pull request, after a window reload the editor following the tasks again,
 * and started without a token, saying so.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { FORGE_TOKEN, type ForgeScene, startForgeScene } from '../fixtures/forgeScene';
import { type CodeServerHost } from '../runner/codeServerHost';
import { until, type Workbench } from './workbench';
import { e2eTeardown, e2eWorkspace, openE2eEditor } from './suite';

const TASKS = [
  { id: 'W-1', title: 'Add the login form', file: 'login.txt' },
  { id: 'W-2', title: 'Signup endpoint', file: 'signup.txt' },
  { id: 'W-3', title: 'Password reset mail', file: 'reset.txt' },
  { id: 'W-4', title: 'Rate limiter', file: 'limiter.txt' },
  { id: 'W-5', title: 'Audit log', file: 'audit.txt' },
  { id: 'W-6', title: 'Session timeout', file: 'session.txt', dependsOn: ['W-1'] },
] as const;

describe('Tasks on GitHub Actions in the browser (code-server + Chromium, packaged .vsix)', function () {
  this.timeout(240_000);
  let scene: ForgeScene;
  let host: CodeServerHost | undefined;
  let context: BrowserContext | undefined;
  let page: Page;
  let wb: Workbench;
  let workspace: string;
  const consoleErrors: string[] = [];
  const screenshots: string[] = [];
  /** Pages the workbench opened (an external link opened without asking). */
  let popups = 0;

  /** code-server with the given token environment, the workspace open in a new page. */
  async function openEditor(env: Record<string, string>): Promise<void> {
    await context?.close().catch(() => undefined);
    await host?.dispose();
    ({ host, context, page, wb } = await openE2eEditor(workspace, consoleErrors, { env }));
    context.on('page', () => popups++);
    await wb.openRalphView();
    await wb.treeRow(TASKS[0].title).waitFor({ timeout: 60_000 });
  }

  const dialog = () => page.locator('.monaco-dialog-box');
  /** The center lists notifications in a virtual list: older ones scrolled away are not in the page. */
  const clearNotifications = async () => {
    await wb.closeNotifications();
    await wb.runCommand('Notifications: Clear All Notifications');
  };
  /** What a click on a link asks: VS Code's question before it opens an external site, with the address; answered Cancel. */
  const opened = async (click: () => Promise<void>): Promise<string> => {
    await click();
    await dialog().waitFor({ timeout: 30_000 });
    const text = (await dialog().innerText()).trim();
    await dialog().locator('.monaco-button', { hasText: 'Cancel' }).click();
    await dialog().waitFor({ state: 'detached', timeout: 20_000 });
    return `dialog: ${text}`;
  };
  /** Drags the side bar's edge so the tree's descriptions show whole. */
  const widenSideBar = async () => {
    const bar = (await wb.sideBar().boundingBox())!;
    await page.mouse.move(bar.x + bar.width + 1, bar.y + bar.height / 2);
    await page.mouse.down();
    await page.mouse.move(bar.x + bar.width + 200, bar.y + bar.height / 2, { steps: 8 });
    await page.mouse.up();
  };
  const row = (id: string) => wb.treeRow(TASKS.find((t) => t.id === id)!.title);
  const rowLabel = async (id: string) => (await row(id).getAttribute('aria-label')) ?? '';

  before(async () => {
    workspace = e2eWorkspace();
    scene = await startForgeScene(workspace);
    prepareForgeWorkspace(workspace, scene);
  });

  e2eTeardown('forge-', () => ({ editor: { host, context, page, wb }, workspace, screenshots }), { afterClose: () => scene?.close() });

  it('without a GitHub token Ralph asks to sign in; declined, it says what to do and dispatches nothing', async () => {
    const ghConfig = fs.mkdtempSync(path.join(path.dirname(workspace), 'gh-'));
    // code-server takes GITHUB_TOKEN for itself and removes it from the extension host's environment
    await openEditor({ GITHUB_TOKEN: FORGE_TOKEN, GH_TOKEN: '', GH_CONFIG_DIR: ghConfig });
    await wb.runCommand('Ralph: Run Tasks on GitHub Actions');
    await dialog().waitFor({ timeout: 30_000 });
    const text = await dialog().innerText();
    assert.match(text, /Ralph needs a GitHub token to run tasks on GitHub Actions\./);
    assert.match(
      text,
      /no GITHUB_TOKEN, GH_TOKEN or gh login[\s\S]*set GH_TOKEN or GITHUB_TOKEN in the environment the editor starts from[\s\S]*code-server keeps GITHUB_TOKEN to itself, so there use GH_TOKEN[\s\S]*gh auth login/,
    );
    screenshots.push(await wb.screenshot('forge-no-token-question-light', dialog()));
    await dialog().locator('.monaco-button', { hasText: 'Cancel' }).click();
    const error = await wb.notification(/no GitHub token/);
    assert.match(await error.innerText(), /Ralph: no GitHub token: sign in to GitHub in VS Code[\s\S]*GITHUB_TOKEN[\s\S]*gh auth login/);
    screenshots.push(await wb.screenshot('forge-no-token-error-light', page.locator('.notifications-center')));
    await clearNotifications();
    assert.equal(scene.github.requests.length, 0, 'the forge heard nothing');
  });

  it('Sign In to GitHub where GitHub cannot be reached: refused, or allowed and never answered, Ralph says it did not complete and what to do', async () => {
    const signIn = async () => {
      await wb.runCommand('Ralph: Run Tasks on GitHub Actions');
      await dialog().waitFor({ timeout: 30_000 });
      await dialog().locator('.monaco-button', { hasText: 'Sign In to GitHub' }).click();
      // VS Code's own consent for the extension's sign-in
      await until(
        "VS Code's consent",
        async () => /The extension 'Ralph Loop' wants to sign in using GitHub/.test(await dialog().innerText()),
        60_000,
      );
    };
    await signIn();
    screenshots.push(await wb.screenshot('forge-sign-in-consent-light', dialog()));
    await dialog().locator('.monaco-button', { hasText: 'Cancel' }).click();
    const refused = await wb.notification(/GitHub sign-in did not complete/);
    assert.match(
      await refused.innerText(),
      /Ralph: the GitHub sign-in did not complete \(User did not consent to login\.\): sign in to GitHub in VS Code[\s\S]*GH_TOKEN[\s\S]*gh auth login/,
    );
    await clearNotifications();

    // allowed: offline, VS Code's GitHub sign-in never answers; Ralph says it waits, and Cancel ends the wait
    await signIn();
    await dialog().locator('.monaco-button', { hasText: 'Allow' }).click();
    const waiting = await wb.notification(/Ralph: waiting for the GitHub sign-in/);
    screenshots.push(await wb.screenshot('forge-sign-in-waiting-light', page.locator('.notifications-center')));
    await waiting.locator('.monaco-button', { hasText: 'Cancel' }).click();
    const cancelled = await wb.notification(/GitHub sign-in did not complete \(cancelled\)/);
    assert.match(
      await cancelled.innerText(),
      /Ralph: the GitHub sign-in did not complete \(cancelled\): sign in to GitHub in VS Code[\s\S]*GH_TOKEN[\s\S]*gh auth login/,
    );
    screenshots.push(await wb.screenshot('forge-sign-in-cancelled-light', page.locator('.notifications-center')));
    await clearNotifications();
    assert.equal(scene.github.requests.length, 0);
  });

  it('with GH_TOKEN: Run Tasks on GitHub Actions dispatches the ready tasks; the tree shows every remote state at once (light and dark)', async () => {
    await openEditor({ GITHUB_TOKEN: '', GH_TOKEN: FORGE_TOKEN });
    await wb.runCommand('Ralph: Run Tasks on GitHub Actions');
    await until('the dispatch', async () => scene.dispatches.length === 1);
    assert.deepEqual(JSON.parse(scene.dispatches[0].run.inputs.tasks), ['W-1', 'W-2', 'W-3', 'W-4', 'W-5'], 'W-6 waits for W-1');
    await until('W-1 queued in the tree', async () => /queued on GitHub Actions/.test(await rowLabel('W-1')));

    // the forge moves each task on: W-1 merged (so W-6 is dispatched), W-2 in the queue, W-3 with its PR open, W-4 running, W-5 failed
    for (const t of TASKS.slice(0, 5)) scene.github.setJob(t.id, 'in_progress');
    for (const t of TASKS.slice(0, 3)) await scene.finishJob(t.id, t.file);
    for (const t of TASKS.slice(0, 3)) scene.github.setJob(t.id, 'completed', 'success');
    scene.github.setJob('W-5', 'completed', 'failure');
    scene.github.enqueue('ralph/W-1');
    scene.github.enqueue('ralph/W-2');
    await until('W-1 in the merge queue', async () => /in merge queue/.test(await rowLabel('W-1')));
    await scene.github.merge('ralph/W-1');
    const expected: Record<string, RegExp> = {
      'W-1': /Done, merged$/,
      'W-2': /In progress, in merge queue · position 1, awaiting checks$/,
      'W-3': /In progress, PR open$/,
      'W-4': /In progress, running on GitHub Actions$/,
      'W-5': /Failed, failed on GitHub Actions$/,
      'W-6': /In progress, queued on GitHub Actions$/,
    };
    for (const [id, label] of Object.entries(expected)) await until(`${id}: ${label}`, async () => label.test(await rowLabel(id)), 60_000);
    assert.equal(scene.dispatches.length, 2);
    assert.ok(scene.dispatches[1].targetFiles.includes('login.txt'), 'W-6 starts from a tip with W-1');
    await wb.hideBottomPanel();
    await widenSideBar();
    screenshots.push(await wb.screenshot('forge-tree-light', wb.sideBar()));
  });

  it('the panel: the remote badge in its header links to the pull request or the job', async () => {
    await wb.runCommand('Ralph: Open Progress Panel');
    const picker = wb.panel().locator('select');
    await until('the panel lists the remote tasks', async () => (await picker.locator('option').count()) === TASKS.length + 1, 60_000);
    const badge = wb.panel().locator('[data-testid="remote-badge"]');
    const box = wb.panel().locator('[data-testid="remote-box"]');
    await picker.selectOption('W-3');
    await until("W-3's badge", async () => (await badge.innerText()).trim() === 'PR open');
    assert.match(
      await box.innerText(),
      /ON GITHUB ACTIONS[\s\S]*State\s+PR open[\s\S]*Detail\s+auto-merge on: waiting for the required checks[\s\S]*Link\s+Open the pull request/i,
    );
    assert.equal(await box.locator('[data-testid="remote-link"]').getAttribute('href'), scene.github.pullOf('ralph/W-3')!.html_url);
    // live: the queue takes W-3 while the panel shows it
    scene.github.enqueue('ralph/W-3');
    await until(
      "W-3's badge in the queue",
      async () => /in merge queue · position 2, awaiting checks/.test(await badge.innerText()),
      60_000,
    );
    assert.equal(await badge.getAttribute('href'), scene.github.pullOf('ralph/W-3')!.html_url);
    assert.match(await box.innerText(), /State\s+in merge queue · position 2, awaiting checks/);
    screenshots.push(await wb.screenshot('forge-panel-in-queue-light', wb.editorArea()));
    await picker.selectOption('W-5');
    await until("W-5's badge", async () => /failed on GitHub Actions/.test(await badge.innerText()));
    assert.match((await badge.getAttribute('href')) ?? '', /\/actions\/runs\/\d+\/job\/\d+$/);
    assert.match((await badge.getAttribute('title')) ?? '', /failed on GitHub Actions: the job ended failure/);
    assert.match(await box.innerText(), /Detail\s+the job ended failure[\s\S]*Open the job on GitHub Actions/);
    screenshots.push(await wb.screenshot('forge-panel-failed-light', wb.editorArea()));

    // the badge opens the job, the tree's row the pull request: both through Open on GitHub, VS Code asking once
    const job = await opened(() => badge.click());
    assert.match(
      job,
      /^dialog: [\s\S]*open the external website\?[\s\S]*https:\/\/github\.example\/acme\/widgets\/actions\/runs\/\d+\/job\/\d+$/,
    );
    const pull = await opened(() => row('W-3').click());
    assert.match(pull, /^dialog: [\s\S]*https:\/\/github\.example\/acme\/widgets\/pull\/3$/);
    assert.equal(popups, 0, 'no page opened behind the question');
  });

  it('in the dark theme', async () => {
    await wb.runCommand('Preferences: Toggle between Light/Dark Themes');
    await until('the dark theme', async () => (await page.locator('.monaco-workbench.vs-dark').count()) > 0, 30_000);
    await until('the panel in the dark theme', async () => (await wb.panel().locator('body.vscode-dark').count()) > 0, 30_000);
    screenshots.push(await wb.screenshot('forge-panel-failed-dark', wb.editorArea()));
    await wb.panel().locator('select').selectOption('W-1');
    await until("W-1's badge", async () => /merged/.test(await wb.panel().locator('[data-testid="remote-badge"]').innerText()));
    screenshots.push(await wb.screenshot('forge-panel-merged-dark', wb.editorArea()));
    screenshots.push(await wb.screenshot('forge-tree-dark', wb.sideBar()));
  });

  it('after a window reload the editor follows the tasks on the forge again', async () => {
    await page.reload({ waitUntil: 'domcontentloaded', timeout: 120_000 });
    await wb.ready();
    // the Ralph view comes back open after the reload; opened only if it did not (its icon's state decides, not a time)
    await wb.openRalphView();
    await row('W-4').waitFor({ timeout: 60_000 });
    await scene.finishJob('W-4', 'limiter.txt');
    scene.github.setJob('W-4', 'completed', 'success');
    await until('W-4 with its PR open after the reload', async () => /In progress, PR open$/.test(await rowLabel('W-4')), 90_000);
    screenshots.push(await wb.screenshot('forge-tree-after-reload-dark', wb.sideBar()));
  });

  it('started again without a token, Ralph says it cannot follow the tasks on the forge and offers the sign-in', async () => {
    await openEditor({ GITHUB_TOKEN: '', GH_TOKEN: '', GH_CONFIG_DIR: fs.mkdtempSync(path.join(path.dirname(workspace), 'gh-')) });
    const warning = await wb.notification(/no GitHub token to follow them/);
    const text = await warning.innerText();
    assert.match(
      text,
      /Ralph: W-2, W-3, W-4, W-6 run on GitHub Actions, but there is no GitHub token to follow them: sign in to GitHub in VS Code[\s\S]*GH_TOKEN[\s\S]*gh auth login/,
    );
    assert.match(text, /Sign In and Follow/);
    screenshots.push(await wb.screenshot('forge-not-following-light', page.locator('.notifications-center')));
    await clearNotifications();
  });

  it('broke no Content Security Policy rule and threw no uncaught error', () => {
    assert.deepEqual(
      consoleErrors.filter((e) => !/extensionHost|marketplace|gallery/i.test(e)),
      [],
    );
  });
});

/** The forge's settings, the six tasks and a dispatch workflow committed and pushed to the bare origin. */
function prepareForgeWorkspace(workspace: string, scene: ForgeScene): void {
  fs.mkdirSync(path.join(workspace, '.ralph'), { recursive: true });
  const config = { forge: { repository: 'acme/widgets', apiUrl: scene.github.url, pollSeconds: 0.5 } };
  fs.writeFileSync(path.join(workspace, '.ralph', 'config.json'), `${JSON.stringify(config, null, 2)}\n`);
  const now = new Date().toISOString();
  const tasks = TASKS.map((t, i) => ({
    id: t.id,
    title: t.title,
    prompt: `write ${t.file}`,
    promise: `${t.file} exists`,
    status: 'todo',
    priority: i + 1,
    iterations: 0,
    createdAt: now,
    updatedAt: now,
    ...('dependsOn' in t ? { dependsOn: t.dependsOn } : {}),
  }));
  fs.writeFileSync(path.join(workspace, '.ralph', 'tasks.json'), `${JSON.stringify({ version: 1, tasks }, null, 2)}\n`);
  fs.mkdirSync(path.join(workspace, '.github', 'workflows'), { recursive: true });
  fs.writeFileSync(path.join(workspace, '.github', 'workflows', 'ralph.yml'), 'name: Ralph tasks\non: workflow_dispatch\njobs: {}\n');
  const git = (...args: string[]) => execFileSync('git', args, { cwd: workspace, stdio: 'ignore' });
  git('add', '-A');
  git('commit', '-q', '--no-verify', '-m', 'e2e: tasks for GitHub Actions');
  git('remote', 'add', 'origin', scene.origin);
  git('push', '-q', 'origin', 'main');
}
