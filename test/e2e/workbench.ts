/**
 * A page object for the VS Code workbench served by code-server, driven by playwright in
 * Chromium: the command palette, input boxes, the Ralph view, the status bar, notifications,
 * and the progress panel's webview (two nested iframes).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, FrameLocator, Locator, Page } from 'playwright-core';
import type { CodeServerHost } from '../runner/codeServerHost';
import { waitFor } from '../helpers/waitFor';

export const SCREENSHOTS = path.resolve(__dirname, '..', '..', '..', 'test', 'e2e', 'screenshots');

export class Workbench {
  constructor(readonly page: Page) {}

  async ready(): Promise<void> {
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
    await this.page.locator('.part.activitybar, .activitybar').first().waitFor({ timeout: 60_000 });
    await this.page.locator('.statusbar').waitFor({ timeout: 60_000 });
  }

  /** Runs a command by its palette title, e.g. `Ralph: Add Task`. */
  async runCommand(title: string): Promise<void> {
    await this.dismissQuickInput();
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget .quick-input-box input');
    await input.waitFor({ state: 'visible', timeout: 20_000 });
    await input.fill(`>${title}`);
    const row = this.page.locator('.quick-input-widget .monaco-list-row', { hasText: title }).first();
    await row.waitFor({ timeout: 20_000 });
    await input.press('Enter');
  }

  /** Answers the input box whose title contains `titlePart`. */
  async answerInput(titlePart: string, text: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    await widget.locator('.quick-input-title', { hasText: titlePart }).waitFor({ timeout: 20_000 });
    const input = widget.locator('.quick-input-box input');
    await input.fill(text);
    await input.press('Enter');
  }

  /** After a failed test: a screenshot of the whole workbench and the panel's text in the log. */
  async captureFailure(prefix: string, title: string | undefined): Promise<string> {
    const name = `failure-${prefix}${(title ?? 'test').replace(/[^a-z0-9]+/gi, '-').slice(0, 50)}`;
    const file = await this.screenshot(name).catch(() => `(no screenshot: ${name})`);
    const text = await this.panel()
      .locator('body')
      .innerText({ timeout: 2000 })
      .catch(() => '(no panel)');
    console.log(`--- panel text at the failure ---\n${text.slice(0, 3000)}\n---`);
    return file;
  }

  /** Switches the workbench (and the panel, when one is open) to the light or the dark theme. */
  async toggleTheme(to: 'light' | 'dark', options: { panel?: boolean } = {}): Promise<void> {
    await this.runCommand('Preferences: Toggle between Light/Dark Themes');
    const dark = to === 'dark';
    await until(`the ${to} theme`, async () => (await this.page.locator('.monaco-workbench.vs-dark').count()) > 0 === dark, 30_000);
    if (options.panel)
      await until(`the panel in the ${to} theme`, async () => (await this.panel().locator(`body.vscode-${to}`).count()) > 0, 30_000);
  }

  /** Picks the quick pick item whose label contains `label` (e.g. `Done` in Add Task's settings menu). */
  async pickQuickItem(label: string): Promise<void> {
    const row = this.page.locator('.quick-input-widget .monaco-list-row', { hasText: label }).first();
    await row.waitFor({ timeout: 20_000 });
    await row.click();
  }

  /** Picks the quick-pick row with `label` in the quick pick whose placeholder or title contains `prompt`. */
  async answerPick(prompt: string, label: string): Promise<void> {
    const widget = this.page.locator('.quick-input-widget');
    await widget
      .locator(`.quick-input-box input[placeholder*="${prompt}"], .quick-input-title:has-text("${prompt}")`)
      .first()
      .waitFor({ timeout: 20_000 });
    await widget.locator('.quick-input-box input').fill(label);
    await widget.locator('.monaco-list-row', { hasText: label }).first().waitFor({ timeout: 20_000 });
    await widget.locator('.quick-input-box input').press('Enter');
  }

  async dismissQuickInput(): Promise<void> {
    if (
      await this.page
        .locator('.quick-input-widget')
        .isVisible()
        .catch(() => false)
    )
      await this.page.keyboard.press('Escape');
  }

  async openRalphView(): Promise<void> {
    const item = this.page
      .locator('.activitybar a.action-label[aria-label^="Ralph Loop"], .activitybar li.action-item[aria-label^="Ralph Loop"]')
      .first();
    await item.waitFor({ timeout: 60_000 });
    // a click on the active container's icon closes it: clicked only when Ralph's container is not the active one
    const active = this.page.locator(
      '.activitybar li.action-item.checked[aria-label^="Ralph Loop"], .activitybar li.action-item.checked:has([aria-label^="Ralph Loop"])',
    );
    if ((await active.count()) === 0) await item.click();
    await this.tasksView().waitFor({ timeout: 30_000 });
  }

  /** The Ralph view's pane (its tree or its welcome content). */
  tasksView(): Locator {
    return this.page.locator('.pane', { has: this.page.locator('.pane-header', { hasText: /tasks/i }) }).first();
  }

  /** A tree row by (part of) its accessible label: `<title>, <id>, <status>…`. */
  treeRow(text: string | RegExp): Locator {
    return this.tasksView().locator('.monaco-list-row', { hasText: text }).first();
  }

  async treeLabels(): Promise<string[]> {
    return this.tasksView()
      .locator('.monaco-list-row')
      .evaluateAll((rows) => rows.map((r) => r.getAttribute('aria-label') ?? r.textContent ?? ''));
  }

  statusItem(): Locator {
    return this.page.locator('.statusbar-item', { has: this.page.locator('[aria-label^="Ralph Loop:"]') }).first();
  }

  async statusText(): Promise<string> {
    return (await this.statusItem().innerText()).trim();
  }

  /**
   * A notification in the notification center (opened from the status bar's bell): toasts
   * are not shown in this headless setup, the center lists every notification with its actions.
   */
  async notification(text: string | RegExp): Promise<Locator> {
    const center = this.page.locator('.notifications-center');
    if (!(await center.isVisible().catch(() => false))) await this.page.locator('#status\\.notifications').click();
    const item = center.locator('.notifications-list-container .monaco-list-row', { hasText: text }).first();
    // a hang bound above the product's own (a token lookup may take its 10 s + 10 s before a warning shows)
    await item.waitFor({ timeout: 60_000 });
    return item;
  }

  async closeNotifications(): Promise<void> {
    if (
      await this.page
        .locator('.notifications-center')
        .isVisible()
        .catch(() => false)
    )
      await this.page.locator('#status\\.notifications').click();
  }

  /** Hides the bottom panel (the gate's terminal) so screenshots show the editor area whole. */
  async hideBottomPanel(): Promise<void> {
    if (
      await this.page
        .locator('.part.panel.bottom')
        .isVisible()
        .catch(() => false)
    )
      await this.runCommand('View: Hide Panel');
  }

  /** The progress panel's content document (webview iframe → active frame). */
  panel(): FrameLocator {
    return this.page.frameLocator('iframe.webview.ready').last().frameLocator('iframe#active-frame');
  }

  async panelBody(): Promise<Locator> {
    const body = this.panel().locator('body[data-digest]');
    await body.waitFor({ timeout: 30_000 });
    return body;
  }

  /** The sequence number and digest the webview last applied (it writes them on its body). */
  async panelApplied(): Promise<{ seq: number; digest: string }> {
    const body = await this.panelBody();
    return { seq: Number(await body.getAttribute('data-seq')), digest: (await body.getAttribute('data-digest')) ?? '' };
  }

  async closeActiveEditor(): Promise<void> {
    await this.runCommand('View: Close Editor');
  }

  async screenshot(name: string, target?: Locator): Promise<string> {
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const file = path.join(SCREENSHOTS, `${name}.png`);
    if (target) await target.screenshot({ path: file });
    else await this.page.screenshot({ path: file });
    return file;
  }

  /**
   * A screenshot of `area` cut just below the last of `content` (and `margin` pixels): a side bar
   * without the empty space under its tree. The whole area when `content` shows nothing.
   */
  async screenshotDownTo(name: string, area: Locator, content: Locator, margin = 12): Promise<string> {
    const box = await area.boundingBox();
    const bottoms = await content.evaluateAll((nodes) => nodes.map((node) => node.getBoundingClientRect().bottom));
    if (!box || bottoms.length === 0) return this.screenshot(name, area);
    fs.mkdirSync(SCREENSHOTS, { recursive: true });
    const file = path.join(SCREENSHOTS, `${name}.png`);
    const height = Math.min(box.height, Math.ceil(Math.max(...bottoms) + margin - box.y));
    await this.page.screenshot({ path: file, clip: { x: box.x, y: box.y, width: box.width, height } });
    return file;
  }

  /**
   * Drags the sash between the side bar and the editor area by `dx` pixels (wider side bar for
   * dx > 0), so that a tree's descriptions show whole; the layout is unchanged when no sash is there.
   */
  async dragSideBarEdge(dx: number): Promise<void> {
    const box = await this.sideBar().boundingBox();
    if (!box) return;
    const edge = box.x + box.width;
    const sashes = await this.page
      .locator('.monaco-sash.vertical')
      .evaluateAll((nodes) =>
        nodes.map((node) => node.getBoundingClientRect()).map((r) => ({ x: r.x + r.width / 2, top: r.top, bottom: r.bottom })),
      );
    const sash = sashes.find((s) => Math.abs(s.x - edge) <= 4 && s.top <= box.y + 10 && s.bottom >= box.y + box.height / 2);
    if (!sash) return;
    const y = box.y + box.height / 2;
    await this.page.mouse.move(sash.x, y);
    await this.page.mouse.down();
    await this.page.mouse.move(sash.x + dx, y, { steps: 8 });
    await this.page.mouse.up();
  }

  /** The editor area (where the panel is). */
  editorArea(): Locator {
    return this.page.locator('.part.editor').first();
  }

  sideBar(): Locator {
    return this.page.locator('.part.sidebar').first();
  }
}

