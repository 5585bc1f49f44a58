import type { RalphConfig } from '../../config/schema';
import { errorMessage } from '../../errors';
import type { RalphEventBody } from '../../events';
import { runGit } from '../../git/gitExec';
import { RalphPaths } from '../../paths';
import { ReportWriter } from '../../reports/reportWriter';
import type { TaskStatus } from '../../tasks/schema';
import type { TaskStore } from '../../tasks/store';
import type { CheckpointStore } from '../../record/checkpoint';
import type { MergeOutcome } from './mergeQueue';
import { observationsOf } from '../task/securityFindings';

export interface FinalAfterMergeDeps {
  workspace: string;
  /** The branch the queue merges into. */
  target: string;
  config: RalphConfig;
  store: TaskStore;
  checkpoints: CheckpointStore;
  emit(body: RalphEventBody): void;
}

/**
 * A parallel task's `final.md` is written when its agent finishes (queued for merge); the
 * merge queue decides later — merged, or given up on — and the report is written again then,
 * so it never says COMPLETE for work that did not land. Files changed are read from the
 * landed commit against its first parent (merged: only the task's own, not those of the tasks
 * that landed before it) or from the task's branch (not merged).
 */
export async function rewriteFinalAfterMerge(
  deps: FinalAfterMergeDeps,
  outcome: MergeOutcome,
  status: TaskStatus,
  reason: string,
): Promise<void> {
  const paths = new RalphPaths(deps.workspace);
  try {
    const [task, cp] = await Promise.all([deps.store.get(outcome.taskId), deps.checkpoints.load(outcome.taskId)]);
    if (!cp) return;
    // landed: what its commit brought onto the target (its first parent is the target before it, whatever
    // landed since the task began); not landed: what its branch holds since the task's base
    const [base, head] =
      outcome.state === 'merged' && outcome.commit
        ? [`${outcome.commit}^1`, outcome.commit]
        : [cp.baseCommit, outcome.state === 'merged' ? `refs/heads/${deps.target}` : `refs/heads/ralph/${outcome.taskId}`];
    const files = await changedFiles(deps.workspace, base, head);
    const file = await new ReportWriter(paths, deps.config).writeFinal({
      task,
      status,
      reason,
      maxIterations: task.maxIterations ?? deps.config.loop.maxIterations,
      checkpoint: cp,
      files,
      escalations: (cp.escalation?.history ?? []).map((e) => `iteration ${e.iteration}: ${e.from} → ${e.to} — ${e.reason}`),
      merge: {
        outcome: `${outcome.state === 'merged' ? 'Merged' : `Not merged (${outcome.state}, attempt ${outcome.attempts})`}: ${outcome.detail ?? reason}`,
        gates: outcome.gates,
      },
      observations: await observationsOf({ paths }, outcome.taskId),
    });
    deps.emit({ type: 'report.written', taskId: outcome.taskId, file: paths.relative(file), final: true });
  } catch (error) {
    deps.emit({
      type: 'warning',
      taskId: outcome.taskId,
      code: 'report-failed',
      message: `could not rewrite the final report after the merge queue decided: ${errorMessage(error)}`,
    });
  }
}

async function changedFiles(
  workspace: string,
  base: string | undefined,
  head: string,
): Promise<{ added: string[]; modified: string[]; deleted: string[] }> {
  const files = { added: [] as string[], modified: [] as string[], deleted: [] as string[] };
  if (!base) return files;
  const diff = await runGit(workspace, ['diff', '--name-status', '--no-renames', base, head, '--']);
  if (diff.code !== 0) return files;
  for (const [status, file] of diff.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => l.split('\t'))) {
    if (!file || file === '.ralph/tasks.json' || file === '.ralph/config.json') continue;
    (status.startsWith('A') ? files.added : status.startsWith('D') ? files.deleted : files.modified).push(file);
  }
  return files;
}
