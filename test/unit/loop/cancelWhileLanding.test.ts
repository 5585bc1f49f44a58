import assert from 'node:assert/strict';
import type { MergeQueueDeps } from '../../../src/core/loop/merge/mergeQueueBase';
import { MergeQueueBase } from '../../../src/core/loop/merge/mergeQueueBase';

/** The queue's state keeping alone, its landing step played by the test. */
class Landing extends MergeQueueBase {
  /** T joins the chain, is checked green, and lands while `during` runs (a cancel may come then). */
  async landWith(taskId: string, during: () => void): Promise<void> {
    this.apply({ type: 'begin', taskId, ahead: [] });
    this.apply({ type: 'prepared', taskId });
    this.apply({ type: 'green', taskId });
    await this.whileLanding([taskId], async () => {
      during();
      await new Promise((resolve) => setImmediate(resolve)); // the commits move onto the target
      this.apply({ type: 'landed', taskId, commit: 'c0ffee', detail: 'merged' });
    });
  }
}

const deps = { target: 'main', gateConfigs: [] } as unknown as MergeQueueDeps;

describe('a cancel that arrives while its task lands', () => {
  it('is taken after the landing step: the task landed (too late to cancel), nothing throws', async () => {
    const q = new Landing(deps);
    q.enqueue('T-1', 'one');
    await q.landWith('T-1', () => q.cancel('T-1', 'cancelled by the person'));
    assert.deepEqual(
      q.snapshot.entries.map((e) => [e.taskId, e.state]),
      [['T-1', 'merged']],
    );
  });

  it('a cancel of another task meanwhile is taken at once', async () => {
    const q = new Landing(deps);
    q.enqueue('T-1', 'one');
    q.enqueue('T-2', 'two');
    await q.landWith('T-1', () => {
      q.cancel('T-2', 'cancelled by the person');
      assert.equal(
        q.snapshot.entries.some((e) => e.taskId === 'T-2'),
        false,
      );
    });
    assert.deepEqual(
      q.snapshot.entries.map((e) => [e.taskId, e.state]),
      [['T-1', 'merged']],
    );
  });
});
