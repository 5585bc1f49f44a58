/** The workspace the integration tests open: a fresh, git-initialised copy of a fixture. */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Fresh temp copy of the fixture folder (a one-README folder if it is missing), made a git
 * repo with one commit. Returns `<tmp>/ralph-ws-XXXX/workspace`; remove the parent when done.
 */
export function prepareWorkspace(fixture: string): string {
  const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'ralph-ws-'));
  const ws = path.join(parent, 'workspace');
  if (fs.existsSync(fixture)) {
    fs.cpSync(fixture, ws, { recursive: true });
  } else {
    fs.mkdirSync(ws, { recursive: true });
    fs.writeFileSync(path.join(ws, 'README.md'), '# Fixture workspace\n');
  }
  const git = (...args: string[]): void => {
    execFileSync('git', args, {
      cwd: ws,
      stdio: ['ignore', 'ignore', 'pipe'],
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Ralph Test',
        GIT_AUTHOR_EMAIL: 'ralph-test@example.invalid',
        GIT_COMMITTER_NAME: 'Ralph Test',
        GIT_COMMITTER_EMAIL: 'ralph-test@example.invalid',
      },
    });
  };
  git('init', '-q', '-b', 'main');
  // Local identity so features that commit inside the workspace work on a bare CI machine.
  git('config', 'user.name', 'Ralph Test');
  git('config', 'user.email', 'ralph-test@example.invalid');
  git('config', 'commit.gpgsign', 'false');
  git('add', '-A');
  git('commit', '-q', '--no-verify', '-m', 'fixture');
  return ws;
}
