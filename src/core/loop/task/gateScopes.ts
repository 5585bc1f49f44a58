import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../../config/schema';
import { runnerCall, type RunnerSetting } from '../../gates/affectedCommand';
import { chooseScope, type GateScope, inventoryOf, type LastFailures } from '../../gates/affectedTests';
import { definitionParts } from '../../gates/definitions';
import { readRunnerSetting } from '../../gates/runnerSetting';
import { ImportGraph } from '../../gates/importGraph';
import type { TestCounts } from '../../gates/parsers/types';
import { locateTest } from '../../gates/renames';
import { testFileMatcher } from '../../gates/testFiles';
import { runGit } from '../../git/gitExec';
import type { Checkpoint, IterationRecord } from '../../record/checkpoint';
import type { Signal } from '../../signals/types';
import type { Task } from '../../tasks/schema';
import type { TaskLoopServices } from './types';

/**
 * The scope of each test gate after an iteration (issue 34, `gates/affectedTests.ts`): the
 * whole suite when the agent claims COMPLETE, on the task's first run (its base inventory is not
 * there yet) and wherever the part cannot be told; otherwise the tests that reach what changed
 * since the gate's last whole green run on the task. Gates of other kinds, and `scope: "full"`
 * ones, have none (they always run whole).
 */
export async function gateScopes(
  services: Pick<TaskLoopServices, 'paths' | 'work' | 'config'>,
  task: Task,
  cp: Checkpoint,
  gates: readonly GateConfig[],
  signal: Signal | undefined,
  /** The task's run at its base is still going (in a worktree, beside the first iterations): the part is picked without it. */
  basePending = false,
): Promise<Map<string, GateScope> | undefined> {
  const candidates = gates.filter((g) => g.kind === 'tests' && g.scope !== 'full');
  if (candidates.length === 0) return undefined;
  const scopes = new Map<string, GateScope>();
  const why = wholeAlways(cp, signal, basePending);
  if (why) {
    for (const g of candidates) scopes.set(g.name, { kind: 'full', why });
    return scopes;
  }
  const workspace = (services.work ?? services.paths).workspace;
  const tree = await readTree(workspace, task, services.config);
  // one diff per commit for all the gates: nothing runs between these reads (the gates run after), the tree is the one `readTree` listed
  const changed = new Map<string, Promise<readonly string[] | undefined>>();
  const since = (commit: string) => changed.get(commit) ?? set(changed, commit, changedSince(workspace, commit, tree.untracked));
  for (const gate of candidates) scopes.set(gate.name, await scopeOf(gate, workspace, cp, tree, basePending, since));
  return scopes;
}

/** Why every test gate runs whole this time, whatever changed. */
function wholeAlways(cp: Checkpoint, signal: Signal | undefined, basePending: boolean): string | undefined {
  if (signal?.kind === 'COMPLETE') return 'the agent claims COMPLETE: the whole suite decides';
  if (!cp.integrity && !basePending) return "the task's first run of its gates: the suite at its base is not known yet";
  if (!cp.baseCommit) return 'the task has no base commit to tell its changes from';
  return undefined;
}

interface Tree {
  files: ReadonlySet<string>;
  /** Untracked files git does not ignore; undefined when git could not list them. */
  untracked: readonly string[] | undefined;
  graph: ImportGraph;
  isTest(file: string): boolean;
  setting: RunnerSetting;
}

async function readTree(workspace: string, task: Task, config: TaskLoopServices['config']): Promise<Tree> {
  const [tracked, untracked, conventional, named, setting] = await Promise.all([
    runGit(workspace, ['ls-files', '-z', '--cached']),
    runGit(workspace, ['ls-files', '-z', '--others', '--exclude-standard']),
    // a test file is one by the conventions and the config, or one the task names: the task's proofTests add, they do not narrow
    testFileMatcher(workspace, { config: config.proof.testFiles }),
    task.proofTests?.length ? testFileMatcher(workspace, { task: task.proofTests }) : undefined,
    readRunnerSetting(workspace),
  ]);
  const isTest = (file: string) => conventional(file) || named?.(file) === true;
  const files = new Set([...zList(tracked), ...zList(untracked)]);
  const listed = untracked.code === 0 ? zList(untracked) : undefined;
  return { files, untracked: listed, graph: new ImportGraph(workspace, files), isTest, setting };
}

async function scopeOf(
  gate: GateConfig,
  workspace: string,
  cp: Checkpoint,
  tree: Tree,
  basePending: boolean,
  changedSinceCommit: (commit: string) => Promise<readonly string[] | undefined>,
): Promise<GateScope> {
  const since = lastWholeGreen(cp.history, gate.name) ?? cp.baseCommit!;
  const [sinceGreen, sinceBase, parts] = await Promise.all([
    changedSinceCommit(since),
    changedSinceCommit(cp.baseCommit!),
    definitionParts(gate, workspace),
  ]);
  if (!sinceGreen || !sinceBase) return { kind: 'full', why: 'git could not say what changed since the last whole green run' };
  const definitions = new Set(parts.map((p) => p.file));
  const base = cp.integrity?.gates.find((g) => g.gate === gate.name);
  const pending = !base && basePending;
  if (base && base.command !== gate.command) return { kind: 'full', why: "the gate's command changed since the task's base" };
  const scope = await chooseScope({
    call: runnerCall(gate.command, tree.setting),
    setting: tree.setting,
    changedSinceGreen: sinceGreen,
    changedSinceBase: sinceBase,
    last: lastFailures(cp.history, gate.name, workspace) ?? baseFailures(base?.tests),
    inventory: pending ? { why: "the task's run at its base is still going" } : await filedInventory(base?.tests, tree, workspace),
    ...(pending ? { basePending: true } : {}),
    // without the base run's files, the helpers and fixtures beside the tests are not run as tests (ava refuses them)
    treeTests: [...tree.files].filter((f) => tree.isTest(f) && CODE.test(f) && !(pending && SUPPORT.test(f))),
    ...(base?.tests ? { baseTotal: base.tests.total } : {}),
    isDefinition: (f) => definitions.has(f),
    isTest: tree.isTest,
    exists: (f) => tree.files.has(f),
    closure: (f) => tree.graph.closure(f),
  });
  const red = (base?.tests?.names ?? []).filter((t) => t.status === 'fail').map((t) => t.name);
  return scope.kind === 'affected' && red.length > 0 ? { ...scope, redAtBase: red } : scope;
}

