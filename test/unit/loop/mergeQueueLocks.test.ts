import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { RalphEvent, RalphEventBody } from '../../../src/core/events';
import { ProcessGateRunner } from '../../../src/core/gates/runGates';
import { GitLockHeldError } from '../../../src/core/git/lockRule';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { MergeQueue } from '../../../src/core/loop/merge/mergeQueue';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import { makeTempWorkspace, TEST_GIT_ENV, type TempWorkspace } from '../helpers/tempWorkspace';

async function agedLock(file: string): Promise<void> {
  await fs.writeFile(file, '');
  const then = new Date(Date.now() - 120_000);
  await fs.utimes(file, then, then);
}

describe('MergeQueue and git locks (the merge worktree, the target ref)', function () {
  this.timeout(90000);
  let ws: TempWorkspace;
  let wt: WorktreeManager;
  let events: RalphEvent[];
  let queue: MergeQueue;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# r\n' } });
    wt = new WorktreeManager(ws.dir);
    events = [];
    let seq = 0;
    const emit = (body: RalphEventBody) => void events.push({ ...body, runId: 'r', seq: ++seq, time: '' } as RalphEvent);
    queue = new MergeQueue({
      worktrees: wt,
      gates: new ProcessGateRunner(new NodeCommandRunner()),
      gateConfigs: [{ name: 'ok', command: 'true', kind: 'custom', required: true }],
      target: 'main',
      strategy: 'squash',
      emit,
    });
  });
  afterEach(async () => ws.cleanup());

  async function taskWork(taskId: string, file: string): Promise<void> {
    const { path: dir } = await wt.create(taskId, 'main');
    await fs.writeFile(path.join(dir, file), `${taskId}\n`);
    ws.git('-C', dir, 'add', '-A');
    ws.git('-C', dir, 'commit', '-q', '-m', `ralph(${taskId}): iteration 1`);
  }

  it('clears a stale index.lock a crash left in the merge worktree, says so, and merges', async () => {
    await taskWork('T-001', 'a.txt');
    await taskWork('T-002', 'b.txt');
    queue.enqueue('T-001', 'a');
    assert.equal((await queue.processNext())?.state, 'merged');
    const mergeGitDir = path.resolve(wt.mergePath, ws.git('-C', wt.mergePath, 'rev-parse', '--git-dir'));
    await agedLock(path.join(mergeGitDir, 'index.lock'));
    queue.enqueue('T-002', 'b');
    assert.equal((await queue.processNext())?.state, 'merged');
    const cleared = events.filter((e) => e.type === 'warning' && e.code === 'git-lock-cleared');
    assert.equal(cleared.length, 1);
    assert.match((cleared[0] as { message: string }).message, /removed a stale \.git\/worktrees\/_merge\/index\.lock/);
  });

  it('a held lock on the target ref stops the merge (GitLockHeldError), the task queued again and the target untouched; released, it merges', async () => {
    await taskWork('T-001', 'a.txt');
    const before = ws.git('rev-parse', 'main');
    await agedLock(ws.path('.git/refs/heads/main.lock'));
    const holder = spawn('git', ['hash-object', '--stdin'], { cwd: ws.dir, env: TEST_GIT_ENV, stdio: ['pipe', 'ignore', 'ignore'] });
    queue.enqueue('T-001', 'a');
    try {
      await assert.rejects(
        queue.processNext(),
        (e: unknown) =>
          e instanceof GitLockHeldError &&
          /refs\/heads\/main\.lock was kept because git process \d+ is working in this repository/.test(e.message),
      );
    } finally {
      holder.kill('SIGKILL');
    }
    assert.equal(queue.snapshot.entries[0].state, 'queued');
    assert.equal(ws.git('rev-parse', 'main'), before);
    if (holder.exitCode === null && holder.signalCode === null) await new Promise((r) => holder.once('exit', r));
    assert.equal((await queue.processNext())?.state, 'merged');
    assert.equal(ws.exists('.git/refs/heads/main.lock'), false);
  });
});
