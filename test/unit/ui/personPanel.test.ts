/**
 * The person in the panel's protocol and model (plain Node): the answer and Request Changes
 * messages checked at the boundary, the run-end summary and the questions / review hold in the
 * model (the same reducer the webview runs), the waiting merge's files in the live status, and
 * the run outcome's words.
 */
import * as assert from 'node:assert/strict';
import { reduceLive } from '../../../src/ui/liveReducer';
import type { RalphEvent } from '../../../src/core/events';
import { runOutcomeLine, summarizeRun } from '../../../src/core/loop/run/runSummary';
import type { Task } from '../../../src/core/tasks/schema';
import type { TaskSeed } from '../../../src/protocol/panelInput';
import { reducePanel } from '../../../src/protocol/panelReducer';
import { emptyPanelState } from '../../../src/protocol/panelState';
import { parseWebviewMessage } from '../../../src/protocol/protocolSchema';

const stamp = (seq: number) => ({ runId: 'r', seq, time: `2026-01-01T10:00:0${seq}Z` });

describe('the person in the panel', () => {
  it('accepts an answer and Request Changes from the webview, and refuses what a person did not type', () => {
    assert.equal(parseWebviewMessage({ type: 'answer', taskId: 'T-001', text: 'use port 8080' }).ok, true);
    assert.equal(
      parseWebviewMessage({ type: 'answer', taskId: 'T-001', text: '', approved: true }).ok,
      true,
      'a command approved without words',
    );
    assert.equal(parseWebviewMessage({ type: 'requestChanges', taskId: 'T-001', text: 'add a test' }).ok, true);
    for (const bad of [
      { type: 'answer', taskId: 'T-001', text: '   ' },
      { type: 'answer', taskId: '../x', text: 'hi' },
      { type: 'answer', taskId: 'T-001', text: 'x'.repeat(20_001) },
      { type: 'answer', taskId: 'T-001', text: 'hi', approved: 'yes' },
      { type: 'requestChanges', taskId: 'T-001', text: ' ' },
      { type: 'command', command: 'approveTask', taskId: 'T 1' },
    ]) {
      assert.equal(parseWebviewMessage(bad).ok, false, JSON.stringify(bad).slice(0, 80));
    }
    assert.equal(parseWebviewMessage({ type: 'command', command: 'showChanges', taskId: 'T-001' }).ok, true);
  });

  it('keeps the run-end summary until the next run starts', () => {
    const outcome = { done: ['T-1'], questions: [{ taskId: 'T-2', question: 'Which port?' }], reviews: ['T-3'], failed: [] };
    let state = reducePanel(emptyPanelState(), { type: 'run.started', ...stamp(1) });
    state = reducePanel(state, { type: 'run.finished', reason: 'no more ready tasks', outcome, ...stamp(2) });
    assert.deepEqual(state.run.outcome, outcome);
    state = reducePanel(state, { type: 'run.started', ...stamp(3) });
    assert.equal(state.run.outcome, undefined);
  });

  it("syncs a task's questions and its held review from the store and checkpoint, keeping what did not change", () => {
    const seed = (extra: Partial<TaskSeed>): TaskSeed => ({
      id: 'T-2',
      title: 'Ask',
      status: 'needs_help',
      iterations: 1,
      updatedAt: 't',
      ...extra,
    });
    const questions = [{ id: 'q1', kind: 'help' as const, question: 'Which port?', askedAt: 't' }];
    let state = reducePanel(emptyPanelState(), { type: 'panel.sync', time: 't', tasks: [seed({ questions })], adopt: true });
    const first = state.tasks[0].questions;
    assert.deepEqual(first, questions);
    state = reducePanel(state, {
      type: 'panel.sync',
      time: 't',
      tasks: [seed({ questions: questions.map((q) => ({ ...q })) })],
      adopt: false,
    });
    assert.equal(state.tasks[0].questions, first, 'the same questions: the same object, no re-render');
    const hold = {
      target: 'main',
      reason: 'waits for your review',
      gates: [{ name: 'tests', passed: true, summary: '3 passed' }],
      heldAt: 't',
    };
    const history = { elapsedMs: 1, commits: 1, tokens: 1, costUsd: 0, unpricedTokens: 0, history: [] };
    state = reducePanel(state, {
      type: 'panel.sync',
      time: 't',
      tasks: [seed({ status: 'review', checkpoint: { ...history, reviewHold: hold } })],
      adopt: false,
    });
    assert.deepEqual(state.tasks[0].reviewHold, hold);
    state = reducePanel(state, { type: 'panel.sync', time: 't', tasks: [seed({ status: 'review' })], adopt: false });
    assert.deepEqual(state.tasks[0].reviewHold, hold, 'a store change without the checkpoint keeps the hold');
    state = reducePanel(state, { type: 'panel.sync', time: 't', tasks: [seed({ status: 'done' })], adopt: false });
    assert.equal(state.tasks[0].reviewHold, undefined, 'landed: no hold any more');
  });

  it('the live status names the files a waiting merge would overwrite', () => {
    const waiting = {
      type: 'merge',
      taskId: 'T-1',
      state: 'waiting',
      detail: 'uncommitted changes',
      files: ['notes.txt'],
      ...stamp(1),
    } as RalphEvent;
    const live = reduceLive({ state: 'running' }, waiting);
    assert.deepEqual(live.queue, [{ taskId: 'T-1', state: 'waiting', detail: 'uncommitted changes', files: ['notes.txt'] }]);
    const merged = reduceLive(live, { type: 'merge', taskId: 'T-1', state: 'merged', ...stamp(2) } as RalphEvent);
    assert.deepEqual(merged.queue, []);
  });

  it('summarizes a run for the person from the store as it is now', () => {
    const task = (id: string, status: Task['status'], extra: Partial<Task> = {}): Task => ({
      id,
      title: id,
      prompt: 'p',
      promise: 'q',
      status,
      priority: 1,
      dependsOn: [],
      type: 'feature',
      complexity: 3,
      iterations: 1,
      createdAt: 't',
      updatedAt: 't',
      ...extra,
    });
    const results = [
      { taskId: 'A', status: 'done' as const, reason: '' },
      { taskId: 'B', status: 'needs_help' as const, reason: 'Which port?' },
      { taskId: 'C', status: 'review' as const, reason: 'waits' },
      { taskId: 'D', status: 'timeout' as const, reason: 'max iterations (5) reached' },
      { taskId: 'E', status: 'needs_help' as const, reason: 'answered meanwhile' },
    ];
    const tasks = [
      task('A', 'done'),
      task('B', 'needs_help', { questions: [{ id: 'q1', kind: 'help', question: 'Which port?', askedAt: 't' }] }),
      task('C', 'review'),
      task('D', 'timeout'),
      task('E', 'halted'),
    ];
    const outcome = summarizeRun(results, tasks);
    assert.deepEqual(outcome, {
      done: ['A'],
      questions: [{ taskId: 'B', question: 'Which port?' }],
      reviews: ['C'],
      failed: [
        { taskId: 'D', status: 'timeout', reason: 'max iterations (5) reached' },
        { taskId: 'E', status: 'halted', reason: 'answered meanwhile' },
      ],
    });
    assert.equal(runOutcomeLine(outcome), '1 done · 2 need you (1 question, 1 to review) · 2 failed, timed out or halted');
  });
});
