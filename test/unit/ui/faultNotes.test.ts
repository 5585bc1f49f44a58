import * as assert from 'node:assert/strict';
import { formatEvent } from '../../../src/core/eventFormat';
import { PanelModel } from '../../../src/ui/panel/panelModel';
import { EventScript } from '../../fixtures/panelEvents';

describe('model faults, fallbacks and wind-downs as the panel and the terminal show them', () => {
  function script(): EventScript {
    const s = new EventScript();
    s.add({ type: 'run.started', workspace: '/w', taskIds: ['T-001'] });
    s.add({ type: 'task.started', taskId: 'T-001', title: 'Login', iteration: 1, maxIterations: 5, resumed: false });
    s.add({ type: 'iteration.started', taskId: 'T-001', iteration: 1, maxIterations: 5, model: 'gpt-4.1' });
    s.add({
      type: 'model.fault',
      taskId: 'T-001',
      iteration: 1,
      model: 'gpt-4.1',
      fault: 'content_filter',
      action: 'feedback',
      message: 'the provider stopped the reply',
    });
    s.add({
      type: 'model.fallback',
      kind: 'switch',
      from: 'gpt-4.1',
      to: 'claude-sonnet at openrouter.ai',
      fault: 'quota',
      reason: 'HTTP 429 You exceeded your current quota',
      cooldownSec: 300,
    });
    s.add({
      type: 'warning',
      code: 'model-switch',
      message:
        'model gpt-4.1 is failing (quota or credits exhausted: HTTP 429); switched to the fallback claude-sonnet at openrouter.ai, the primary is probed again in 300 s',
    });
    s.add({
      type: 'wind-down',
      taskId: 'T-001',
      iteration: 1,
      cause: 'stop',
      reason: 'the user pressed Stop',
      wrote: ['.ralph/progress/T-001.md'],
    });
    return s;
  }

  it('the task timeline gets a line for the fault and for the wind-down; the switch is a warning card naming both models', () => {
    const model = new PanelModel();
    for (const event of script().events) model.ingest(event);
    const task = model.state.tasks.find((t) => t.id === 'T-001')!;
    const notes = task.stream.filter((e) => e.kind === 'note').map((e) => (e.kind === 'note' ? `${e.level}: ${e.text}` : ''));
    assert.deepEqual(notes, [
      'warning: content filtered — told to the agent (content filter, gpt-4.1): the provider stopped the reply',
      'warning: wind-down (the user pressed Stop): progress notes written to .ralph/progress/T-001.md, then committed',
    ]);
    const [card] = model.state.warnings;
    assert.equal(card.code, 'model-switch');
    assert.match(card.message, /gpt-4\.1 .* claude-sonnet at openrouter\.ai/);
  });

  it('the CLI prints one line for each', () => {
    const lines = script()
      .events.map((e) => formatEvent(e))
      .filter((l): l is string => l !== undefined);
    assert.ok(lines.includes('    ⚡ content filtered (gpt-4.1) — told to the agent: the provider stopped the reply'), lines.join('\n'));
    const switched = lines.filter((l) => l.includes('switched to the fallback'));
    assert.equal(switched.length, 1, 'the event and its warning make one line');
    assert.match(
      switched[0],
      /^⇄ model gpt-4\.1 is failing \(quota or credits exhausted: HTTP 429\); switched to the fallback claude-sonnet at openrouter\.ai/,
    );
    assert.ok(lines.includes('    ⏏ wind-down (the user pressed Stop): wrote .ralph/progress/T-001.md'), lines.join('\n'));
  });
});
