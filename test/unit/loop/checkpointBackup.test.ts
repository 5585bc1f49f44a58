import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { type CheckpointInput, CheckpointStore } from '../../../src/core/loop/checkpoint';
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
});
