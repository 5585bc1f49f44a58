import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RalphConfig } from '../../config/schema';
import { RalphError } from '../../errors';
import type { RalphEventBody } from '../../events';
import { git, runGit } from '../../git/gitExec';
import { WorktreeManager } from '../../git/worktrees';
import { removeTree } from '../../util/removeTree';
import { integrityJudge, takeIntegrityBaseline } from './integrityStep';
import { RalphPaths } from '../../paths';
import { type Clock, systemClock } from '../../ports';
import { type Task, TaskSchema } from '../../tasks/schema';
import { runGates } from '../../gates/runGates';
import type { GateOutcome, GateReport, GateRunner } from '../../gates/types';

export interface BaseCheckInput {
  workspace: string;
  config: RalphConfig;
  /** A gate runner for a root: the base's scratch worktree or the workspace (each sandboxed to its root). */
  runnerFor(root: string): GateRunner;
  /** The commit to judge against; without it the gates are judged on their own (no integrity baseline). */
  base?: string;
  /** The task whose branch this is: its `allowGateChanges` applies. */
  task?: Task;
  signal?: AbortSignal;
  emit?(body: RalphEventBody): void;
  clock?: Clock;
}

export interface BaseCheckResult {
  verdict: 'pass' | 'fail';
  /** The base commit judged against (full sha), when there was one. */
  base?: string;
  head: string;
  report: GateReport;
  /** Lines for the reader: what was compared, what was not. */
  notes: string[];
}

/**
 * `ralph gate`: the required gates with integrity, as the loop and the merge queue judge them.
 * At `base` (in a scratch worktree) the required gates' definitions and test inventories are
 * recorded, exactly as before a task's first iteration; then every gate runs on HEAD and each
 * required one is judged against that record (tests gone or skipped, fewer tests, changed gate
 * definitions fail it, unless the task allows changing that gate). One function, so whatever the
 * loop's baseline learns (base verdicts: failures already there) applies here too.
 */
export async function checkAgainstBase(input: BaseCheckInput): Promise<BaseCheckResult> {
  const { workspace, config } = input;
  const head = (await git(workspace, ['rev-parse', 'HEAD'])).trim();
  const task = input.task ?? gateTask();
  const notes: string[] = [];
  const clock = input.clock ?? systemClock;
  const emit = input.emit ?? (() => undefined);
  const paths = new RalphPaths(workspace);
  let base: string | undefined;
  let judge: ((gate: RalphConfig['gates'][number], outcome: GateOutcome) => Promise<GateOutcome>) | undefined;
  if (input.base) {
    base = await resolveCommit(workspace, input.base);
    const scratch = await addScratchWorktree(workspace, base, config.worktrees.link);
    try {
      const baseline = await takeIntegrityBaseline(
        { config, gates: input.runnerFor(scratch), paths, work: new RalphPaths(scratch), clock, emit },
        task,
        input.signal ?? new AbortController().signal,
      );
      if (!baseline) throw new RalphError('stopped while recording the gates at the base', 'stopped');
      judge = integrityJudge({ paths, work: undefined, config }, task, baseline, base);
      notes.push(`judged against ${base.slice(0, 10)}: what each required gate checked there (tests, definitions) must still be checked`);
    } finally {
      await removeScratchWorktree(workspace, scratch);
    }
  } else {
    notes.push('no --base: the gates are judged on their own, not against a base (tests removed or skipped would go unnoticed)');
  }
  const report = await runGates({
    gates: config.gates,
    runner: input.runnerFor(workspace),
    cwd: workspace,
    signal: input.signal,
    emit,
    ...(judge ? { judge } : {}),
  });
  if (config.gates.length === 0) notes.push('no gates are configured in .ralph/config.json: nothing to check');
  const requiredPass = report.outcomes.filter((o) => o.required).every((o) => o.passed) && !report.critical;
  const complete = report.outcomes.length === config.gates.length;
  return { verdict: requiredPass && complete ? 'pass' : 'fail', ...(base ? { base } : {}), head, report, notes };
}

/** A stand-in task for a check that belongs to none: nothing about its gates may change. */
function gateTask(): Task {
  const now = new Date(0).toISOString();
  return TaskSchema.parse({
    id: 'ralph-gate',
    title: 'ralph gate',
    prompt: 'ralph gate',
    promise: 'the required gates pass',
    createdAt: now,
    updatedAt: now,
  });
}

async function resolveCommit(workspace: string, rev: string): Promise<string> {
  const result = await runGit(workspace, ['rev-parse', '--verify', '--quiet', `${rev}^{commit}`]);
  if (result.code !== 0) {
    throw new RalphError(
      `the base ${rev} is not a commit of this clone (in a workflow, check out with fetch-depth: 0, or fetch the base first)`,
      'bad-base',
    );
  }
  return result.stdout.trim();
}

/** A detached worktree of `base` outside the workspace, with the workspace's installed dependencies linked in. */
async function addScratchWorktree(workspace: string, base: string, links: readonly string[]): Promise<string> {
  const dir = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-gate-base-')));
  const scratch = path.join(dir, 'base');
  await git(workspace, ['worktree', 'add', '--detach', '--quiet', scratch, base]);
  await new WorktreeManager(workspace, links).linkShared(scratch);
  return scratch;
}

async function removeScratchWorktree(workspace: string, scratch: string): Promise<void> {
  await runGit(workspace, ['worktree', 'remove', '--force', scratch]);
  await removeTree(path.dirname(scratch));
  await runGit(workspace, ['worktree', 'prune']);
}
