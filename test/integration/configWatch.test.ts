import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import { readTextIfExists } from '../../src/core/util/atomicWrite';
import { waitFor } from '../helpers/waitFor';

/**
 * The editor follows `.ralph/config.json` without a restart (src/adapters/configWatch.ts):
 * between runs, what the extension uses (the panel's prices, the next run's settings) is the
 * file's last valid content, and a malformed save in between neither replaces it nor stops the
 * watch.
 */
describe('the config file, followed by the editor', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const configFile = () => path.join(workspace(), '.ralph', 'config.json');
  let original: string | undefined;
  let api: RalphExtensionApi;

  before(async () => {
    api = await vscode.extensions.getExtension<RalphExtensionApi>('ralph-loop.ralph-loop')!.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    original = await readTextIfExists(configFile());
  });
  after(async () => {
    if (original === undefined) await fs.rm(configFile(), { force: true });
    else await fs.writeFile(configFile(), original);
  });

  const save = (config: unknown) => fs.writeFile(configFile(), typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  const inUse = () => api.runs!.lastConfig;

  it('an edit is in use at once; a malformed save keeps the last valid config, and the next valid one is taken', async () => {
    assert.equal(api.runs!.running, false, 'between runs');
    await save({ loop: { maxIterations: 11 }, llm: { prices: { 'watched-model': { input: 1, output: 2 } } } });
    await waitFor('the edit in use', () => inUse()?.loop.maxIterations === 11);
    assert.deepEqual(inUse()?.llm.prices['watched-model'], { input: 1, output: 2 }, 'the prices the panel uses for its cost column');

    // the editor's own watch on the file tells this test when the malformed save was seen (the
    // extension's watch hears the same event), and the reload it starts then reads the file
    const seen = vscode.workspace.createFileSystemWatcher(
      new vscode.RelativePattern(vscode.workspace.workspaceFolders![0], '.ralph/config.json'),
    );
    let changes = 0;
    const listening = seen.onDidChange(() => changes++);
    try {
      await save('{ "loop": { "maxIterations": ');
      await waitFor('the malformed save seen by the editor', () => changes > 0);
      await new Promise((resolve) => setTimeout(resolve, 500)); // the reload's read of the file, not a speed check
      assert.equal(inUse()?.loop.maxIterations, 11, 'the last valid config stays in use while the file is malformed');
    } finally {
      listening.dispose();
      seen.dispose();
    }

    await save({ loop: { maxIterations: 12 } });
    await waitFor('the next valid edit in use after a malformed one', () => inUse()?.loop.maxIterations === 12);
    assert.deepEqual(inUse()?.llm.prices, {}, 'a key taken out of the file is back to its default');
  });
});
