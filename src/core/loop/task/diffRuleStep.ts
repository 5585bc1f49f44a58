import * as path from 'node:path';
import type { GateConfig } from '../../config/schema';
import { gateRunsFile } from '../../gates/diffRule';
import { readRunnerSetting } from '../../gates/runnerSetting';
import { type TestCodeFinding, testCodeChanges, type TestFileText } from '../../gates/testCodeChanges';
import { runGit } from '../../git/gitExec';
import { readTextIfExists } from '../../util/atomicWrite';
import type { TreeEvidence } from './taskEvidence';

/** Files read for the diff rule, at most; larger texts are not compared. */
const MAX_FILES = 200;
const MAX_CHARS = 300_000;

/**
 * What the task's diff removes or disables of the tests `gate` runs (`gates/testCodeChanges.ts`):
 * each file the task changed that the gate runs (`gateRunsFile`), at `baseCommit` and now.
 * Undefined when there is no base to read the diff against.
 */
export async function diffRuleFindings(
  workspace: string,
  baseCommit: string | undefined,
  gate: GateConfig,
  evidence: () => Promise<TreeEvidence>,
): Promise<TestCodeFinding[] | undefined> {
  if (!baseCommit) return undefined;
  const [e, setting] = await Promise.all([evidence(), readRunnerSetting(workspace)]);
  const files = [...e.change.changed].filter((f) => gateRunsFile(f, gate, setting.scripts, e.isTest)).slice(0, MAX_FILES);
  const texts: TestFileText[] = [];
  for (const file of files) {
    const shown = await runGit(workspace, ['show', `${baseCommit}:${file}`]);
    const before = shown.code === 0 ? shown.stdout : undefined;
    const after = await readTextIfExists(path.join(workspace, file)).catch(() => undefined);
    if (before === after || (before?.length ?? 0) > MAX_CHARS || (after?.length ?? 0) > MAX_CHARS) continue;
    texts.push({ file, ...(before !== undefined ? { before } : {}), ...(after !== undefined ? { after } : {}) });
  }
  return testCodeChanges(texts);
}