/** Files of code a test can be written in. */
const CODE = /\.(?:[cm]?[jt]sx?|py)$/;
/** Beside the tests, not tests: helpers, fixtures, support code (ava's default exclusions and their like), `_`-prefixed files. */
const SUPPORT =
  /(?:^|\/)(?:(?:_[^/]*|__(?:helpers?|fixtures?|mocks?)__|helpers?|fixtures?|support|mocks?)\/|(?:_[^/]*|helpers?|fixtures?|support|mocks?|setup|utils?)\.[a-z0-9]+$)/;

/** Test files read to find the file of a test the runner named none for (node:test's passing tests). */
const MAX_TEST_TEXTS = 2000;
const MAX_TEST_BYTES = 1_000_000;

/**
 * The base run's inventory with a file for every test: where the runner named none (node:test's
 * spec reporter names the file of a failure only), the one test file of the tree whose text
 * defines the test's title (`locateTest`); a title found in no or several test files leaves the
 * inventory unknown, and the whole suite runs.
 */
async function filedInventory(
  tests: Pick<TestCounts, 'total' | 'names'> | undefined,
  tree: Tree,
  workspace: string,
): Promise<ReturnType<typeof inventoryOf>> {
  const names = tests?.names ?? [];
  if (!tests || names.every((t) => t.file)) return inventoryOf(tests);
  const testFiles = [...tree.files].filter((f) => tree.isTest(f) && CODE.test(f)).slice(0, MAX_TEST_TEXTS);
  const texts: [string, string][] = [];
  for (const file of testFiles) {
    const text = await fs.readFile(path.join(workspace, file), 'utf8').catch(() => undefined);
    if (text !== undefined && text.length <= MAX_TEST_BYTES) texts.push([file, text]);
  }
  const filed = [];
  for (const t of names) {
    if (t.file) {
      filed.push(t);
      continue;
    }
    const owners = texts.filter(([, text]) => locateTest(t.name, text) !== undefined);
    if (owners.length !== 1)
      return {
        why: `the runner did not say which file the test \`${t.name.slice(0, 200)}\` is in, and its title is not written in exactly one test file`,
      };
    filed.push({ ...t, file: owners[0][0] });
  }
  return inventoryOf({ ...tests, names: filed });
}

/**
 * The commit of the gate's last whole run that passed in this task (its iteration's commit, or
 * the latest commit before it when that iteration committed nothing); undefined when none did.
 */
export function lastWholeGreen(history: readonly IterationRecord[], gate: string): string | undefined {
  let commit: string | undefined;
  let green: string | undefined;
  for (const record of history) {
    commit = record.commit ?? commit;
    const g = record.gates.find((x) => x.name === gate);
    if (g && g.passed && g.scope !== 'affected' && commit) green = commit;
  }
  return green;
}

/** What the gate's last run left failing, files made workspace-relative. */
function lastFailures(history: readonly IterationRecord[], gate: string, workspace: string): LastFailures | undefined {
  for (let i = history.length - 1; i >= 0; i--) {
    const g = history[i].gates.find((x) => x.name === gate);
    if (!g) continue;
    // a failed run that named no failing test (a crash, a record from before parts were kept): nothing to start from
    if (!g.failing) return g.passed ? undefined : { files: [], unfiled: 1 };
    const files = g.failing.files.map((f) => (path.isAbsolute(f) ? path.relative(workspace, f).split(path.sep).join('/') : f));
    return { files, unfiled: g.failing.unfiled + files.filter((f) => f.startsWith('..')).length };
  }
  return undefined;
}

/** Before the gate's first run in the task, its run at the base is its last: the tests red there (the task's own among them). */
function baseFailures(tests: Pick<TestCounts, 'names'> | undefined): LastFailures | undefined {
  const failing = (tests?.names ?? []).filter((t) => t.status === 'fail');
  if (failing.length === 0) return undefined;
  return { files: [...new Set(failing.flatMap((t) => (t.file ? [t.file] : [])))], unfiled: failing.filter((t) => !t.file).length };
}

/** Files that differ between `commit` and the working tree (`untracked` ones included, listed once per iteration), `.ralph/` left out. */
async function changedSince(
  workspace: string,
  commit: string,
  untracked: readonly string[] | undefined,
): Promise<readonly string[] | undefined> {
  const diff = await runGit(workspace, ['diff', '--name-only', '--no-renames', '-z', commit, '--']);
  if (diff.code !== 0 || !untracked) return undefined;
  return [...new Set([...zList(diff), ...untracked])].filter((f) => !f.startsWith('.ralph/'));
}

function set<K, V>(map: Map<K, V>, key: K, value: V): V {
  map.set(key, value);
  return value;
}

function zList(r: { code: number; stdout: string }): string[] {
  return r.code === 0 ? r.stdout.split('\0').filter(Boolean) : [];
}
