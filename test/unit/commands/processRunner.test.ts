import * as assert from 'node:assert/strict';
import { capMiddle, NodeCommandRunner, omissionMarker, type CommandRequest } from '../../../src/core/commands/processRunner';
import { limitWhen, waitUntilGone } from '../helpers/processes';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

function pidsIn(output: string): number[] {
  return [...output.matchAll(/pid=(\d+)/g)].map((match) => Number(match[1]));
}

describe('NodeCommandRunner', function () {
  if (process.platform === 'win32') return;
  let ws: TempWorkspace;
  const runner = new NodeCommandRunner({ killGraceMs: 1000, drainMs: 300 });
  const run = (command: string, extra: Partial<CommandRequest> = {}) =>
    runner.run({ command, cwd: ws.dir, timeoutMs: 20_000, maxOutputChars: 10_000, ...extra });
  /** A run whose time limit runs out once its output names a pid (the processes to kill have started). */
  const runOutOfTime = (command: string) => {
    let output = '';
    const timed = new NodeCommandRunner({ killGraceMs: 1000, drainMs: 300, timeLimit: limitWhen(() => /pid=\d+\n/.test(output)) });
    return timed.run({ command, cwd: ws.dir, timeoutMs: 1500, maxOutputChars: 10_000, onOutput: (chunk) => (output += chunk) });
  };

  beforeEach(async () => {
    ws = await makeTempWorkspace();
  });
  afterEach(() => ws.cleanup());

  it('reports exit codes and interleaves stdout and stderr', async () => {
    const ok = await run('echo out; echo err >&2; echo out2');
    assert.equal(ok.exitCode, 0);
    assert.equal(ok.signal, null);
    assert.equal(ok.timedOut, false);
    assert.equal(ok.aborted, false);
    assert.equal(ok.truncated, false);
    for (const word of ['out', 'err', 'out2']) assert.match(ok.output, new RegExp(`^${word}$`, 'm'));

    const failed = await run('exit 3');
    assert.equal(failed.exitCode, 3);
  });

  it('runs in cwd with a non-interactive environment and stdin closed', async () => {
    const result = await run('pwd; echo "ci=$CI prompt=$GIT_TERMINAL_PROMPT pager=$PAGER extra=$EXTRA"; cat; echo done', {
      env: { EXTRA: 'yes' },
    });
    assert.equal(result.exitCode, 0);
    assert.equal(result.output, `${ws.dir}\nci=true prompt=0 pager=cat extra=yes\ndone\n`);
  });

  it('streams chunks to onOutput', async () => {
    const chunks: string[] = [];
    const result = await run('echo one; echo two', { onOutput: (chunk) => chunks.push(chunk) });
    assert.equal(chunks.join(''), result.output);
  });

  it('caps output keeping the head and the tail around a marker', async () => {
    const result = await run("printf 'HEAD'; for i in $(seq 1 500); do printf 'abcdefghij'; done; printf 'TAIL'", {
      maxOutputChars: 100,
    });
    assert.equal(result.truncated, true);
    assert.ok(result.output.startsWith('HEADabcdef'));
    assert.ok(result.output.endsWith('ghijTAIL'));
    assert.ok(result.output.includes(omissionMarker(5008 - 100)), result.output);
  });

  it('on timeout kills the whole process tree, grandchildren included', async () => {
    const result = await runOutOfTime('sleep 30 & echo "pid=$!"; sleep 30; wait');
    assert.equal(result.timedOut, true);
    assert.equal(result.exitCode, null);
    const pids = pidsIn(result.output);
    assert.equal(pids.length, 1, result.output);
    assert.ok(await waitUntilGone(pids[0]), `grandchild ${pids[0]} survived the timeout`);
  });

  it('on abort kills the whole process tree', async () => {
    const controller = new AbortController();
    const result = await run('sleep 30 & echo "pid=$!"; sleep 30; wait', {
      signal: controller.signal,
      onOutput: (chunk) => {
        if (chunk.includes('pid=')) controller.abort();
      },
    });
    assert.equal(result.aborted, true);
    assert.equal(result.timedOut, false);
    const pids = pidsIn(result.output);
    assert.ok(await waitUntilGone(pids[0]), `grandchild ${pids[0]} survived the abort`);
  });

  it('does not run at all when already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await run('touch ran', { signal: controller.signal });
    assert.equal(result.aborted, true);
    assert.equal(ws.exists('ran'), false);
  });

  it('does not hang when a background process keeps the pipes open after the shell exits', async () => {
    const result = await run('sleep 30 & echo "pid=$!"; exit 0');
    assert.equal(result.exitCode, 0);
    assert.equal(result.timedOut, false);
    const pids = pidsIn(result.output);
    assert.ok(await waitUntilGone(pids[0]), `leftover ${pids[0]} still holds the pipes`);
  });

  it('ends a background process that does not hold the pipes together with the command', async () => {
    const result = await run('sleep 30 >/dev/null 2>&1 & echo "pid=$!"');
    const [pid] = pidsIn(result.output);
    assert.equal(result.exitCode, 0);
    assert.ok(await waitUntilGone(pid), `background process ${pid} outlived its command`);
  });

  it('on timeout kills a child that left the process group with setsid', async () => {
    const result = await runOutOfTime(`setsid sh -c 'echo "pid=$$"; exec sleep 1000' & sleep 30`);
    assert.equal(result.timedOut, true);
    const [pid] = pidsIn(result.output);
    assert.ok(pid, result.output);
    assert.ok(await waitUntilGone(pid), `setsid child ${pid} survived the timeout`);
  });

  it('kills a double-forked setsid daemon that no longer holds the pipes', async () => {
    // the command reads the daemon's pid once the daemon has written it (however long a loaded machine takes to start it)
    const result = await run(
      `setsid -f sh -c 'echo "pid=$$" > pid.tmp && mv pid.tmp pid.txt; exec sleep 1000' >/dev/null 2>&1; until [ -s pid.txt ]; do sleep 0.05; done; cat pid.txt`,
    );
    assert.equal(result.exitCode, 0);
    const [pid] = pidsIn(result.output);
    assert.ok(pid, result.output);
    assert.ok(await waitUntilGone(pid), `daemon ${pid} outlived its command`);
  });

  it('rejects when the command cannot start', async () => {
    await assert.rejects(run('true', { cwd: ws.path('missing') }), /could not start command/);
  });
});

describe('capMiddle', () => {
  it('keeps short text whole and cuts long text in the middle', () => {
    assert.deepEqual(capMiddle('short', 10), { text: 'short', truncated: false });
    assert.deepEqual(capMiddle('0123456789abcdef', 6), { text: `012${omissionMarker(10)}def`, truncated: true });
  });
});
