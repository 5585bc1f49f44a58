import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { ToolRegistry } from '../../../src/core/agent/toolRegistry';
import { CORE_TOOLS } from '../../../src/core/agent/tools';
import { NodeCommandRunner, type CommandRequest, type CommandResult, type CommandRunner } from '../../../src/core/commands/processRunner';
import type { ToolContext, ToolResult } from '../../../src/core/agent/tools/types';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';
import { limitWhen, waitUntilGone } from '../helpers/processes';
import { makeToolContext } from './toolContext';

describe('run_command, git_commit and the signal tools', () => {
  let ws: TempWorkspace;
  let ctx: ToolContext;
  const registry = new ToolRegistry(CORE_TOOLS);
  const call = (name: string, args: object, context = ctx): Promise<ToolResult> =>
    registry.execute({ id: 'c', name, arguments: JSON.stringify(args) }, context);

  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n' } });
    ctx = makeToolContext(ws);
  });
  afterEach(() => ws.cleanup());

  describe('run_command', () => {
    it('runs in the workspace root and reports exit code 0 as ok', async () => {
      const result = await call('run_command', { command: 'pwd && cat a.txt' });
      assert.equal(result.ok, true);
      assert.equal(result.content, `$ pwd && cat a.txt\nexit code 0\n${ws.dir}\na\n`);
      assert.equal(result.summary, 'pwd && cat a.txt (exit code 0)');
    });

    it('reports a non-zero exit code as a failed result with the output', async () => {
      const result = await call('run_command', { command: 'echo "2 tests failing" >&2; exit 1' });
      assert.equal(result.ok, false);
      assert.match(result.content, /^\$ .*\nexit code 1\n2 tests failing\n$/);
    });

    it('says when there was no output', async () => {
      assert.equal((await call('run_command', { command: 'true' })).content, '$ true\nexit code 0\n(no output)');
    });

    it('kills the process tree on timeout', async () => {
      // the 1.5 s limit runs out once the grandchild runs (a loaded machine can spend 1.5 s before it starts)
      const started = () => existsSync(ws.path('started')) && readFileSync(ws.path('started'), 'utf8').trim() !== '';
      const commands = new NodeCommandRunner({ killGraceMs: 1000, drainMs: 300, timeLimit: limitWhen(started) });
      const short = { ...ctx, commands, commandTimeoutMs: 1500 };
      const command = 'sleep 30 & echo "pid=$!"; echo $! > started; sleep 30; wait';
      const result = await call('run_command', { command, timeoutMs: 60_000 }, short);
      assert.equal(result.ok, false);
      assert.match(result.content, /\ntimed out after 1\.5 s; the command and its child processes were killed\n/);
      const pid = Number(/pid=(\d+)/.exec(result.content)?.[1]);
      assert.ok(pid > 0, result.content);
      assert.ok(await waitUntilGone(pid), `grandchild ${pid} survived`);
    });

    it('passes min(requested, configured) timeout and the output cap to the runner', async () => {
      const seen: CommandRequest[] = [];
      const recorder: CommandRunner = {
        async run(req): Promise<CommandResult> {
          seen.push(req);
          return { exitCode: 0, signal: null, timedOut: false, aborted: false, output: 'x', truncated: false, durationMs: 1 };
        },
      };
      const recorded = { ...ctx, commands: recorder, commandTimeoutMs: 10_000, maxOutputChars: 1234 };
      await call('run_command', { command: 'a', timeoutMs: 500 }, recorded);
      await call('run_command', { command: 'b', timeoutMs: 99_999 }, recorded);
      await call('run_command', { command: 'c' }, recorded);
      assert.deepEqual(
        seen.map((req) => req.timeoutMs),
        [500, 10_000, 10_000],
      );
      assert.ok(seen.every((req) => req.maxOutputChars === 1234 && req.cwd === ctx.scope.root && req.signal === ctx.signal));
    });

    it('caps long output with the omission marker', async () => {
      const capped = { ...ctx, maxOutputChars: 200 };
      const result = await call('run_command', { command: 'seq 1 5000' }, capped);
      assert.match(result.content, /\n… \[\d+ characters omitted\] …\n/);
      assert.match(result.content, /\n5000\n$/);
    });
  });

  describe('git_commit', () => {
    it('commits the changes and names the files', async () => {
      await ws.write('b.txt', 'b\n');
      const result = await call('git_commit', { message: 'Add b' });
      assert.equal(result.ok, true, result.content);
      const sha = ws.git('rev-parse', '--short=7', 'HEAD');
      assert.equal(result.content, `committed ${sha} "Add b" (1 file):\nb.txt`);
      assert.equal(result.summary, `committed ${sha} (1 file)`);
      assert.equal(ws.git('log', '-1', '--format=%s'), 'Add b');
    });

    it('reports nothing to commit as a failed result', async () => {
      const result = await call('git_commit', { message: 'nothing' });
      assert.equal(result.ok, false);
      assert.match(result.content, /^nothing to commit/);
    });

    it('refuses a blank message', async () => {
      const result = await call('git_commit', { message: '   ' });
      assert.equal(result.ok, false);
      assert.match(result.content, /invalid arguments for git_commit:\n- message:/);
    });
  });

  describe('signal tools', () => {
    it('ralph_complete carries the summary, evidence and artifacts', async () => {
      const result = await call('ralph_complete', { summary: 'Done', promiseEvidence: 'npm test passes', artifactPaths: ['src/a.ts'] });
      assert.equal(result.ok, true);
      assert.deepEqual(result.signal, {
        kind: 'COMPLETE',
        summary: 'Done',
        promiseEvidence: 'npm test passes',
        artifactPaths: ['src/a.ts'],
      });
      const bare = await call('ralph_complete', { summary: 'Done', promiseEvidence: 'e' });
      assert.deepEqual(bare.signal, { kind: 'COMPLETE', summary: 'Done', promiseEvidence: 'e' });
    });

    it('report_progress rounds the percent and refuses values out of range', async () => {
      const result = await call('report_progress', { percent: 49.6, note: 'half way' });
      assert.deepEqual(result.signal, { kind: 'PROGRESS', percent: 50, note: 'half way' });
      assert.equal(result.summary, 'progress 50%: half way');
      const bad = await call('report_progress', { percent: 150 });
      assert.equal(bad.ok, false);
      assert.equal(bad.signal, undefined);
      assert.match(bad.content, /- percent:/);
    });

    it('report_blocked and ask_for_help give BLOCKED and NEEDS_HELP', async () => {
      const blocked = await call('report_blocked', { reason: 'no API key' });
      assert.deepEqual(blocked.signal, { kind: 'BLOCKED', reason: 'no API key' });
      assert.equal(blocked.ok, true);
      const help = await call('ask_for_help', { question: 'Postgres or SQLite?' });
      assert.deepEqual(help.signal, { kind: 'NEEDS_HELP', question: 'Postgres or SQLite?' });
      assert.equal(help.summary, 'needs help: Postgres or SQLite?');
    });
  });
});
