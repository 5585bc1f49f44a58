/**
 * End to end in Chromium, parallel agents: three tasks run at once against the scripted model
 * (each in its own worktree); the progress panel's agent tiles and merge-queue view, the tree's
 * queued / checking rows and the status bar's `Ralph 3 agents` / `· 1 queued`, read from the
 * real workbench, with screenshots of the tiles and the queue in a light and a dark theme.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { type CodeServerHost } from '../runner/codeServerHost';
import {
  PARALLEL_KEY_ENV,
  PARALLEL_TASKS,
  type ParallelScenario,
  prepareParallelWorkspace,
  startParallelScenario,
} from './parallelScenario';
import { until, type Workbench } from './workbench';
import { e2eTeardown, e2eWorkspace, openE2eEditor } from './suite';

describe('Parallel agents in the browser (code-server + Chromium, packaged .vsix)', function () {
  this.timeout(240_000);
  let scenario: ParallelScenario;
  let host: CodeServerHost;
  let context: BrowserContext;
  let page: Page;
  let wb: Workbench;
  let workspace: string;
  /** In the workspace (`.ralph/runs`, ignored by git), where the sandboxed gate sees it (see parallelScenario.ts). */
  let RELEASE = '';
  const consoleErrors: string[] = [];
  const screenshots: string[] = [];

  before(async () => {
    scenario = await startParallelScenario();
    workspace = e2eWorkspace();
    RELEASE = path.join(workspace, '.ralph', 'runs', `release-merge-check-e2e-${process.pid}`);
    fs.mkdirSync(path.dirname(RELEASE), { recursive: true });
    fs.rmSync(RELEASE, { force: true });
    prepareParallelWorkspace(workspace, scenario.server.url, RELEASE);
    ({ host, context, page, wb } = await openE2eEditor(workspace, consoleErrors, { env: { [PARALLEL_KEY_ENV]: 'sk-e2e-parallel' } }));
  });
  e2eTeardown('parallel-', () => ({ editor: { host, context, page, wb }, workspace, screenshots }), {
    beforeClose: () => {
      scenario?.releaseAll();
      if (RELEASE) fs.writeFileSync(RELEASE, 'go\n');
    },
    afterClose: async () => {
      await scenario?.server.close();
      if (RELEASE) fs.rmSync(RELEASE, { force: true });
    },
  });

  const toggleTheme = (to: 'light' | 'dark') => wb.toggleTheme(to, { panel: true });

  /** The tiles and the queue (the top of the panel), and the tree. */
  async function shoot(moment: string, theme: 'light' | 'dark'): Promise<void> {
    const tiles = wb.panel().locator('[data-testid="agents"]');
    if ((await tiles.count()) > 0) screenshots.push(await wb.screenshot(`parallel-tiles-${moment}-${theme}`, tiles));
    const queue = wb.panel().locator('[data-testid="merge-queue"]');
    if ((await queue.count()) > 0) screenshots.push(await wb.screenshot(`parallel-queue-${moment}-${theme}`, queue));
    screenshots.push(await wb.screenshot(`parallel-panel-${moment}-${theme}`, wb.editorArea()));
    screenshots.push(await wb.screenshot(`parallel-tree-${moment}-${theme}`, wb.sideBar()));
    // the tree alone, wide enough for its descriptions, without the empty side bar below it
    await wb.dragSideBarEdge(180);
    const rows = wb.sideBar().locator('.monaco-list-row');
    screenshots.push(await wb.screenshotDownTo(`parallel-tree-cropped-${moment}-${theme}`, wb.sideBar(), rows));
    await wb.dragSideBarEdge(-180);
  }

  it('starts three agents at once: a tile each in the panel, the status bar counts them', async () => {
    await wb.openRalphView();
    await wb.treeRow(PARALLEL_TASKS[0].title).waitFor({ timeout: 60_000 });
    await wb.runCommand('Ralph: Start Autopilot');
    await scenario.allThere;
    await until('the status bar counting three agents', async () => /Ralph 3 agents/.test(await wb.statusText()), 60_000);
    await wb.runCommand('Ralph: Open Progress Panel');
    const tiles = wb.panel().locator('[data-testid="agent-tile"]');
    await until('three tiles at 50%', async () => (await tiles.count()) === 3 && (await wb.panel().getByText('50%').count()) >= 3, 60_000);
    for (const task of PARALLEL_TASKS) {
      const tile = wb.panel().locator(`[data-testid="agent-tile"][data-task="${task.id}"]`);
      const text = await tile.innerText();
      assert.match(text, new RegExp(`${task.id}[\\s\\S]*${task.title}`));
      assert.match(text, /iteration 1\/5/);
      assert.match(text, /PROGRESS:50/);
      assert.match(text, /scripted-model/);
      assert.match(text, new RegExp(`\\.ralph/worktrees/${task.id}`));
      // each holds its agent slot, talking to the model (issue 34: a task on its gates says so instead)
      assert.equal(await tile.getAttribute('data-state'), 'model');
      assert.doesNotMatch(text, /gates running|waiting for an agent slot/);
    }
    const labels = await wb.treeLabels();
    assert.ok(
      labels.some((l) => /In progress \(3\)/.test(l)),
      labels.join(' | '),
    );
  });

  it('selecting a tile shows that task below it', async () => {
    const second = wb.panel().locator(`[data-testid="agent-tile"][data-task="${PARALLEL_TASKS[1].id}"]`);
    await second.click();
    await until('the second task shown', async () => (await wb.panel().locator('h1').innerText()).includes(PARALLEL_TASKS[1].title));
    assert.equal(await second.getAttribute('aria-pressed'), 'true');
    await until('its timeline', async () => (await wb.panel().locator('[data-testid="timeline-row"]').count()) === 1);
  });

  it('one task through the merge queue: a queue entry while the merged check runs, the tree and status bar say so', async () => {
    scenario.release(PARALLEL_TASKS[0].id);
    const entry = wb.panel().locator(`[data-testid="queue-entry"][data-task="${PARALLEL_TASKS[0].id}"]`);
    await until('the first task checking in the queue', async () => (await entry.getAttribute('data-state')) === 'checking', 90_000);
    assert.match(await entry.innerText(), /checking[\s\S]*T-001 · Add the login form/);
    await until('two tiles left', async () => (await wb.panel().locator('[data-testid="agent-tile"]').count()) === 2);
    await until('the status bar with the queue', async () => /Ralph 2 agents · 1 queued/.test(await wb.statusText()));
    await until('the tree row checking', async () =>
      /merge check running/.test((await wb.treeRow(PARALLEL_TASKS[0].title).getAttribute('aria-label')) ?? ''),
    );
    await wb.hideBottomPanel();
    await shoot('checking', 'light');
    await toggleTheme('dark');
    await shoot('checking', 'dark');
  });

  it('the merged check passes: the entry shows merged with its gates, the task is done', async () => {
    fs.writeFileSync(RELEASE, 'go\n');
    const entry = wb.panel().locator(`[data-testid="queue-entry"][data-task="${PARALLEL_TASKS[0].id}"]`);
    await until('merged', async () => (await entry.getAttribute('data-state')) === 'merged', 90_000);
    assert.match(await entry.locator('[data-testid="queue-gates"]').innerText(), /unit[\s\S]*4\/4 tests passing/);
    await until('the task under Done', async () => (await wb.treeLabels()).some((l) => /Done \(1\)/.test(l)), 60_000);
    // the first task's own card: its gates were the merged check
    await entry.locator('.queue-task').click();
    await until('its gate label', async () =>
      /Merged check on main/.test(await wb.panel().locator('[data-testid="gates-label"]').innerText()),
    );
    await shoot('merged', 'dark');
  });

  it('the rest lands: every entry merged, no tile left, the status bar idle', async () => {
    scenario.releaseAll();
    const entries = wb.panel().locator('[data-testid="queue-entry"][data-state="merged"]');
    await until('three merged entries', async () => (await entries.count()) === 3, 120_000);
    await until('no tiles', async () => (await wb.panel().locator('[data-testid="agent-tile"]').count()) === 0);
    await until('the task tree all done', async () => (await wb.treeLabels()).some((l) => /Done \(3\)/.test(l)), 60_000);
    await until('the status bar idle', async () => !/agents|queued/.test(await wb.statusText()));
    for (const task of PARALLEL_TASKS) assert.equal(fs.readFileSync(path.join(workspace, task.file), 'utf8'), `${task.title}\n`);
    await wb.hideBottomPanel();
    await shoot('done', 'dark');
    await toggleTheme('light');
    await shoot('done', 'light');
  });

  it('broke no Content Security Policy rule and threw no uncaught error', () => {
    assert.deepEqual(
      consoleErrors.filter((e) => !/extensionHost|marketplace|gallery/i.test(e)),
      [],
    );
  });
});
