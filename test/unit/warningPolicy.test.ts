import assert from 'node:assert/strict';
import { unattendedSafeguards } from '../../src/core/ports';
import type { RalphEvent } from '../../src/core/events';
import { SAFEGUARD_CODES, WARNING_POLICY, warningRule } from '../../src/core/warningPolicy';
import { warningActions } from '../../src/protocol/panelState';
import { reduceLive } from '../../src/ui/liveReducer';

const stamp = { runId: 'r', seq: 1, time: '2026-01-01T00:00:00.000Z' };

describe('the warning policy, read by every surface', () => {
  it('names the six safeguards, and only they wait, pause or take answers', () => {
    assert.deepEqual([...SAFEGUARD_CODES].sort(), [
      'error-threshold',
      'iteration-ratio',
      'no-commits',
      'security-critical',
      'spend-rate',
      'task-ended',
    ]);
    assert.equal(warningRule('model-switch'), undefined);
    assert.equal(warningRule('toString'), undefined, 'an inherited property is not a rule');
    // what pauses the autopilot also waits for the answer
    for (const code of SAFEGUARD_CODES) if (WARNING_POLICY[code].pauses) assert.equal(WARNING_POLICY[code].waits, true, code);
  });

  it('the panel offers each safeguard its answers, and Dismiss on any other warning', () => {
    assert.deepEqual(warningActions('error-threshold'), ['reviewErrors', 'continue', 'stop']);
    assert.deepEqual(warningActions('iteration-ratio'), ['continue', 'increaseMax']);
    assert.deepEqual(warningActions('model-switch'), ['dismiss']);
  });

  it('nobody to ask: the stopping safeguards stop, the others follow safeguards.onWarning', async () => {
    const decide = (code: (typeof SAFEGUARD_CODES)[number], onWarning: 'continue' | 'stop') =>
      unattendedSafeguards(onWarning).decide({ code, taskId: 'T-1', message: 'm', iteration: 1, maxIterations: 4 });
    for (const code of ['error-threshold', 'spend-rate', 'security-critical'] as const)
      assert.deepEqual(await decide(code, 'continue'), { action: 'stop' });
    for (const code of ['no-commits', 'iteration-ratio', 'task-ended'] as const) {
      assert.deepEqual(await decide(code, 'continue'), { action: 'continue' });
      assert.deepEqual(await decide(code, 'stop'), { action: 'stop' });
    }
  });

  it("the status bar's attention follows a safeguard's warning, not an informing one", () => {
    const warning = (code: string) => ({ type: 'warning', code, message: `${code} happened`, ...stamp }) as RalphEvent;
    assert.equal(reduceLive({ state: 'running' }, warning('spend-rate')).attention, 'spend-rate happened');
    assert.equal(reduceLive({ state: 'running' }, warning('model-switch')).attention, undefined);
  });
});
