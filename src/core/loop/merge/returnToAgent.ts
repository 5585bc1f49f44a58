import type { CheckpointStore } from '../../record/checkpoint';
import type { MergeOutcome } from './mergeQueue';

/**
 * What the agent is told when the merge queue sends its finished work back: the conflict (and
 * its hunks) or the merged check's failures, and that the target is now merged into its branch.
 */
export function mergeFeedback(outcome: MergeOutcome, target: string, conflicted: readonly string[]): string[] {
  if (outcome.state === 'conflict') {
    return [
      `Merge queue: your completed work conflicts with ${target}, which changed since you started (${outcome.detail ?? ''}). ${target} is now merged into your branch${conflicted.length > 0 ? `; resolve the conflict markers in ${conflicted.join(', ')} (keep both intents), commit, and signal COMPLETE again` : ' and conflict markers you committed earlier must go; fix them and signal COMPLETE again'}.`,
      ...(outcome.hunks ?? []).map((h) => `Conflict in ${h.file}:\n${h.text}`),
    ];
  }
  return [
    `Merge queue: your work passed its gates alone, but the required gates fail once it is merged with the current ${target} (${outcome.detail ?? ''}). ${target} is now merged into your branch; make both work together and signal COMPLETE again.`,
    ...(outcome.feedback ?? []),
  ];
}

/**
 * Hands a task's finished work back to its agent: its last iteration counts as not complete
 * any more, with `lines` first in the feedback its next iteration reads. (A resumed task whose
 * last iteration completed would otherwise go straight back to the merge queue.)
 */
export async function handBack(checkpoints: CheckpointStore, taskId: string, lines: readonly string[]): Promise<void> {
  const cp = await checkpoints.load(taskId);
  if (!cp || cp.history.length === 0) return;
  const last = cp.history[cp.history.length - 1];
  await checkpoints.save({
    ...cp,
    review: undefined,
    history: [...cp.history.slice(0, -1), { ...last, outcome: 'continue', feedback: [...lines, ...last.feedback] }],
  });
}
