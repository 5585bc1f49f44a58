/**
 * `--json` where a verb prints something a script reads (issue 49): `ralph init --json`, the
 * task actions' and the person's outcomes as one JSON object each, with the exit code they have
 * without it — the real CLI (dist/cli.js) on a real workspace.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { runCli, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

describe('the CLI: --json of init, the task actions and the person (issue 49)', function () {
  this.timeout(60_000);
  let ws: TempWorkspace | undefined;
  afterEach(async () => ws?.cleanup());

  it('prints one JSON object per outcome, done or refused, with the same exit codes', async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    const init = await runCliInProcess(['init', '--json'], ws.dir);
    assert.equal(init.code, 0, init.stderr);
    const initialized = JSON.parse(init.stdout) as { gitInitialized: boolean; created: string[] };
    assert.equal(initialized.gitInitialized, false);
    assert.ok(initialized.created.length > 0 && initialized.created.every((file) => existsSync(path.join(ws!.dir, file))), init.stdout);
    assert.deepEqual(JSON.parse((await runCliInProcess(['init', '--json'], ws.dir)).stdout), { gitInitialized: false, created: [] });

    for (const title of ['One', 'Two'])
      assert.equal((await runCliInProcess(['task', 'add', title, '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
    const cancel = await runCli(['task', 'cancel', 'T-001', '--json'], ws.dir);
    assert.equal(cancel.code, 0, cancel.stderr);
    const cancelled = JSON.parse(cancel.stdout);
    assert.equal(cancelled.taskId, 'T-001');
    assert.equal(cancelled.action, 'cancel');
    assert.equal(cancelled.ok, true);
    assert.equal(cancelled.exitCode, 0);
    assert.match(cancelled.message, /T-001 is cancelled/);
    assert.equal(cancelled.task.status, 'cancelled', 'the task as stored after it');

    const again = await runCli(['task', 'unblock', 'T-001', '--json'], ws.dir);
    assert.equal(again.code, 2, 'refused by its status: exit 2, as without --json');
    const refused = JSON.parse(again.stdout);
    assert.equal(refused.ok, false);
    assert.equal(refused.exitCode, 2);
    assert.match(refused.error, /T-001 is cancelled; it cannot be/);
    assert.match(again.stderr, /^ralph: task T-001 is cancelled/);

    const unconfirmed = await runCli(['task', 'delete', 'T-002', '--json'], ws.dir);
    assert.equal(unconfirmed.code, 4, 'no terminal and no --yes: not confirmed');
    assert.equal(JSON.parse(unconfirmed.stdout).task.id, 'T-002', 'still there');
    const deleted = await runCli(['task', 'delete', 'T-002', '--json', '--yes'], ws.dir);
    assert.equal(deleted.code, 0, deleted.stderr);
    const gone = JSON.parse(deleted.stdout);
    assert.equal(gone.ok, true);
    assert.equal(gone.task, undefined, 'deleted: no task to show');

    const approve = await runCli(['review', 'approve', 'T-009', '--json'], ws.dir);
    assert.equal(approve.code, 2);
    const unknown = JSON.parse(approve.stdout);
    assert.deepEqual([unknown.taskId, unknown.action, unknown.ok], ['T-009', 'review.approve', false]);
    assert.match(unknown.error, /T-009/);
  });
});
