import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import {
  type CheckpointInput,
  CheckpointSchema,
  CheckpointStore,
  type IterationRecord,
  MAX_HISTORY,
  serializeCheckpoint,
} from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

function checkpoint(iteration: number, phase: CheckpointInput['phase']): CheckpointInput {
  return {
    version: 1,
    taskId: 'T-001',
    runId: 'run',
    iteration,
    phase,
    elapsedMs: iteration * 10,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    history: [],
    updatedAt: new Date(0).toISOString(),
  };
}

describe('checkpoint backups (.ralph/state/<task>.json.bak)', () => {
  let ws: TempWorkspace;
  let paths: RalphPaths;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
    paths = new RalphPaths(ws.dir);
  });
  afterEach(async () => ws.cleanup());

  const backup = async () => JSON.parse(await fs.readFile(`${paths.state('T-001')}.bak`, 'utf8')) as { iteration: number; phase: string };

  it('keeps the last checkpoint taken between iterations through an iteration, and resumes from it when the current one is corrupt', async () => {
    const store = new CheckpointStore(paths);
    await store.save(checkpoint(1, 'between'));
    await store.save(checkpoint(2, 'running'));
    assert.equal((await backup()).iteration, 1);
    await store.save(checkpoint(2, 'committing'));
    await store.save(checkpoint(2, 'between'));
    // mid-iteration checkpoints are not backed up: the backup stays a sound point to resume from
    assert.equal((await backup()).iteration, 1);
    assert.equal((await backup()).phase, 'between');
    await store.save(checkpoint(3, 'running'));
    assert.equal((await backup()).iteration, 2);
    assert.equal((await backup()).phase, 'between');

    await fs.writeFile(paths.state('T-001'), '{"version":1, torn');
    const warnings: string[] = [];
    const loaded = await new CheckpointStore(paths).load('T-001', { onWarning: (m) => warnings.push(m) });
    assert.equal(loaded?.iteration, 2);
    assert.equal(loaded?.phase, 'between');
    assert.match(warnings[0], /unreadable.*resuming from the previous checkpoint/);
  });

  it('the backup is its own file: a later save never changes it through the link', async () => {
    const store = new CheckpointStore(paths);
    await store.save(checkpoint(1, 'between'));
    await store.save(checkpoint(2, 'running'));
    const kept = await fs.readFile(`${paths.state('T-001')}.bak`, 'utf8');
    await store.save(checkpoint(2, 'committing'));
    await store.save(checkpoint(2, 'between'));
    assert.equal(await fs.readFile(`${paths.state('T-001')}.bak`, 'utf8'), kept);
    assert.deepEqual((await fs.readdir(paths.stateDir)).sort(), ['T-001.json', 'T-001.json.bak'], 'no temporary names left behind');
  });

  it('a checkpoint written by someone else is checked before it becomes the backup: a valid one is kept, garbage never', async () => {
    const store = new CheckpointStore(paths);
    await store.save(checkpoint(1, 'between'));
    await store.save(checkpoint(2, 'running'));
    // another process (an older run, a person) writes a valid checkpoint mid-iteration
    await fs.writeFile(paths.state('T-001'), JSON.stringify(checkpoint(5, 'between')));
    await store.save(checkpoint(2, 'committing'));
    assert.equal((await backup()).iteration, 5);
    // and garbage is never made the backup, even where this store wrote last
    await fs.writeFile(paths.state('T-001'), 'garbage');
    await store.save(checkpoint(2, 'between'));
    assert.equal((await backup()).iteration, 5);
    await store.save(checkpoint(3, 'running'));
    assert.equal((await backup()).iteration, 2);
  });

  it('a new process (no memory of its own writes) checks and copies the file it replaces', async () => {
    await new CheckpointStore(paths).save(checkpoint(1, 'running'));
    await new CheckpointStore(paths).save(checkpoint(1, 'committing'));
    assert.equal((await backup()).phase, 'running');
  });

  it("a rewrite in place by someone else (same file, other bytes) is noticed: it is checked, not linked as this store's own", async () => {
    const store = new CheckpointStore(paths);
    await store.save(checkpoint(1, 'between'));
    await store.save(checkpoint(2, 'running'));
    const file = paths.state('T-001');
    // the same inode, written over: a person's editor saving in place
    const handle = await fs.open(file, 'r+');
    await handle.truncate(0);
    await handle.write('not json', 0);
    await handle.close();
    await store.save(checkpoint(2, 'committing'));
    assert.equal((await backup()).iteration, 1, 'the rewritten file is garbage: the backup stays the last good checkpoint');
  });
});

describe('checkpoint file format', () => {
  const record = IterationRecordFor;

  it('writes what a load reads back: every field checked, defaults filled, unknown keys dropped, history kept to its last records', () => {
    const history = Array.from({ length: MAX_HISTORY + 5 }, (_, i) => record(i + 1));
    const input = { ...checkpoint(MAX_HISTORY + 5, 'between'), history, stray: 'not in the schema' } as CheckpointInput;
    const text = serializeCheckpoint(input);
    const parsed = JSON.parse(text) as Record<string, unknown> & { history: IterationRecord[] };
    assert.equal(parsed.stray, undefined);
    assert.equal(parsed.history.length, MAX_HISTORY);
    assert.equal(parsed.history[0].iteration, 6);
    assert.deepEqual(CheckpointSchema.parse(parsed), CheckpointSchema.parse({ ...input, history: history.slice(-MAX_HISTORY) }));
    assert.ok(text.endsWith('\n}\n') && text.includes('\n  "history": [\n    {\n      "iteration": 6,'), 'pretty, two spaces a level');
  });

  it('an empty history, and a record saved once is frozen: it cannot change under the serialized copy kept of it', () => {
    assert.deepEqual(JSON.parse(serializeCheckpoint(checkpoint(0, 'between'))).history, []);
    const r = record(1);
    serializeCheckpoint({ ...checkpoint(1, 'between'), history: [r] });
    assert.ok(Object.isFrozen(r));
    assert.throws(() => {
      (r as { summary?: string }).summary = 'changed';
    }, TypeError);
  });

  it('refuses a checkpoint whose fields are wrong instead of writing what no load could read', () => {
    assert.throws(() => serializeCheckpoint({ ...checkpoint(1, 'between'), iteration: -1 }));
    assert.throws(() =>
      serializeCheckpoint({ ...checkpoint(1, 'between'), history: [{ ...record(1), outcome: 'bogus' as IterationRecord['outcome'] }] }),
    );
  });
});

function IterationRecordFor(iteration: number): IterationRecord {
  return {
    iteration,
    startedAt: new Date(0).toISOString(),
    durationMs: 5,
    model: 'm',
    outcome: 'continue',
    signal: 'PROGRESS:10',
    progress: 10,
    filesChanged: [],
    summary: `iteration ${iteration}`,
    feedback: [],
    gates: [],
    failingTests: [],
    failed: false,
    highFinding: false,
    tampering: [],
    usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3 },
  };
}
