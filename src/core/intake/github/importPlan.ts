import type { NewTask, Task, TaskType } from '../../tasks/schema';
import type { TaskPatch } from '../../tasks/store';
import type { RepoRef } from '../../git/issueRefs';
import { findCycle } from '../cycles';
import { type IssueReading, readIssueBody } from './issueText';
import type { GitHubIssue } from './types';

/** What an import does with one issue. */
export type ImportAction =
  | { kind: 'add'; issue: GitHubIssue; task: NewTask & { id: string; dependsOn: string[] } }
  | { kind: 'update'; issue: GitHubIssue; taskId: string; patch: TaskPatch; changed: string[] }
  | { kind: 'unchanged'; issue: GitHubIssue; taskId: string }
  /** Changed on GitHub, but the task is running or done: left as it is. */
  | { kind: 'kept'; issue: GitHubIssue; taskId: string; reason: string }
  /** Not imported: no testable criterion (`needsPromise`: a person may give one), or a dependency that cannot be. */
  | { kind: 'flagged'; issue: GitHubIssue; reason: string; needsPromise: boolean };

export interface ImportPlan {
  actions: ImportAction[];
  /** Dependencies dropped (closed, missing), issues pulled in as dependencies, references to other repositories. */
  notes: string[];
}

export interface ImportInput {
  repo: RepoRef;
  /** The issues asked for and the open issues they depend on. */
  issues: readonly GitHubIssue[];
  /** Issues in `issues` only because another depends on them. */
  pulledIn: ReadonlyMap<number, number>;
  /** Dependencies that are closed (done: not a dependency any more) or that do not exist. */
  closed: ReadonlySet<number>;
  missing: ReadonlySet<number>;
  existing: readonly Task[];
  /** Promises a person gave for issues without acceptance criteria. */
  promises?: ReadonlyMap<number, string>;
}

const LABEL_TYPES: [RegExp, TaskType][] = [
  [/\bbug\b|\bdefect\b|\bregression\b/i, 'bugfix'],
  [/\bsecurity\b|\bvulnerability\b/i, 'security'],
  [/\bdocs?\b|\bdocumentation\b/i, 'docs'],
  [/\brefactor/i, 'refactor'],
  [/\btests?\b|\btesting\b/i, 'test'],
  [/\barchitecture\b/i, 'architecture'],
];

export function typeOfLabels(labels: readonly string[]): TaskType {
  for (const [pattern, type] of LABEL_TYPES) if (labels.some((l) => pattern.test(l))) return type;
  return 'feature';
}

/** The promise of criteria: one criterion as it is, several as a list. */
export function promiseOf(criteria: readonly string[]): string {
  return criteria.length === 1 ? criteria[0] : criteria.map((c) => `- ${c}`).join('\n');
}

/** The request: the issue's own text, titled. */
export function promptOf(issue: GitHubIssue): string {
  return `${issue.title} (#${issue.number})\n\n${issue.body.trim() || '(the issue has no description)'}`;
}

/**
 * What importing `issues` into a store holding `existing` does, issue by issue: one task per
 * issue (found again by its URL in `source`, so a re-import never duplicates), updated when its
 * issue changed; an issue without a testable criterion, or waiting on one that cannot be
 * imported, or in a dependency cycle, is flagged rather than guessed.
 */
export function planImport(input: ImportInput): ImportPlan {
  const notes: string[] = [];
  const readings = new Map(input.issues.map((i) => [i.number, readIssueBody(i.body, input.repo)]));
  const byNumber = new Map(input.issues.map((i) => [i.number, i]));
  const taskOf = (issue: GitHubIssue) => input.existing.find((t) => t.source === issue.url);
  for (const [number, by] of input.pulledIn) notes.push(`#${number} is imported too: #${by} depends on it`);
  for (const issue of input.issues) {
    const reading = readings.get(issue.number) as IssueReading;
    for (const d of reading.dependsOn) {
      if (input.closed.has(d)) notes.push(`#${issue.number} depends on #${d}, which is closed: not a dependency any more`);
      else if (input.missing.has(d)) notes.push(`#${issue.number} depends on #${d}, which does not exist: left out`);
    }
    for (const ref of reading.external) notes.push(`#${issue.number} depends on ${ref}, in another repository: not tracked`);
  }
  const openDeps = (n: number) => (readings.get(n)?.dependsOn ?? []).filter((d) => d !== n && byNumber.has(d));
  const flags = flagIssues(input, readings, openDeps, taskOf);
  const ids = assignIds(input, flags, taskOf);
  const actions = input.issues.map((issue): ImportAction => {
    const flag = flags.get(issue.number);
    if (flag) return { kind: 'flagged', issue, ...flag };
    const reading = readings.get(issue.number) as IssueReading;
    const given = input.promises?.get(issue.number);
    const dependsOn = openDeps(issue.number)
      .map((d) => ids.get(d) as string)
      .sort();
    const fields = { title: issue.title.trim(), prompt: promptOf(issue), type: typeOfLabels(issue.labels), dependsOn, source: issue.url };
    const promise = reading.criteria.length > 0 ? promiseOf(reading.criteria) : given;
    const existing = taskOf(issue);
    if (!existing) return { kind: 'add', issue, task: { id: ids.get(issue.number) as string, ...fields, promise: promise as string } };
    return compare(issue, existing, { ...fields, ...(promise !== undefined ? { promise } : {}) });
  });
  return { actions, notes };
}

