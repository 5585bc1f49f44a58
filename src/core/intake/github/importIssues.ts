import type { Task } from '../../tasks/schema';
import type { TaskStore } from '../../tasks/store';
import type { RepoRef } from '../../git/issueRefs';
import { dependencyOrder } from '../cycles';
import { type ImportAction, type ImportPlan, planImport } from './importPlan';
import { readIssueBody } from './issueText';
import type { GitHubIssue, IssueQuery, IssueSource } from './types';

/** Issues fetched one by one because an imported issue depends on them, at most. */
const MAX_PULLED_IN = 100;

export interface ImportRequest extends IssueQuery {
  repo: RepoRef;
  /** Show what would change; write nothing. */
  dryRun?: boolean;
  /** Asks a person for the promise of an issue without acceptance criteria (undefined: leave it flagged). */
  askPromise?: (issue: GitHubIssue) => Promise<string | undefined>;
}

export interface ImportResult extends ImportPlan {
  /** The tasks added and updated (empty on a dry run). */
  added: Task[];
  updated: Task[];
  dryRun: boolean;
}

/**
 * Imports the open issues of a repository (by label and milestone) as tasks: the plan of
 * `planImport`, the issues the selected ones depend on fetched too, a promise asked of the person
 * for an issue that states none, then the new tasks added in one write and changed ones updated.
 */
export async function importIssues(source: IssueSource, store: TaskStore, request: ImportRequest): Promise<ImportResult> {
  // oldest first (GitHub lists newest first): the order people number their work in
  const issues = (await source.listOpenIssues(request.repo, { labels: request.labels, milestone: request.milestone })).sort(
    (a, b) => a.number - b.number,
  );
  const { pulledIn, closed, missing } = await fetchDependencies(source, request.repo, issues);
  const existing = await store.list();
  const input = { repo: request.repo, issues, pulledIn, closed, missing, existing };
  let plan = planImport(input);
  const promises = new Map<number, string>();
  if (request.askPromise) {
    for (const action of plan.actions) {
      if (action.kind !== 'flagged' || !action.needsPromise) continue;
      const promise = (await request.askPromise(action.issue))?.trim();
      if (promise) promises.set(action.issue.number, promise);
    }
    if (promises.size > 0) plan = planImport({ ...input, promises });
  }
  if (request.dryRun) return { ...plan, added: [], updated: [], dryRun: true };
  return { ...plan, ...(await applyImport(store, plan.actions)), dryRun: false };
}

/** The open issues the listed ones depend on (and theirs), fetched; closed and missing ones noted. */
async function fetchDependencies(
  source: IssueSource,
  repo: RepoRef,
  issues: GitHubIssue[],
): Promise<{ pulledIn: Map<number, number>; closed: Set<number>; missing: Set<number> }> {
  const pulledIn = new Map<number, number>();
  const closed = new Set<number>();
  const missing = new Set<number>();
  const known = new Set(issues.map((i) => i.number));
  for (let i = 0; i < issues.length; i++) {
    for (const dependency of readIssueBody(issues[i].body, repo).dependsOn) {
      if (known.has(dependency) || pulledIn.size >= MAX_PULLED_IN) continue;
      known.add(dependency);
      const issue = await source.getIssue(repo, dependency);
      if (!issue) missing.add(dependency);
      else if (issue.state === 'closed') closed.add(dependency);
      else {
        issues.push(issue);
        pulledIn.set(dependency, issues[i].number);
      }
    }
  }
  return { pulledIn, closed, missing };
}

/** New tasks in one write (dependencies first), then the changed ones. */
async function applyImport(store: TaskStore, actions: readonly ImportAction[]): Promise<{ added: Task[]; updated: Task[] }> {
  const adds = actions.flatMap((a) => (a.kind === 'add' ? [a.task] : []));
  const ordered = dependencyOrder(adds.map((task) => ({ key: task.id, dependsOn: task.dependsOn, task }))).map((n) => n.task);
  if (ordered.length > 0) await store.ensure();
  const added = ordered.length > 0 ? await store.addMany(ordered) : [];
  const updated: Task[] = [];
  for (const action of actions) if (action.kind === 'update') updated.push(await store.update(action.taskId, action.patch));
  return { added, updated };
}

/** The import as a terminal (and the editor's summary) tells it. */
export function formatImport(result: ImportResult): string {
  const lines: string[] = [];
  const count = (kind: ImportAction['kind']) => result.actions.filter((a) => a.kind === kind).length;
  const verb = result.dryRun ? 'would' : '';
  for (const action of result.actions) {
    const issue = `#${action.issue.number} ${action.issue.title}`;
    if (action.kind === 'add')
      lines.push(`  + ${action.task.id}  ${issue}${action.task.dependsOn.length ? `  (after ${action.task.dependsOn.join(', ')})` : ''}`);
    else if (action.kind === 'update') lines.push(`  ~ ${action.taskId}  ${issue}  (${action.changed.join(', ')} changed)`);
    else if (action.kind === 'unchanged') lines.push(`  = ${action.taskId}  ${issue}`);
    else if (action.kind === 'kept') lines.push(`  ! ${action.taskId}  ${issue}: ${action.reason}`);
    else lines.push(`  ✗ ${issue}: not imported: ${action.reason}`);
  }
  for (const note of result.notes) lines.push(`  · ${note}`);
  const summary = [
    `${count('add')} ${verb ? 'to add' : 'added'}`,
    `${count('update')} ${verb ? 'to update' : 'updated'}`,
    `${count('unchanged')} unchanged`,
    ...(count('kept') ? [`${count('kept')} left as they are`] : []),
    ...(count('flagged') ? [`${count('flagged')} flagged`] : []),
  ];
  return [
    `${result.actions.length} issue${result.actions.length === 1 ? '' : 's'}: ${summary.join(', ')}${result.dryRun ? ' (dry run: nothing written)' : ''}`,
    ...lines,
  ].join('\n');
}
