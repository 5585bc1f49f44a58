/**
 * End to end in Chromium: a person with no API key picks one of the editor's own chat models
 * through *Ralph: Select Model* and runs a task on it. The editor's model comes from a test-only
 * extension (test/fixtures/lm-provider-extension, installed as a .vsix next to the packaged
 * ralph-loop.vsix) that registers the vendor "ralph-test" through
 * vscode.lm.registerLanguageModelChatProvider and replies from a script file.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { type CodeServerHost } from '../runner/codeServerHost';
import { packLmFixture } from '../runner/lmFixture';
import { until, type Workbench } from './workbench';
import { e2eTeardown, e2eWorkspace, openE2eEditor } from './suite';

const TASK = {
  title: 'Greet from the editor model',
  prompt: 'Create from-editor-model.txt saying hi',
  promise: 'from-editor-model.txt exists',
};

describe('Ralph: Select Model in the browser (an editor model, no API key)', function () {
  this.timeout(180_000);
  let host: CodeServerHost;
  let context: BrowserContext;
  let page: Page;
  let wb: Workbench;
  let workspace: string;
  let scratch: string;
  const screenshots: string[] = [];

  before(async () => {
    scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-e2e-lm-'));
    const script = path.join(scratch, 'script.json');
    fs.writeFileSync(
      script,
      JSON.stringify([
        {
          text: ['Writing the greeting. '],
          toolCalls: [{ callId: 'w1', name: 'write_file', input: { path: 'from-editor-model.txt', content: 'hi from an editor model\n' } }],
        },
        {
          toolCalls: [
            {
              callId: 'd1',
              name: 'ralph_complete',
              input: { summary: 'greeting written', promiseEvidence: 'from-editor-model.txt exists' },
            },
          ],
        },
      ]),
    );
    const fixtureVsix = packLmFixture();
    workspace = e2eWorkspace();
    // no OPENAI_API_KEY and no baseUrl: the person has only the editor's models
    ({ host, context, page, wb } = await openE2eEditor(workspace, [], {
      env: { RALPH_LM_FIXTURE_SCRIPT: script, OPENAI_API_KEY: '' },
      extensions: [fixtureVsix],
    }));
    fs.rmSync(path.dirname(fixtureVsix), { recursive: true, force: true });
  });
  e2eTeardown('select-model-', () => ({ editor: { host, context, page, wb }, workspace, screenshots }), {
    afterClose: () => {
      if (scratch && process.env.RALPH_KEEP_TEMP !== '1') fs.rmSync(scratch, { recursive: true, force: true });
    },
  });

  it('initializes the workspace and adds a task', async () => {
    await wb.openRalphView();
    await wb.tasksView().locator('.welcome-view-content a.monaco-button', { hasText: 'Initialize Workspace' }).click({ timeout: 30_000 });
    await wb.tasksView().getByText('The task store is empty').waitFor({ timeout: 30_000 });
    await wb.runCommand('Ralph: Add Task');
    await wb.answerInput('(1/3)', TASK.title);
    await wb.answerInput('(2/3)', TASK.prompt);
    await wb.answerInput('(3/3)', TASK.promise);
    await wb.pickQuickItem('Done'); // the settings menu (type, complexity, …): nothing to change
    await wb.treeRow(TASK.title).waitFor({ timeout: 30_000 });
  });

  it("Start Autopilot without a key offers the editor's models", async () => {
    await wb.runCommand('Ralph: Start Autopilot');
    const toast = await wb.notification(
      /No key is needed to use a model this editor already has \(Scripted Small, Scripted Large, Scripted Pro\)/,
    );
    assert.ok(
      await toast.locator('a.monaco-button, .monaco-button', { hasText: 'Select Model' }).count(),
      'the notification offers Select Model',
    );
    screenshots.push(await wb.screenshot('select-model-offer'));
    await wb.closeNotifications();
  });

  it("lists the editor's models (name, vendor, family, context size) and writes the choice to llm.models", async () => {
    await wb.runCommand('Ralph: Select Model');
    const widget = page.locator('.quick-input-widget');
    await widget.locator('.quick-input-title', { hasText: 'Ralph: Select Model' }).waitFor({ timeout: 20_000 });
    const row = widget.locator('.monaco-list-row', { hasText: 'Scripted Large' }).first();
    await row.waitFor({ timeout: 20_000 });
    const text = await row.innerText();
    assert.match(text, /ralph-test · scripted-large/);
    assert.match(text, /100k input tokens · no API key · saved as "ralph-test\/scripted-large"/);
    assert.ok(await widget.locator('.monaco-list-row', { hasText: 'Scripted Small' }).count(), 'both editor models are listed');
    assert.ok(await widget.getByText('Endpoint models not listed').count(), 'the endpoint part says why it has no models');
    screenshots.push(await wb.screenshot('select-model-quick-pick'));
    await row.click();
    await wb.notification(/the loop now uses ralph-test\/scripted-large \(editor model, no API key needed\)/);
    const config = JSON.parse(fs.readFileSync(path.join(workspace, '.ralph', 'config.json'), 'utf8')) as {
      llm: { provider: string; models: string[] };
    };
    assert.equal(config.llm.provider, 'vscode');
    assert.deepEqual(config.llm.models, ['ralph-test/scripted-large']);
    await wb.closeNotifications();
  });

  it('runs the task to done on the editor model; the panel shows its tokens as included in the editor plan', async () => {
    await wb.runCommand('Ralph: Start Autopilot');
    await until('the task under Done', async () => (await wb.treeLabels()).some((l) => /Done \(1\)/.test(l)), 90_000);
    assert.equal(fs.readFileSync(path.join(workspace, 'from-editor-model.txt'), 'utf8'), 'hi from an editor model\n');
    await wb.runCommand('Ralph: Open Progress Panel');
    const panel = wb.panel();
    const box = panel.locator('[data-testid="progress-box"]');
    await box.waitFor({ timeout: 60_000 });
    await until('the model in the box', async () => /ralph-test\/scripted-large/.test(await box.innerText()));
    const boxText = await box.innerText();
    assert.match(boxText, /included \(editor plan\)/);
    assert.doesNotMatch(boxText, /\$0\.00/);
    await panel.locator('vscode-button', { hasText: 'Select Model' }).waitFor({ timeout: 20_000 });
    screenshots.push(await wb.screenshot('select-model-panel-done', wb.editorArea()));
    screenshots.push(await wb.screenshot('select-model-workbench-done'));
  });
});
