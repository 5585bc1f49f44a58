/**
 * The set-up every end-to-end suite shares: the packaged extension and a fresh git copy of the
 * fixture workspace, code-server with the workspace open in a ready workbench, and the hooks at
 * the end — a screenshot (and the panel's text) of a failed test, the editor and the suite's
 * servers released, the temp workspace removed (kept with RALPH_KEEP_TEMP=1), the screenshots listed.
 */
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { type CodeServerHost, repoRoot, startCodeServer } from '../runner/codeServerHost';
import { prepareWorkspace } from '../runner/workspace';
import { E2E_SETTINGS, openWorkbench, type Workbench } from './workbench';

export const VSIX = path.join(repoRoot, 'ralph-loop.vsix');

/** The packaged extension must exist (`npm run package`); the workspace is a fresh git copy of test/fixtures/workspace. */
export function e2eWorkspace(): string {
  assert.ok(fs.existsSync(VSIX), `${VSIX} is missing: run npm run package first`);
  return prepareWorkspace(path.join(repoRoot, 'test', 'fixtures', 'workspace'));
}

export interface E2eEditor {
  host: CodeServerHost;
  context: BrowserContext;
  page: Page;
  wb: Workbench;
}

export interface E2eEditorOptions {
  /** code-server's environment (the API key's variable…). */
  env: Record<string, string>;
  /** Installed beside the packaged extension (a test-only extension's .vsix). */
  extensions?: string[];
  userSettings?: Record<string, unknown>;
}

/** code-server with the packaged extension, the workspace open in a ready workbench; CSP and page errors go to `consoleErrors`. */
export async function openE2eEditor(workspace: string, consoleErrors: string[], options: E2eEditorOptions): Promise<E2eEditor> {
  const host = await startCodeServer({
    installExtensions: [VSIX, ...(options.extensions ?? [])],
    env: options.env,
    userSettings: options.userSettings ?? E2E_SETTINGS,
  });
  try {
    return { host, ...(await openWorkbench(host, workspace, consoleErrors)) };
  } catch (error) {
    await host.dispose();
    throw error;
  }
}

export interface E2eSuiteState {
  editor: Partial<E2eEditor>;
  workspace: string | undefined;
  screenshots: string[];
}

/**
 * The hooks at the end of a suite. `beforeClose` runs before the editor closes (release what the
 * scenario holds), `afterClose` after it (close the scripted server, remove scratch files).
 */
export function e2eTeardown(
  failurePrefix: string,
  state: () => E2eSuiteState,
  hooks: { beforeClose?: () => unknown; afterClose?: () => unknown } = {},
): void {
  afterEach(async function () {
    const { editor, screenshots } = state();
    if (this.currentTest?.state === 'failed' && editor.page && editor.wb)
      screenshots.push(await editor.wb.captureFailure(failurePrefix, this.currentTest.title));
  });

  after(async () => {
    const { editor, workspace, screenshots } = state();
    await hooks.beforeClose?.();
    await editor.context?.close().catch(() => undefined);
    await editor.host?.dispose();
    await hooks.afterClose?.();
    if (workspace && process.env.RALPH_KEEP_TEMP !== '1') fs.rmSync(path.dirname(workspace), { recursive: true, force: true });
    if (screenshots.length) console.log(`screenshots:\n  ${screenshots.join('\n  ')}`);
  });
}
