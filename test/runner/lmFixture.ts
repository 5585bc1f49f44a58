/**
 * The test-only extension with scripted editor chat models (test/fixtures/lm-provider-extension,
 * vendor "ralph-test"), packaged as a .vsix so code-server installs it next to the extension
 * under test (the web workbench takes one extensionDevelopmentPath only).
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { repoRoot } from './codeServerHost';

export const LM_FIXTURE_DIR = path.join(repoRoot, 'test', 'fixtures', 'lm-provider-extension');

/** Packs the fixture into a fresh temp dir; returns the .vsix path (remove its folder when done). */
export function packLmFixture(): string {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-lmfx-')), 'ralph-lm-fixture.vsix');
  const vsce = path.join(repoRoot, 'node_modules', '@vscode', 'vsce', 'vsce');
  execFileSync(process.execPath, [vsce, 'package', '--no-dependencies', '--allow-missing-repository', '--skip-license', '--out', out], {
    cwd: LM_FIXTURE_DIR,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return out;
}
