import assert from 'node:assert/strict';
import {
  currentModel,
  type EscalationState,
  initialTier,
  recordIterationResult,
  startEscalation,
} from '../../../src/core/escalation/ladder';
import { detectStuck, type IterationFingerprint } from '../../../src/core/escalation/stuck';

const settings = { ladder: ['a', 'b', 'c'], threshold: 2, councilAfter: 3 };

describe('model ladder', () => {
  it('picks the initial tier from type and complexity, clamped to the ladder', () => {
    assert.equal(initialTier({ type: 'feature', complexity: 4 }, 3), 0);
    assert.equal(initialTier({ type: 'feature', complexity: 5 }, 3), 1);
    assert.equal(initialTier({ type: 'bugfix', complexity: 8 }, 3), 1);
    assert.equal(initialTier({ type: 'refactor', complexity: 9 }, 3), 2);
    assert.equal(initialTier({ type: 'feature', complexity: 14 }, 2), 1, 'clamped');
    assert.equal(initialTier({ type: 'security', complexity: 1 }, 3), 2);
    assert.equal(initialTier({ type: 'architecture', complexity: 1 }, 4), 3);
    assert.equal(initialTier({ type: 'docs', complexity: 1 }, 1), 0);
  });

  it('asks a, a, then b, b, then c, and convenes the council after councilAfter failures at the top', () => {
    let state: EscalationState = startEscalation({ type: 'feature', complexity: 2 }, 3);
    const models: string[] = [];
    const guidance: (string | undefined)[] = [];
    let convenedAt: number | undefined;
    for (let iteration = 1; iteration <= 8 && convenedAt === undefined; iteration++) {
      models.push(currentModel(state, settings.ladder));
      const step = recordIterationResult(state, settings, { failed: true, iteration, reason: 'tests fail' });
      guidance.push(step.guidance);
      state = step.state;
      if (step.convene) convenedAt = iteration;
    }
    assert.deepEqual(models, ['a', 'a', 'b', 'b', 'c', 'c', 'c']);
    assert.equal(convenedAt, 7);
    assert.match(guidance[0] ?? '', /Look at what failed/);
    assert.match(guidance[1] ?? '', /stronger model/);
    assert.deepEqual(
      state.history.map((h) => `${h.from}->${h.to}@${h.iteration}`),
      ['a->b@2', 'b->c@4'],
    );
  });

  it('resets the count on success and asks for a different approach on a repeated failure', () => {
    const threshold3 = { ...settings, threshold: 3 };
    let state = startEscalation({ type: 'feature', complexity: 2 }, 3);
    state = recordIterationResult(state, threshold3, { failed: true, iteration: 1 }).state;
    const second = recordIterationResult(state, threshold3, { failed: true, iteration: 2 });
    assert.match(second.guidance ?? '', /different approach/);
    state = recordIterationResult(second.state, threshold3, { failed: false, iteration: 3 }).state;
    assert.equal(state.failuresAtTier, 0);
    assert.equal(state.tier, 0);
  });

  it('escalates to the top at once when forced (stuck, persistent high security finding)', () => {
    const step = recordIterationResult(startEscalation({ type: 'feature', complexity: 2 }, 3), settings, {
      failed: true,
      iteration: 1,
      force: 'stuck: same failing tests',
    });
    assert.equal(step.state.tier, 2);
    assert.equal(step.escalated?.reason, 'stuck: same failing tests');
    const atTop = recordIterationResult(step.state, settings, { failed: true, iteration: 2, force: 'stuck again' });
    assert.equal(atTop.convene, true, 'forced at the top convenes the council');
  });
});

describe('stuck detection', () => {
  const it3 = (fields: Partial<IterationFingerprint>[]): IterationFingerprint[] =>
    fields.map((f, i) => ({ iteration: i + 1, filesChanged: [], failingTests: [], failed: true, ...f }));

  it('flags the same failing tests, the same error, or the same files three iterations running', () => {
    assert.match(
      detectStuck(it3([{ failingTests: ['t1', 't2'] }, { failingTests: ['t2', 't1'] }, { failingTests: ['t1', 't2'] }])).reason ?? '',
      /same failing tests/,
    );
    assert.match(
      detectStuck(
        it3([
          { error: 'ECONNREFUSED 127.0.0.1:5432 at 12:00:01' },
          { error: 'ECONNREFUSED 127.0.0.1:5432 at 12:00:09' },
          { error: 'ECONNREFUSED 127.0.0.1:5432 at 12:01:44' },
        ]),
      ).reason ?? '',
      /same error/,
    );
    assert.match(
      detectStuck(it3([{ filesChanged: ['a.ts'] }, { filesChanged: ['a.ts'] }, { filesChanged: ['a.ts'] }])).reason ?? '',
      /same files/,
    );
  });

  it('does not flag varying failures, fewer than three, or a success in between', () => {
    assert.equal(detectStuck(it3([{ failingTests: ['t1'] }, { failingTests: ['t2'] }, { failingTests: ['t1'] }])).stuck, false);
    assert.equal(detectStuck(it3([{ failingTests: ['t1'] }, { failingTests: ['t1'] }])).stuck, false);
    assert.equal(
      detectStuck(it3([{ failingTests: ['t1'] }, { failingTests: ['t1'], failed: false }, { failingTests: ['t1'] }])).stuck,
      false,
    );
    assert.equal(detectStuck(it3([{}, {}, {}])).stuck, false, 'nothing in common is not a pattern');
  });
});
