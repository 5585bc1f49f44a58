import * as path from 'node:path';
import { errorMessage } from '../core/errors';
import { openRalph } from '../core/ralph';
import type { CliIo } from './io';

/**
 * `--json` of a verb that acts on one task (`ralph task retry T-1 --json`, `ralph review approve
 * T-1 --json`…): what it says becomes one JSON object on stdout, `{ taskId, action, ok,
 * exitCode, message, error?, task? }` — `task` as stored after the action (absent once deleted)
 * — with the same exit code as without `--json`; questions and confirmations stay on stderr.
 */
export async function actAsJson(
  what: { taskId: string; action: string; workspace: string },
  io: CliIo,
  act: (io: CliIo) => Promise<number>,
  exitOf: (error: unknown) => number,
): Promise<number> {
  const said: string[] = [];
  let exitCode: number;
  let error: string | undefined;
  try {
    exitCode = await act({ ...io, out: (line) => said.push(line) });
  } catch (thrown) {
    error = errorMessage(thrown);
    exitCode = exitOf(thrown);
  }
  const task = await openRalph(path.resolve(what.workspace))
    .store.get(what.taskId)
    .catch(() => undefined);
  const result = { taskId: what.taskId, action: what.action, ok: exitCode === 0, exitCode, message: said.join('\n') };
  io.out(JSON.stringify({ ...result, ...(error !== undefined ? { error } : {}), ...(task ? { task } : {}) }, null, 2));
  if (error !== undefined) io.err(`ralph: ${error}`);
  return exitCode;
}
