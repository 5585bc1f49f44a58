import assert from 'node:assert/strict';
import { decisiveSignal, parseSignals } from '../../../src/core/signals/parser';
import { formatSignal } from '../../../src/core/signals/types';

describe('signal parser', () => {
  it('reads every signal kind of DESIGN §4', () => {
    const text =
      'a <ralph>PROGRESS:50</ralph> b <ralph>BLOCKED: no db</ralph> <ralph>NEEDS_HELP:which port?</ralph> <ralph>COMPLETE</ralph>';
    assert.deepEqual(parseSignals(text), [
      { kind: 'PROGRESS', percent: 50 },
      { kind: 'BLOCKED', reason: 'no db' },
      { kind: 'NEEDS_HELP', question: 'which port?' },
      { kind: 'COMPLETE' },
    ]);
  });

  it('accepts payloads across lines, clamps progress and skips unknown or malformed tags', () => {
    assert.deepEqual(parseSignals('<ralph>BLOCKED:line one\nline two</ralph>'), [{ kind: 'BLOCKED', reason: 'line one\nline two' }]);
    assert.deepEqual(parseSignals('<ralph>PROGRESS:150</ralph><ralph>PROGRESS:abc</ralph><ralph>DANCE</ralph><ralph>COMPLETE'), [
      { kind: 'PROGRESS', percent: 100 },
    ]);
    assert.deepEqual(parseSignals('no signals here'), []);
  });

  it('lets a stop signal outrank COMPLETE and COMPLETE outrank progress', () => {
    assert.equal(decisiveSignal(parseSignals('<ralph>COMPLETE</ralph><ralph>PROGRESS:90</ralph>'))?.kind, 'COMPLETE');
    assert.equal(decisiveSignal(parseSignals('<ralph>COMPLETE</ralph><ralph>BLOCKED:x</ralph>'))?.kind, 'BLOCKED');
    assert.deepEqual(decisiveSignal(parseSignals('<ralph>PROGRESS:10</ralph><ralph>PROGRESS:30</ralph>')), {
      kind: 'PROGRESS',
      percent: 30,
    });
    assert.equal(decisiveSignal([]), undefined);
  });

  it('formats signals the way the timeline shows them', () => {
    assert.equal(formatSignal({ kind: 'PROGRESS', percent: 40 }), 'PROGRESS:40');
    assert.equal(formatSignal({ kind: 'BLOCKED', reason: 'r' }), 'BLOCKED:r');
    assert.equal(formatSignal({ kind: 'COMPLETE' }), 'COMPLETE');
  });
});
