import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import { runLockStatus } from '../../../src/cli/runLockStatus';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { ENDED_PID } from '../helpers/processes';
import { makeTempWorkspace } from '../helpers/tempWorkspace';

/** `ralph status` judges the run lock as `ralph run` would: a killed run's lock is no active run. */
describe('ralph status and the run lock', function () {
  this.timeout(30000);
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });
  const lockOf = (pid: number, host = os.hostname()) => ({
    pid,
    host,
    runId: '20261125T100000-abcdef',
    startedAt: '2026-11-25T10:00:00.000Z',
  });
  const started = (command: string, args: string[]) => {
    const child = spawn(command, args, { stdio: 'ignore' });
    children.push(child);
    return child;
  };

  it('names no lock, a live run, a killed run, a reused pid and another host for what they are', async () => {
    assert.deepEqual(await runLockStatus(null), { state: 'none', line: 'no run is active' });
    const node = started(process.execPath, ['-e', 'setTimeout(() => {}, 20000)']);
    const live = await runLockStatus(lockOf(node.pid!));
    assert.equal(live.state, 'active');
    assert.match(live.line, new RegExp(`^a run is active \\(pid ${node.pid}, run 20261125T100000-abcdef`));

    const dead = await runLockStatus(lockOf(ENDED_PID));
    assert.equal(dead.state, 'stale');
    assert.match(
      dead.line,
      /^no run is active: run 20261125T100000-abcdef \(pid \d+\) ended without releasing its lock; the next run takes it over$/,
    );

    const sleeper = started('sleep', ['20']);
    const reused = await runLockStatus(lockOf(sleeper.pid!));
    assert.equal(reused.state, 'stale');
    assert.match(reused.line, /is now another program \(sleep 20\); take the lock over with ralph run --force$/);

    const elsewhere = await runLockStatus(lockOf(1, 'another-host.invalid'));
    assert.equal(elsewhere.state, 'other-host');
    assert.match(elsewhere.line, /^a run may be active on host another-host\.invalid/);
  });

  it('`ralph status` after a killed run: no run is active, in words and in --json', async () => {
    const ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    try {
      assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
      await fs.writeFile(ws.path('.ralph', 'run.lock'), JSON.stringify(lockOf(ENDED_PID)));
      const text = await runCli(['status'], ws.dir);
      assert.equal(text.code, 0, text.stderr);
      assert.match(text.stdout, /no run is active: run 20261125T100000-abcdef \(pid \d+\) ended without releasing its lock/);
      assert.doesNotMatch(text.stdout, /a run is active/);
      const json = JSON.parse((await runCli(['status', '--json'], ws.dir)).stdout);
      assert.equal(json.runState, 'stale');
      assert.equal(json.running.runId, '20261125T100000-abcdef', 'the lock as it is, as before');
    } finally {
      await ws.cleanup();
    }
  });
});
