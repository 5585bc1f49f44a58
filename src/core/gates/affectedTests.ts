import type { Closure } from './importGraph';
import { narrowedCommand, type RunnerCall, type RunnerSetting, type SelectingRunner } from './affectedCommand';

/**
 * Which tests a test gate runs after an iteration (issue 34): the whole suite, or the test files
 * that reach a file changed since the gate's last full green run on the task, with every test
 * file that failed in its previous run and those the task changed. The whole suite whenever the
 * part cannot be told for sure — the reason is kept and shown. A part never decides a verdict:
 * COMPLETE, integrity and the merged check are judged on whole runs.
 */

export type GateScope =
  | {
      kind: 'affected';
      /** The command that runs the part. */
      command: string;
      runner: SelectingRunner;
      /** The test files run (jest: the files its `--findRelatedTests` starts from). */
      files: string[];
      /** Tests of the whole suite at the task's base, when known. */
      of?: number;
      /** Names of the tests that failed at the task's base: a part that fails them again says so. */
      redAtBase?: string[];
    }
  | { kind: 'full'; why: string };

/** What a gate's last run left for the next one to start from. */
export interface LastFailures {
  /** Files of the tests that failed (as the runner named them, relative to the workspace). */
  files: readonly string[];
  /** Failing tests the runner named no file for. */
  unfiled: number;
}

export interface ScopeInput {
  call: RunnerCall | { why: string };
  setting: Pick<RunnerSetting, 'tapMajor'>;
  /** Files changed since the gate's last full green run on the task (its base when none). */
  changedSinceGreen: readonly string[];
  /** Files the task changed since its base. */
  changedSinceBase: readonly string[];
  last: LastFailures | undefined;
  /** The suite's test files at the base (where the runner reported tests) and its test count; `why` when the runner did not say. */
  inventory: { files: ReadonlySet<string>; total: number } | { why: string };
  /** The tree's test files by the runners' conventions and configs (vitest, which runs only its own test files, picks from them when the base run named no files). */
  treeTests: readonly string[];
  /** Tests of the base run, when it counted them. */
  baseTotal?: number;
  /** The task's run at its base is still going: the suite is the tree's test files by the runners' conventions and configs. */
  basePending?: boolean;
  /** Files that configure the gate (its scripts, its runner's configs) and lockfiles. */
  isDefinition(file: string): boolean;
  isTest(file: string): boolean;
  exists(file: string): boolean;
  closure(file: string): Promise<Closure>;
}

/** Lockfiles, package.json, and pytest's conftest.py (its fixtures reach the tests beside it without an import). */
const LOCKFILE =
  /(?:^|\/)(?:package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|bun\.lockb?|package\.json|conftest\.py|poetry\.lock|requirements[^/]*\.txt)$/;

/** The scope of one gate's run. */
export async function chooseScope(input: ScopeInput): Promise<GateScope> {
  const { call } = input;
  if ('why' in call) return full(call.why);
  const config = input.changedSinceGreen.find((f) => input.isDefinition(f) || LOCKFILE.test(f));
  if (config) return full(`\`${config}\` changed since the gate's last whole green run: a config or lockfile decides what every test runs`);
  if (input.last && input.last.unfiled > 0) return full("the gate's last run failed without naming the file of every failing test");
  const failing = (input.last?.files ?? []).filter((f) => input.exists(f));
  const taskTests = input.changedSinceBase.filter((f) => input.isTest(f) && input.exists(f));
  if (call.runner === 'jest') {
    // jest follows its own module graph (moduleNameMapper, projects): the changed files are where it starts
    const files = unique([...input.changedSinceGreen.filter((f) => input.exists(f)), ...failing, ...taskTests]);
    if (files.length === 0) return full('nothing changed since the last whole green run and nothing failed in it');
    return affected(call, input, files, input.baseTotal);
  }
  // vitest filters its own test files by the paths it is given: a path that is no test of its runs nothing
  // while the base run is still going, the tree's test files stand for the suite the runner reports
  const filtering = (call.runner === 'vitest' || input.basePending === true) && 'why' in input.inventory;
  if ('why' in input.inventory && !filtering) return full(input.inventory.why);
  const suite = 'why' in input.inventory ? new Set(input.treeTests) : input.inventory.files;
  const total = 'why' in input.inventory ? input.baseTotal : input.inventory.total;
  const added = filtering ? [] : taskTests.filter((f) => !suite.has(f));
  if (added.length > 0)
    return full(
      `the task added test files the suite at its base did not report (${listed(added)}): the whole suite tells which of them are tests`,
    );
  const changed = new Set(input.changedSinceGreen);
  const chosen: string[] = [];
  for (const file of [...suite].sort()) {
    if (!input.exists(file)) continue;
    if (changed.has(file) || failing.includes(file) || taskTests.includes(file)) chosen.push(file);
    else {
      const closure = await input.closure(file);
      if (closure.unknown || closure.files.some((f) => changed.has(f))) chosen.push(file);
    }
  }
  if (chosen.length === 0) return full('no test file reaches a file changed since the last whole green run');
  if (chosen.length >= [...suite].filter((f) => input.exists(f)).length)
    return full('every test file reaches a file changed since the last whole green run');
  return affected(call, input, chosen, total);
}

function affected(call: RunnerCall, input: Pick<ScopeInput, 'setting'>, files: string[], of?: number): GateScope {
  return {
    kind: 'affected',
    command: narrowedCommand(call, files, input.setting),
    runner: call.runner,
    files,
    ...(of !== undefined ? { of } : {}),
  };
}

function full(why: string): GateScope {
  return { kind: 'full', why };
}

function unique(files: readonly string[]): string[] {
  return [...new Set(files)];
}

function listed(files: readonly string[]): string {
  const shown = files
    .slice(0, 3)
    .map((f) => `\`${f}\``)
    .join(', ');
  return files.length > 3 ? `${shown} and ${files.length - 3} more` : shown;
}

/**
 * The suite's test files at the base: the files the runner reported its tests in. `why` when a
 * test had no file (the runner did not say) or the base run reported no tests.
 */
export function inventoryOf(
  tests: { total: number; names?: readonly { file?: string }[] } | undefined,
): { files: Set<string>; total: number } | { why: string } {
  if (!tests?.names || tests.names.length === 0) return { why: "the suite's run at the task's base named no tests" };
  const files = new Set<string>();
  for (const t of tests.names) {
    if (!t.file) return { why: 'the runner did not say which file each test of the base run is in' };
    files.add(t.file);
  }
  return { files, total: tests.total };
}

/** The gate result's line, marked as a part of the suite: `affected: 12 of 840 tests, 11/12 tests passing`. */
export function scopedSummary(summary: string, scope: GateScope | undefined, ran: number | undefined): string {
  if (scope?.kind !== 'affected') return summary;
  const count = ran !== undefined ? `${ran}${scope.of !== undefined ? ` of ${scope.of}` : ''} tests` : `${scope.files.length} test files`;
  return `affected: ${count}, ${summary}`;
}
