import type { RalphConfig } from '../../config/schema';
import type { RalphEventBody } from '../../events';
import { checkGate } from '../../gates/taskCheck';
import type { GateRunner } from '../../gates/types';
import type { WorktreeManager } from '../../git/worktrees';
import type { RalphPaths } from '../../paths';
import type { TaskStore } from '../../tasks/store';
import { chainFile, ChainFileWriter, chainSnapshot } from './mergeChainFile';
import { mergeNotes } from './mergeNotes';
import { MergeQueue } from './mergeQueue';
import { verdictTask } from '../task/taskEvidence';

export interface MergeQueueSetup {
  config: Pick<RalphConfig, 'gates' | 'merge' | 'proof'>;
  store: TaskStore;
  /** The workspace (the user's repository). */
  workspace: string;
  worktrees: WorktreeManager;
  gates: GateRunner;
  target: string;
  emit?(body: RalphEventBody): void;
  /** `merge.review` manual (or the task's own `review`): its green result is held for a person instead of landing. */
  holdForReview?(taskId: string): Promise<boolean>;
  /** Where the chain is saved for `ralph status` (a run's queue; none for the review desk's one-task queue). */
  paths?: RalphPaths;
}

/**
 * The one way a merge queue is made — a run's, and the review desk's that lands an approval
 * with no run going — so that the same chain rules apply to both: `merge.concurrency` checks at
 * once, `merge.batchSize`, the task's own `check` in its merged check, `Closes #N` in its commit.
 */
export function createMergeQueue(setup: MergeQueueSetup): MergeQueue {
  const { config, store } = setup;
  const writer = setup.paths ? new ChainFileWriter(chainFile(setup.paths)) : undefined;
  return new MergeQueue({
    worktrees: setup.worktrees,
    gates: setup.gates,
    gateConfigs: config.gates,
    target: setup.target,
    strategy: config.merge.strategy,
    concurrency: config.merge.concurrency,
    batchSize: config.merge.batchSize,
    emit: setup.emit,
    holdForReview: setup.holdForReview,
    notes: mergeNotes(store, setup.workspace),
    // a task's own check is part of its merged check too
    taskGates: async (taskId) => [checkGate(await store.get(taskId), config.gates)].filter((g) => g !== undefined),
    // what the merged check's verdict against the tip reads of the task: its words and declared known failures
    verdictTask: async (taskId) => verdictTask(await store.get(taskId), config),
    ...(writer ? { onChange: (state) => writer.save(chainSnapshot(state, setup.target)), saved: () => writer.settled() } : {}),
  });
}
