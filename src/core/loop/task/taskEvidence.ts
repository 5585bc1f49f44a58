import { ImportGraph } from '../../gates/importGraph';
import { testFileMatcher, type TestFileMatcher } from '../../gates/testFiles';
import { asksWholeSuite, failureJudge, type FailureJudge, filesNamedBy, isSourceFile, type TaskChange } from '../../gates/verdictEvidence';
import { runGit } from '../../git/gitExec';
import type { Task } from '../../tasks/schema';
import { taskWords } from '../../tasks/taskWords';

/**
 * The evidence a verdict against a base stands on, read from one tree: the repository's files
 * as git sees them, what the task changed against its base, the files its words name, and the
 * import graph of its tests. Read once per judgement, and only when a failure needs it.
 */
export interface TreeEvidence {
  /** The tree's files: tracked, and untracked ones git does not ignore. */
  files: ReadonlySet<string>;
  change: TaskChange;
  graph: ImportGraph;
  /** A test-side file: a test file by the runners' conventions and configs, or one a runner reported tests in. */
  isTest: TestFileMatcher;
}

/** What a verdict reads of a task (or of the tasks one merged check covers): its words, its declarations, how its test files are told. */
export type VerdictTask = Pick<Task, 'title' | 'prompt' | 'promise'> &
  Partial<Pick<Task, 'type' | 'check' | 'proofTests' | 'knownFailures'>> & {
    /** `proof.testFiles` of the configuration. */
    proofTestFiles?: readonly string[];
  };

/** The verdict's view of a task in a configuration. */
export function verdictTask(task: Task, config: { proof: { testFiles?: readonly string[] } }): VerdictTask {
  return { ...task, ...(config.proof.testFiles ? { proofTestFiles: config.proof.testFiles } : {}) };
}

/**
 * The tasks one merged check covers, as one: their words together, the failures every one of
 * them declared unrelated (a failure one task declared may be another's).
 */
export function batchVerdictTask(tasks: readonly VerdictTask[]): VerdictTask | undefined {
  if (tasks.length <= 1) return tasks[0];
  const known = tasks.map((t) => new Set(t.knownFailures ?? []));
  return {
    title: tasks.map((t) => t.title).join('\n'),
    prompt: tasks.map((t) => t.prompt).join('\n'),
    promise: tasks.map((t) => t.promise).join('\n'),
    check: tasks.flatMap((t) => (t.check ? [t.check] : [])).join('\n'),
    knownFailures: [...known[0]].filter((k) => known.every((set) => set.has(k))),
    // a batch of documentation tasks only: documents are their source
    ...(tasks.every((t) => t.type === 'docs') ? { type: 'docs' as const } : {}),
    proofTests: tasks.flatMap((t) => t.proofTests ?? []),
    ...(tasks[0].proofTestFiles ? { proofTestFiles: tasks[0].proofTestFiles } : {}),
  };
}

/**
 * Reads the evidence in `root` against `base` (a commit; the task's base, or the merge base of
 * its branch). With no base (a repository without commits when the task started), everything is
 * the task's change.
 */
export async function readTreeEvidence(
  root: string,
  base: string | undefined,
  task: VerdictTask,
  testFiles: ReadonlySet<string> = new Set(),
): Promise<TreeEvidence> {
  const [tracked, untracked, diff, isTest] = await Promise.all([
    runGit(root, ['ls-files', '-z', '--cached']),
    runGit(root, ['ls-files', '-z', '--others', '--exclude-standard']),
    base ? runGit(root, ['diff', '--name-only', '--no-renames', '-z', base, '--']) : undefined,
    testFileMatcher(root, { task: task.proofTests, config: task.proofTestFiles }),
  ]);
  const list = (r: { code: number; stdout: string }) => (r.code === 0 ? r.stdout.split('\0').filter(Boolean) : []);
  const files = new Set([...list(tracked), ...list(untracked)]);
  // no base to compare with, or git could not say: everything counts as the task's change
  const changedList = diff && diff.code === 0 ? [...list(diff), ...list(untracked)] : [...files];
  const changed = new Set(changedList.filter((f) => !f.startsWith('.ralph/')));
  const change: TaskChange = {
    changed,
    named: filesNamedBy(taskWords(task), files),
    changedSource: [...changed].some((f) => isSourceFile(f, isTest, testFiles, task.type === 'docs')),
    wholeSuite: asksWholeSuite(task.promise),
  };
  return { files, change, graph: new ImportGraph(root, files), isTest: (f) => isTest(f) || testFiles.has(f) };
}

/** The judge of failures that failed at the base too, for one gate, from lazily read evidence. */
export function evidenceJudge(
  evidence: () => Promise<TreeEvidence>,
  known: { gate?: readonly string[]; task?: readonly string[] },
): FailureJudge {
  return async (failure) => {
    const e = await evidence();
    return failureJudge(e.change, e.graph, { gate: known.gate ?? [], task: known.task ?? [] })(failure);
  };
}

/** A value computed once, on first use. */
export function lazily<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/**
 * Whether the task has changed nothing against `base` outside `.ralph/` (committed, uncommitted
 * or untracked). Undefined when it cannot be told (no base, git failed): never a reason to refuse.
 */
export async function changedNothing(root: string, base: string | undefined): Promise<boolean | undefined> {
  if (!base) return undefined;
  const [diff, untracked] = await Promise.all([
    runGit(root, ['diff', '--name-only', '--no-renames', '-z', base, '--']),
    runGit(root, ['ls-files', '-z', '--others', '--exclude-standard']),
  ]);
  if (diff.code !== 0 || untracked.code !== 0) return undefined;
  const own = (f: string) => f.startsWith('.ralph/');
  return [...diff.stdout.split('\0'), ...untracked.stdout.split('\0')].filter(Boolean).every(own);
}
