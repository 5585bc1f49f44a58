import * as path from 'node:path';
import { type EmptiedGuards, failedAtBaseNowPassing, type GateBaseline } from '../../gates/integrity';
import type { TestCounts } from '../../gates/parsers/types';
import { runGit } from '../../git/gitExec';
import { readTextIfExists } from '../../util/atomicWrite';
import type { TreeEvidence } from './taskEvidence';

/** Files guarding one test, at most; larger texts are not compared. */
const MAX_GUARD_FILES = 50;
const MAX_GUARD_CHARS = 200_000;

/**
 * The guards of every test that failed at the base and passes now (`judgeIntegrity`): the file
 * the runner reported it in and the test-side files it imports (fixtures, helpers); where the
 * runner did not say, or its imports cannot all be read, every test-side file the task changed.
 * Their text at the base comes from the baseline or from git; never a file of the code under test.
 */
export async function emptiedGuards(
  base: GateBaseline,
  tests: TestCounts | undefined,
  root: string,
  baseCommit: string | undefined,
  evidence: () => Promise<TreeEvidence>,
): Promise<EmptiedGuards> {
  const passing = failedAtBaseNowPassing(base, tests);
  if (passing.length === 0) return {};
  const e = await evidence();
  const changedTests = [...e.change.changed].filter((f) => e.isTest(f));
  const guards: EmptiedGuards = {};
  const texts = new Map<string, Promise<{ before?: string; after?: string }>>();
  const textsOf = (file: string) => {
    let known = texts.get(file);
    if (!known) texts.set(file, (known = readPair(root, baseCommit, base, file)));
    return known;
  };
  for (const t of passing) {
    let files = changedTests;
    if (t.file) {
      const closure = await e.graph.closure(t.file);
      const own = [t.file, ...closure.files.filter((f) => f !== t.file && e.isTest(f))];
      files = closure.unknown ? [...new Set([...own, ...changedTests])] : own;
    }
    const entries: EmptiedGuards[string] = [];
    for (const file of files.slice(0, MAX_GUARD_FILES)) {
      const { before, after } = await textsOf(file);
      if (before !== undefined && before !== after) entries.push({ file, before, after });
    }
    if (entries.length) guards[t.name] = entries;
  }
  return guards;
}

/** A file's text at the base (the baseline's copy, else git's) and now; undefined where absent or too large. */
async function readPair(
  root: string,
  baseCommit: string | undefined,
  base: GateBaseline,
  file: string,
): Promise<{ before?: string; after?: string }> {
  let before: string | undefined = base.failingSources[file];
  if (before === undefined && baseCommit) {
    const shown = await runGit(root, ['show', `${baseCommit}:${file}`]);
    if (shown.code === 0) before = shown.stdout;
  }
  const after = await readTextIfExists(path.join(root, file)).catch(() => undefined);
  const fits = (t: string | undefined) => (t !== undefined && t.length <= MAX_GUARD_CHARS ? t : undefined);
  return { before: fits(before), after: after !== undefined && after.length > MAX_GUARD_CHARS ? before : after };
}
