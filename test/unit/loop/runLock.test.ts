import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { hostname } from 'node:os';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LockError } from '../../../src/core/errors';
import { RunLock, UNREADABLE_LOCK_GRACE_MS } from '../../../src/core/loop/run/runLock';
import { RalphPaths } from '../../../src/core/paths';
import { ENDED_PID } from '../helpers/processes';
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
    await fs.mkdir(paths.dir, { recursive: true });
    await fs.writeFile(paths.lock, JSON.stringify({ pid: ENDED_PID, host: hostname(), runId: 'old', startedAt: '' }));
    const lock = await RunLock.acquire(paths, 'new');
    assert.equal(JSON.parse(await ws.read('.ralph/run.lock')).runId, 'new');
    await lock.release();
  });

  it('counts an unreadable lock as held while it may still be written, and as stale once old', async () => {
    await fs.mkdir(paths.dir, { recursive: true });
    await fs.writeFile(paths.lock, '');
    await assert.rejects(
      RunLock.acquire(paths, 'racer'),
      (e: unknown) => e instanceof LockError && /is taking \.ralph\/run\.lock right now/.test(e.message),
    );
    await fs.writeFile(paths.lock, '{"pid": 12');
    await assert.rejects(RunLock.acquire(paths, 'racer'), LockError);
    const later = () => Date.now() + UNREADABLE_LOCK_GRACE_MS + 1000;
    const lock = await RunLock.acquire(paths, 'fresh', { now: later });
    assert.equal(JSON.parse(await ws.read('.ralph/run.lock')).runId, 'fresh');
    await lock.release();
  });

  it('is never seen half-written: the file appears with its whole content', async () => {
    const lock = await RunLock.acquire(paths, 'whole');
    assert.deepEqual(JSON.parse(await ws.read('.ralph/run.lock')), lock.info);
    assert.deepEqual(
      (await fs.readdir(paths.dir)).filter((n) => n.endsWith('.tmp')),
      [],
      'no temporary file is left',
    );
    await lock.release();
  });

  it('refuses a second run of the same process while the first holds the lock', async () => {
    const first = await RunLock.acquire(paths, 'window-1');
    await assert.rejects(
      RunLock.acquire(paths, 'window-2'),
      (e: unknown) => e instanceof LockError && /another run of this process \(run window-1/.test(e.message),
    );
    await first.release();
    const second = await RunLock.acquire(paths, 'window-2');
    await second.release();
  });

  it("lets exactly one of many simultaneous takers take over a dead run's lock", async () => {
    await fs.mkdir(paths.dir, { recursive: true });
    await fs.writeFile(paths.lock, JSON.stringify({ pid: ENDED_PID, host: os.hostname(), runId: 'crashed', startedAt: '' }));
    const tries = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => RunLock.acquire(paths, `taker-${i}`)));
    const won = tries.filter((t): t is PromiseFulfilledResult<RunLock> => t.status === 'fulfilled');
    assert.equal(won.length, 1);
    for (const t of tries) if (t.status === 'rejected') assert.ok(t.reason instanceof LockError, String(t.reason));
    assert.equal(JSON.parse(await ws.read('.ralph/run.lock')).runId, won[0].value.info.runId);
    await won[0].value.release();
  });

  it("holds against simultaneous takers in separate processes, also over a dead run's lock", async function () {
    this.timeout(120000);
    for (const stale of [false, true]) {
      if (stale) {
        await fs.mkdir(paths.dir, { recursive: true });
        await fs.writeFile(paths.lock, JSON.stringify({ pid: ENDED_PID, host: os.hostname(), runId: 'crashed', startedAt: '' }));
      }
      const outcomes = await raceInProcesses(ws.dir, 16);
      assert.equal(outcomes.filter((o) => o === 'won').length, 1, outcomes.join('\n'));
      assert.ok(
        outcomes.every((o) => o === 'won' || /^lost: .*run\.lock/.test(o)),
        outcomes.join('\n'),
      );
      assert.equal(ws.exists('.ralph/run.lock'), false, 'the winner released it');
    }
  });
});

/**
 * `count` processes that each load the lock, wait at a barrier (a file appearing), then take
 * the lock at the same moment; the winner holds it until every loser has answered.
 */
async function raceInProcesses(dir: string, count: number): Promise<string[]> {
  const gate = path.join(dir, 'go');
  const release = path.join(dir, 'release');
  const script = `
    const fs = require('node:fs');
    const { RunLock } = require(${JSON.stringify(path.resolve(__dirname, '../../../src/core/loop/run/runLock.js'))});
    const { RalphPaths } = require(${JSON.stringify(path.resolve(__dirname, '../../../src/core/paths.js'))});
    process.stdout.write('ready\\n');
    const wait = (file) => new Promise((done) => { const t = setInterval(() => { if (fs.existsSync(file)) { clearInterval(t); done(); } }, 2); });
    wait(${JSON.stringify(gate)}).then(() => RunLock.acquire(new RalphPaths(${JSON.stringify(dir)}), 'p' + process.pid)).then(
      async (lock) => { process.stdout.write('won\\n'); await wait(${JSON.stringify(release)}); await lock.release(); },
      (error) => process.stdout.write('lost: ' + error.message + '\\n'),
    );`;
  await fs.rm(gate, { force: true });
  await fs.rm(release, { force: true });
  const children = Array.from({ length: count }, () => spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] }));
  const lines = children.map(() => '');
  const said = (i: number, what: RegExp) => what.test(lines[i]);
  children.forEach((child, i) => child.stdout.on('data', (d) => (lines[i] += d)));
  const until = async (check: () => boolean) => {
    for (let waited = 0; !check() && waited < 1200; waited++) await new Promise((r) => setTimeout(r, 50));
  };
  await until(() => children.every((c, i) => said(i, /ready/) || c.exitCode !== null));
  await fs.writeFile(gate, '');
  await until(() => children.every((c, i) => said(i, /won|lost/) || c.exitCode !== null));
  await fs.writeFile(release, '');
  await Promise.all(children.map((child) => (child.exitCode !== null ? undefined : new Promise((r) => child.on('exit', r)))));
  return lines.map((l) => l.replace(/^ready\n/, '').trim());
}
