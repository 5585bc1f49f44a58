import type { RalphConfig } from '../../config/schema';
import type { MergeQueue } from './mergeQueue';
import type { CheckAhead } from '../task/types';

/**
 * `merge.checkAhead` on the autopilot's queue: a COMPLETE is queued as provisional when its
 * gates start (`claimed` then wakes the autopilot, so the queue's next step starts at once),
 * and taken back when its loop does not accept it. The autopilot confirms it when the task's
 * run ends `done`.
 */
export function queueCheckAhead(
  queue: Pick<MergeQueue, 'enqueue' | 'withdraw'>,
  config: Pick<RalphConfig, 'merge'>,
  claimed: () => void,
): CheckAhead {
  return {
    claim(taskId, title) {
      if (!config.merge.checkAhead) return;
      try {
        queue.enqueue(taskId, title, { provisional: true, fresh: true });
      } catch {
        return; // the queue refused (it holds the task already): it is queued once its loop accepts COMPLETE
      }
      claimed();
    },
    drop: (taskId, why) => queue.withdraw(taskId, `its loop did not accept COMPLETE: ${why}`),
  };
}
