/**
 * The same integration suite in desktop VS Code via @vscode/test-electron, for machines
 * with internet (it downloads VS Code into .vscode-test/). Offline, use runIntegration.ts.
 *
 * Env: RALPH_EXT_DEV_PATH, RALPH_TEST_FIXTURE, RALPH_KEEP_TEMP as in runIntegration.ts;
 * RALPH_VSCODE_VERSION (default 'stable'); RALPH_VSCODE_EXECUTABLE to use an installed build.
 * On a Linux machine without a display, run it under `xvfb-run -a`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runTests } from '@vscode/test-electron';
import { repoRoot } from './codeServerHost';
import { prepareWorkspace } from './workspace';

export async function runElectron(): Promise<number> {
  const extensionDevelopmentPath = path.resolve(process.env.RALPH_EXT_DEV_PATH ?? repoRoot);
  const extensionTestsPath = path.join(repoRoot, 'out', 'test', 'integration', 'index.js');
  const fixture = path.resolve(process.env.RALPH_TEST_FIXTURE ?? path.join(repoRoot, 'test', 'fixtures', 'workspace'));
  const workspace = prepareWorkspace(fixture);
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-electron-'));
  try {
    return await runTests({
      extensionDevelopmentPath,
      extensionTestsPath,
      ...(process.env.RALPH_VSCODE_EXECUTABLE
        ? { vscodeExecutablePath: process.env.RALPH_VSCODE_EXECUTABLE }
        : { version: process.env.RALPH_VSCODE_VERSION ?? 'stable' }),
      extensionTestsEnv: { RALPH_TEST_WORKSPACE: workspace },
      launchArgs: [
        workspace,
        '--disable-workspace-trust',
        '--skip-welcome',
        '--skip-release-notes',
        '--user-data-dir',
        userDataDir,
        // Electron refuses to start as root without it (containers, CI images).
        ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      ],
    });
  } finally {
    if (process.env.RALPH_KEEP_TEMP !== '1') {
      fs.rmSync(path.dirname(workspace), { recursive: true, force: true });
      fs.rmSync(userDataDir, { recursive: true, force: true });
    }
  }
}

if (require.main === module) {
  runElectron().then(
    (code) => process.exit(code),
    (err: unknown) => {
      // runTests rejects (TestRunFailedError) when the tests fail or VS Code cannot start.
      console.error(`[electron] FAIL ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
