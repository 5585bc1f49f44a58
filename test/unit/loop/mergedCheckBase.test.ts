import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { GateConfig } from '../../../src/core/config/schema';
import type { RalphEvent, RalphEventBody } from '../../../src/core/events';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { MergeQueue } from '../../../src/core/loop/merge/mergeQueue';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * The merged check against the target's tip: main already has one red test (a date that
 * passed). A task that leaves it red merges; a task whose merge adds a red test does not;
 * the target never gets redder. Real git, worktrees and node:test.
 */
const RED_ON_MAIN =
  "const test = require('node:test');\nconst assert = require('node:assert');\ntest('release date is in the future', () => assert.ok(new Date('2020-01-01') > new Date()));\n";
const LIMIT_TEST =
  "const test = require('node:test');\nconst assert = require('node:assert');\nconst { limit } = require('./limit');\ntest('the limit is ten', () => assert.equal(limit, 10));\n";
const GATES: GateConfig[] = [{ name: 'tests', command: 'node --test', kind: 'tests', required: true }];

describe('merged check against the target tip (real git, node:test)', function () {
  this.timeout(60000);
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let events: RalphEvent[];
  beforeEach(async () => {
    ws = await makeTempWorkspace({
      commit: true,
      files: { 'release.test.js': RED_ON_MAIN, 'limit.js': 'exports.limit = 10;\n', 'limit.test.js': LIMIT_TEST },
    });
    wt = new WorktreeManager(ws.dir);
    events = [];
  });
  afterEach(async () => ws.cleanup());

  function queue(gateConfigs: GateConfig[] = GATES): MergeQueue {
    let seq = 0;
    const emit = (body: RalphEventBody) => void events.push({ ...body, runId: 'r', seq: ++seq, time: '' } as RalphEvent);
    return new MergeQueue({
      worktrees: wt,
      gates: new ProcessGateRunner(new NodeCommandRunner()),
      gateConfigs,
      target: 'main',
      strategy: 'squash',
      emit,
    });
  }

  async function taskWork(taskId: string, files: Record<string, string>): Promise<void> {
    const { path: dir } = await wt.create(taskId, 'main');
    for (const [rel, content] of Object.entries(files)) await fs.writeFile(path.join(dir, rel), content);
    ws.git('-C', dir, 'add', '-A');
    ws.git('-C', dir, 'commit', '-q', '-m', `ralph(${taskId}): iteration 1`);
  }

  it('a failure already red on the target does not hold a merge back; it is named as such', async () => {
    await taskWork('T-1', {
      'greet.js': 'exports.greet = () => "hi";\n',
      'greet.test.js': "require('node:test')('greets', () => require('node:assert').equal(require('./greet').greet(), 'hi'));\n",
    });
    const q = queue();
    q.enqueue('T-1', 'greet');
    const outcome = await q.processNext();
    assert.equal(outcome?.state, 'merged', outcome?.detail);
    assert.match(
      outcome?.gates?.[0].summary ?? '',
      /1 already failing on main before this merge, unrelated to the task, not held against the task/,
    );
    const checks = events.filter((e): e is Extract<RalphEvent, { type: 'gate.finished' }> => e.type === 'gate.finished');
    assert.equal(checks.length, 1, 'the tip is run for its verdict without announcing it as the merged check');
    assert.deepEqual(checks[0].preExisting, ['release date is in the future']);
  });

  it('a new failure does: the target never gets redder', async () => {
    await taskWork('T-2', { 'limit.js': 'exports.limit = 12;\n' });
    const q = queue();
    q.enqueue('T-2', 'raise the limit');
    const outcome = await q.processNext();
    assert.equal(outcome?.state, 'failed');
    assert.match(outcome?.detail ?? '', /required gates fail on the merged result: tests/);
    assert.ok(
      outcome?.feedback?.some((f) => /failing test: the limit is ten/.test(f)),
      JSON.stringify(outcome?.feedback),
    );
    assert.ok(!outcome?.feedback?.some((f) => /release date/.test(f) && !/pre-existing/.test(f)), "the old failure is not the task's");
    assert.equal(ws.git('rev-list', '--count', 'main'), '1', 'main did not move');
  });

  it('baseline: false on the gate keeps the queue all-green only', async () => {
    await taskWork('T-3', { 'notes.md': 'notes\n' });
    const q = queue([{ ...GATES[0], baseline: false }]);
    q.enqueue('T-3', 'notes');
    assert.equal((await q.processNext())?.state, 'failed');
  });
});
