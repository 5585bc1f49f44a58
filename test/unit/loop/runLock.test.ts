import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { hostname } from 'node:os';
import { promises as fs } from 'node:fs';
import { LockError } from '../../../src/core/errors';
import { RunLock } from '../../../src/core/loop/runLock';
import { RalphPaths } from '../../../src/core/paths';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('RunLock', () => {
  let ws: TempWorkspace;
  let paths: RalphPaths;
  beforeEach(async () => {
    ws = await makeTempWorkspace();
    paths = new RalphPaths(ws.dir);
  });
  afterEach(async () => ws.cleanup());

  it('is exclusive while its holder lives and released afterwards', async () => {
    const lock = await RunLock.acquire(paths, 'run-1');
    await fs.writeFile(paths.lock, JSON.stringify({ ...lock.info, pid: process.ppid })); // a live other process
    await assert.rejects(RunLock.acquire(paths, 'run-2'), (e: unknown) => e instanceof LockError && e.holderPid === process.ppid);
    await fs.writeFile(paths.lock, JSON.stringify(lock.info));
    await lock.release();
    assert.equal(ws.exists('.ralph/run.lock'), false);
    const again = await RunLock.acquire(paths, 'run-3');
    await again.release();
  });

  it('takes over a lock left by a dead process', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const deadPid = Number(dead.stdout);
    await fs.mkdir(paths.dir, { recursive: true });
    await fs.writeFile(paths.lock, JSON.stringify({ pid: deadPid, host: hostname(), runId: 'old', startedAt: '' }));
    const lock = await RunLock.acquire(paths, 'new');
    assert.equal(JSON.parse(await ws.read('.ralph/run.lock')).runId, 'new');
    await lock.release();
  });

  it('treats a corrupt lock file as stale', async () => {
    await fs.mkdir(paths.dir, { recursive: true });
    await fs.writeFile(paths.lock, '{"pid": 12');
    const lock = await RunLock.acquire(paths, 'fresh');
    await lock.release();
  });
});