/** The user settings every end-to-end suite starts from: a light theme, no tips, no git extension. */
export const E2E_SETTINGS = {
  'workbench.colorTheme': 'Default Light Modern',
  'window.autoDetectColorScheme': false,
  'workbench.tips.enabled': false,
  'git.enabled': false,
};

/** Polls until `probe` gives a value (not a timer: the condition decides, the timeout only bounds it); a probe that throws while the page loads is tried again. */
export function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  return waitFor(what, probe, { timeoutMs, intervalMs: 200, tolerateErrors: true });
}

/**
 * A browser page on the host's workbench with `workspace` open, ready: its console's CSP and
 * uncaught errors are collected into `consoleErrors` (each spec asserts there are none).
 */
export async function openWorkbench(
  host: CodeServerHost,
  workspace: string,
  consoleErrors: string[],
): Promise<{ context: BrowserContext; page: Page; wb: Workbench }> {
  const context = await host.newContext({ viewport: { width: 1440, height: 900 } });
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Refused to|Content Security Policy|Uncaught/i.test(message.text())) consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`pageerror: ${error.message}`));
  const wb = new Workbench(page);
  await page.goto(host.workbenchUrl({ folder: workspace }), { waitUntil: 'domcontentloaded', timeout: 120_000 });
  await wb.ready();
  return { context, page, wb };
}