/** Issues that cannot be imported, and why; a flag spreads to what depends on it, and cycles are flagged whole. */
function flagIssues(
  input: ImportInput,
  readings: Map<number, IssueReading>,
  openDeps: (n: number) => number[],
  taskOf: (i: GitHubIssue) => Task | undefined,
): Map<number, { reason: string; needsPromise: boolean }> {
  const flags = new Map<number, { reason: string; needsPromise: boolean }>();
  for (const issue of input.issues) {
    if ((readings.get(issue.number)?.criteria.length ?? 0) === 0 && !input.promises?.has(issue.number) && !taskOf(issue)) {
      flags.set(issue.number, {
        reason:
          'states no testable acceptance criterion: give it a promise (what must be true for it to be done), or add an "Acceptance criteria" section to the issue',
        needsPromise: true,
      });
    }
  }
  for (let changed = true; changed;) {
    changed = false;
    for (const issue of input.issues) {
      if (flags.has(issue.number)) continue;
      const blocked = openDeps(issue.number).find((d) => flags.has(d) && !taskOf(input.issues.find((i) => i.number === d) as GitHubIssue));
      if (blocked !== undefined) {
        flags.set(issue.number, {
          reason: `depends on #${blocked}, which is not imported (it ${flags.get(blocked)?.reason.split(':')[0]})`,
          needsPromise: false,
        });
        changed = true;
      }
    }
    const cycle = findCycle(
      input.issues
        .filter((i) => !flags.has(i.number))
        .map((i) => ({
          key: String(i.number),
          dependsOn: openDeps(i.number)
            .filter((d) => !flags.has(d))
            .map(String),
        })),
    );
    if (cycle) {
      const named = cycle.map((n) => `#${n}`).join(' → ');
      for (const member of new Set(cycle))
        flags.set(Number(member), {
          reason: `is in a dependency cycle ${named}: break it on GitHub and import again`,
          needsPromise: false,
        });
      changed = true;
    }
  }
  return flags;
}

/** Task ids: the existing task's, else `GH-<number>` (`GH-<repo>-<number>` when that is taken). */
function assignIds(
  input: ImportInput,
  flags: ReadonlyMap<number, unknown>,
  taskOf: (i: GitHubIssue) => Task | undefined,
): Map<number, string> {
  const taken = new Set(input.existing.map((t) => t.id));
  const ids = new Map<number, string>();
  for (const issue of input.issues) {
    const existing = taskOf(issue);
    if (existing) ids.set(issue.number, existing.id);
  }
  for (const issue of input.issues) {
    if (ids.has(issue.number) || flags.has(issue.number)) continue;
    const plain = `GH-${issue.number}`;
    const id = taken.has(plain) ? `GH-${input.repo.repo.replace(/[^A-Za-z0-9._-]/g, '-')}-${issue.number}`.slice(0, 64) : plain;
    taken.add(id);
    ids.set(issue.number, id);
  }
  return ids;
}

/** The update a changed issue makes to its task; a running or done task keeps what it has. */
function compare(
  issue: GitHubIssue,
  task: Task,
  fields: Pick<Task, 'title' | 'prompt' | 'type' | 'dependsOn' | 'source'> & { promise?: string },
): ImportAction {
  const patch: TaskPatch = {};
  const changed: string[] = [];
  const change = <K extends keyof TaskPatch>(key: K, value: TaskPatch[K], word: string) => {
    patch[key] = value;
    changed.push(word);
  };
  if (fields.title !== task.title) change('title', fields.title, 'title');
  if (fields.prompt !== task.prompt) change('prompt', fields.prompt, 'request');
  if (fields.promise !== undefined && fields.promise !== task.promise) change('promise', fields.promise, 'promise');
  if (fields.type !== task.type) change('type', fields.type, 'type');
  if (fields.dependsOn.join() !== [...task.dependsOn].sort().join()) change('dependsOn', fields.dependsOn, 'dependencies');
  if (changed.length === 0) return { kind: 'unchanged', issue, taskId: task.id };
  if (task.status === 'in_progress')
    return {
      kind: 'kept',
      issue,
      taskId: task.id,
      reason: `the issue changed (${changed.join(', ')}) while ${task.id} runs: import again after it ends`,
    };
  if (task.status === 'done')
    return {
      kind: 'kept',
      issue,
      taskId: task.id,
      reason: `the issue changed (${changed.join(', ')}) after ${task.id} was done: a done task keeps the request it was done for`,
    };
  return { kind: 'update', issue, taskId: task.id, patch, changed };
}
