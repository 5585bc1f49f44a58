import assert from 'node:assert/strict';
import * as path from 'node:path';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import type { TempWorkspace } from './tempWorkspace';

/** The invariant of the merge queue: `command` passes at each of `commits` (default: every commit of main), run in a scratch worktree. */
export async function assertGreenAtEveryCommit(
  ws: Pick<TempWorkspace, 'git' | 'outsideDir'>,
  command = 'node check.js',
  commits?: readonly string[],
): Promise<void> {
  const scratch = path.join(await ws.outsideDir(), `scratch-${Date.now()}`);
  ws.git('worktree', 'add', '--detach', scratch, 'main');
  try {
    for (const sha of commits ?? ws.git('rev-list', 'main').split('\n')) {
      ws.git('-C', scratch, 'checkout', '-q', '--detach', sha);
      const result = await new NodeCommandRunner().run({ command, cwd: scratch, timeoutMs: 20000, maxOutputChars: 2000 });
      assert.equal(result.exitCode, 0, `main is red at ${sha}: ${result.output}`);
    }
  } finally {
    ws.git('worktree', 'remove', '--force', scratch);
  }
}
