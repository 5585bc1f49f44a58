/** The workspace the integration tests open: a fresh, git-initialised copy of a fixture. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { commitAll, initTestRepo } from '../helpers/gitWorkspace';

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
  initTestRepo(ws);
  commitAll(ws, 'fixture');
  return ws;
}
