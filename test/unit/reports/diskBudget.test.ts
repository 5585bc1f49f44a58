import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphEvent } from '../../../src/core/events';
import { GateLog } from '../../../src/core/gates/gateLog';
import { boundRecord, boundPending } from '../../../src/core/loop/task/boundedRecord';
import type { IterationRecord, PendingCommit } from '../../../src/core/record/checkpoint';
import { RunLog } from '../../../src/core/loop/run/runLog';
import { RalphPaths } from '../../../src/core/paths';
import { DiskBudget, pruneToBudget } from '../../../src/core/reports/diskBudget';
import { TaskStore } from '../../../src/core/tasks/store';
import { boundDeep, boundText, STORED_TEXT_MAX } from '../../../src/core/util/bounded';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

async function fileAt(file: string, bytes: number, ageSeconds: number): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, Buffer.alloc(bytes, 0x61));
  const when = new Date(Date.now() - ageSeconds * 1000);
  await fs.utimes(file, when, when);
}

describe('bounded disk', () => {
  let ws: TempWorkspace;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
  });
  afterEach(async () => ws.cleanup());

  it('a gate log keeps its first quarter and last three quarters, and says how much it left out', async () => {
    const log = (await GateLog.open(ws.dir, 3, 'unit tests', 4096))!;
    let sent = '';
    for (let i = 0; i < 2000; i++) {
      const line = `line ${i}\n`;
      sent += line;
      log.write(line);
    }
    const file = (await log.close(''))!;
    assert.equal(path.basename(file), 'iteration-3-unit_tests.log');
    const text = await fs.readFile(file, 'utf8');
    const [head, rest] = text.split(/\n… \[\d+ bytes of output left out here[^\n]*\n/);
    assert.equal(head, sent.slice(0, 1024));
    assert.equal(rest, sent.slice(-3072));
    assert.match(
      text,
      new RegExp(
        `… \\[${Buffer.byteLength(sent) - 4096} bytes of output left out here: a gate log keeps its first and last part, 4096 bytes in all \\(reports\\.logMaxKb\\)\\] …`,
      ),
    );
    // a small output is kept whole, and an output captured at the end (the editor's task API) too
    const small = (await GateLog.open(ws.dir, 4, 'g', 4096))!;
    assert.equal(await fs.readFile((await small.close('all of it\n'))!, 'utf8'), 'all of it\n');
  });

  it('prunes the oldest files first, final reports last, never the files it must keep, and removes emptied folders', async () => {
    const reports = ws.path('.ralph/reports');
    const runs = ws.path('.ralph/runs');
    await fileAt(path.join(reports, 'T-001/gates/iteration-1-t.log'), 400, 500);
    await fileAt(path.join(reports, 'T-001/final.md'), 100, 600);
    await fileAt(path.join(reports, 'T-002/iteration-1.md'), 300, 400);
    await fileAt(path.join(runs, 'old.ndjson'), 300, 300);
    await fileAt(path.join(runs, 'current.ndjson'), 300, 1000);
    await fileAt(path.join(reports, 'T-002/gates/iteration-2-t.log'), 300, 10);
    assert.deepEqual((await pruneToBudget([reports, runs], 5000)).removed, [], 'within the budget: nothing');
    const result = await pruneToBudget([reports, runs], 1000, new Set([path.join(runs, 'current.ndjson')]));
    assert.equal(result.totalBytes, 1700);
    assert.deepEqual(
      result.removed.map((f) => path.relative(ws.dir, f)),
      ['.ralph/reports/T-001/gates/iteration-1-t.log', '.ralph/reports/T-002/iteration-1.md', '.ralph/runs/old.ndjson'],
    );
    assert.equal(result.freedBytes, 1000);
    assert.equal(ws.exists('.ralph/reports/T-001/gates'), false, 'an emptied folder goes too');
    assert.equal(ws.exists('.ralph/reports/T-001/final.md'), true);
    assert.equal(ws.exists('.ralph/runs/current.ndjson'), true);
    assert.equal(ws.exists('.ralph/reports'), true);
  });

  it("DiskBudget says what it removed, and looks every 10 iterations and at a task's end, at most once a minute", async () => {
    const events: unknown[] = [];
    await fileAt(ws.path('.ralph/reports/T-001/iteration-1.md'), 2 * 1024 * 1024, 100);
    let clock = 0;
    const budget = new DiskBudget(
      new RalphPaths(ws.dir),
      1024 * 1024,
      [],
      (e) => events.push(e),
      () => clock,
    );
    await budget.prune();
    await fileAt(ws.path('.ralph/reports/T-001/iteration-1.md'), 2 * 1024 * 1024, 100);
    clock = 30_000;
    for (let i = 0; i < 10; i++) await budget.afterIteration();
    assert.equal(ws.exists('.ralph/reports/T-001/iteration-1.md'), true, 'not within a minute of the last look');
    clock = 61_000;
    for (let i = 0; i < 9; i++) await budget.afterIteration();
    assert.equal(ws.exists('.ralph/reports/T-001/iteration-1.md'), true, 'only every 10th iteration');
    await budget.afterIteration();
    assert.equal(ws.exists('.ralph/reports/T-001/iteration-1.md'), false);
    // a task's end looks too, at most once a minute (four tasks that end together walk the folders once)
    await fileAt(ws.path('.ralph/reports/T-002/iteration-1.md'), 2 * 1024 * 1024, 200);
    clock = 90_000;
    await budget.taskEnded();
    assert.equal(ws.exists('.ralph/reports/T-002/iteration-1.md'), true, 'not within a minute of the last look');
    clock = 122_000;
    await budget.taskEnded();
    assert.equal(ws.exists('.ralph/reports/T-002/iteration-1.md'), false);
    assert.match(
      (events[0] as { message: string }).message,
      /held 2\.0 MB, over their budget of 1\.0 MB \(reports\.maxTotalMb\): removed the 1 oldest file \(2\.0 MB\)/,
    );
  });

  it('bounds what a model wrote where it is stored: records, write-ahead records, the task store, the run log', async () => {
    const huge = 'why '.repeat(50_000);
    const files = Array.from({ length: 100_000 }, (_, i) => `data/f${i}`);
    const record = boundRecord({
      iteration: 1,
      startedAt: '',
      durationMs: 1,
      model: 'm',
      outcome: 'blocked',
      signal: `BLOCKED:${huge}`,
      filesChanged: files,
      summary: huge,
      feedback: Array.from({ length: 100 }, () => huge),
      gates: [],
      failingTests: [],
      failed: false,
      highFinding: false,
      tampering: [],
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    } as IterationRecord);
    assert.equal(record.filesChanged.length, 200);
    assert.equal(record.filesChangedTotal, 100_000);
    assert.ok((record.signal ?? '').length < STORED_TEXT_MAX + 60);
    assert.equal(record.feedback.length, 41);
    assert.ok(JSON.stringify(record).length < 250_000);
    const pending = boundPending({
      iteration: 1,
      model: 'm',
      startedAt: '',
      run: {
        signals: [{ kind: 'BLOCKED', reason: huge }],
        finalText: huge,
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        steps: 1,
        stepLimitHit: false,
        toolCalls: 0,
        toolErrors: 0,
        stopped: false,
      },
    } as PendingCommit);
    assert.ok(JSON.stringify(pending).length < 3 * STORED_TEXT_MAX);
    assert.equal(boundText('short'), 'short');

    const store = new TaskStore(new RalphPaths(ws.dir));
    const task = await store.add({ title: 't', prompt: 'p', promise: 'q' });
    const updated = await store.update(task.id, { status: 'blocked', blockedReason: huge, lastSignal: `BLOCKED:${huge}` });
    assert.ok((updated.blockedReason ?? '').length < STORED_TEXT_MAX + 60);
    assert.match(updated.blockedReason ?? '', /… \[\d+ more characters not kept\]$/);
    assert.ok((await fs.stat(ws.path('.ralph/tasks.json'))).size < 16 * 1024);

    const log = new RunLog(ws.path('.ralph/runs/r.ndjson'));
    log.append({
      type: 'git.commit',
      taskId: 'T-001',
      iteration: 1,
      sha: 'abc',
      message: 'm',
      files,
      runId: 'r',
      seq: 1,
      time: '',
    } as RalphEvent);
    log.append({ type: 'warning', code: 'x', message: 'small', runId: 'r', seq: 2, time: '' } as RalphEvent);
    await log.close();
    const lines = (await fs.readFile(ws.path('.ralph/runs/r.ndjson'), 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines[0].files.length, 201);
    assert.equal(lines[0].files.at(-1), '… and 99800 more (100000 in all)');
    assert.equal(lines[1].message, 'small');
    assert.deepEqual(boundDeep({ a: [1, 2, 3] }, { text: 5, list: 2 }), { a: [1, 2, '… and 1 more (3 in all)'] });
  });
});
