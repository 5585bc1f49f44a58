import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { CLI, CLI_ENV, collect, type CliResult, fileOf, runCliInProcess } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const STARTS = 30;

/**
 * A preload for each `ralph run` (the bundle, as people run it): its first write to
 * `.ralph/run.lock` (the hard link that creates it, `loop/run/runLock.ts`; a rename onto it or a
 * write of it, as a lock that checks and then writes would make) waits at a barrier, so that every
 * process meets the lock at the same moment, with everything before that write (a check included)
 * already done. The wait is asleep: it reads the process's stdin, where the test writes one byte to
 * every process at once; a test that ended (or was killed) first closes stdin, and the process exits.
 */
function barrierPreload(dir: string): string {
  return `
    const fs = require('node:fs');
    const path = require('node:path');
    let waited = false;
    async function barrier(file) {
      if (waited || path.basename(String(file)) !== 'run.lock') return;
      waited = true;
      fs.writeFileSync(${JSON.stringify(path.join(dir, 'ready-'))} + process.pid, '');
      await new Promise((resolve) => {
        process.stdin.once('data', resolve);
        process.stdin.once('end', () => process.exit(1));
      });
      process.stdin.destroy();
    }
    for (const [name, target] of [['link', 1], ['rename', 1], ['writeFile', 0]]) {
      const original = fs.promises[name];
      fs.promises[name] = async function (...args) {
        await barrier(args[target]);
        return original.apply(this, args);
      };
    }
  `;
}

describe('30 simultaneous `ralph run` on one workspace', function () {
  this.timeout(300000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  let barrier: string;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer();
    barrier = await ws.outsideDir();
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  for (const agents of [1, 3]) {
    it(`exactly one runs, every time (${agents} agent${agents === 1 ? '' : 's'}, two rounds)`, async () => {
      assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
      await fs.writeFile(
        ws.path('.ralph/config.json'),
        JSON.stringify({
          llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
          loop: { maxIterations: 3, maxParallel: agents },
        }),
      );
      for (const round of [1, 2]) {
        const files = Array.from({ length: agents }, (_, i) => `r${round}-${i}.txt`);
        for (const file of files) {
          const added = await runCliInProcess(
            ['task', 'add', `Write ${file}`, '--prompt', `WRITE ${file}`, '--promise', `${file} exists`],
            ws.dir,
          );
          assert.equal(added.code, 0, added.stderr);
        }
        // the winner's agents wait at their first model call until every other start has ended
        let released!: () => void;
        const everyLoserEnded = new Promise<void>((resolve) => (released = resolve));
        let firstCalls = 0;
        const agent: Step = async (request) => {
          const file = fileOf(request);
          if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
            return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: 'written' } }] };
          firstCalls++;
          await everyLoserEnded;
          return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `${file}\n` } }] };
        };
        server.push(...Array.from({ length: agents * 2 }, () => agent));

        const env = { ...CLI_ENV, NODE_OPTIONS: `--require ${path.join(barrier, 'preload.js')}` };
        await fs.writeFile(path.join(barrier, 'preload.js'), barrierPreload(barrier));
        const runs: { child: ChildProcess; done: Promise<CliResult>; result?: CliResult }[] = Array.from({ length: STARTS }, () => {
          const child = spawn(process.execPath, [CLI, 'run'], { cwd: ws.dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
          child.stdin?.on('error', () => undefined); // a run that ended before the barrier opened
          const run: { child: ChildProcess; done: Promise<CliResult>; result?: CliResult } = { child, done: collect(child) };
          void run.done.then((r) => (run.result = r));
          return run;
        });
        const until = async (check: () => boolean) => {
          for (let waited = 0; !check() && waited < 2400; waited++) await new Promise((r) => setTimeout(r, 50));
        };
        const ready = async () => (await fs.readdir(barrier)).filter((n) => n.startsWith('ready-')).length;
        let readyCount = 0;
        await until(() => {
          void ready().then((n) => (readyCount = n));
          return readyCount >= STARTS || runs.some((r) => r.result);
        });
        // the barrier opens for all at once
        for (const r of runs) if (!r.result) r.child.stdin?.write('g');
        // a second run past the lock would wait at the model too: it cannot end, and its calls show
        await until(
          () =>
            (runs.filter((r) => r.result).length >= STARTS - 1 && firstCalls >= agents) ||
            firstCalls > agents ||
            runs.every((r) => r.result),
        );
        try {
          const ended = runs.filter((r) => r.result);
          assert.equal(firstCalls, agents, `only one run's agents reached the model (${firstCalls} first calls)`);
          assert.equal(ended.length, STARTS - 1, 'every other start ended');
          for (const r of ended) {
            assert.equal(r.result?.code, 2, r.result?.stderr);
            assert.match(r.result?.stderr ?? '', /another Ralph run (holds|is taking) \.ralph\/run\.lock/);
          }
        } catch (error) {
          // a failed round must not leave runs behind in the workspace
          released();
          for (const r of runs) if (!r.result) r.child.kill('SIGKILL');
          await Promise.all(runs.map((r) => r.done));
          throw error;
        }
        released();
        const winner = await runs.find((r) => !r.result)!.done;
        assert.equal(winner.code, 0, winner.stderr + winner.stdout);
        assert.doesNotMatch(winner.stdout, /tamper|restored|run-lock/i);
        const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
        assert.ok(
          tasks.every((t) => t.status === 'done'),
          JSON.stringify(tasks.map((t) => [t.id, t.status])),
        );
        for (const file of files) assert.equal(await ws.read(file), `${file}\n`);
        assert.equal(ws.exists('.ralph/run.lock'), false);
        for (const name of await fs.readdir(barrier)) if (name.startsWith('ready-')) await fs.rm(path.join(barrier, name));
      }
      // each task's work landed once
      const ids = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks.map((t) => t.id);
      if (agents === 1) {
        assert.deepEqual(
          ws
            .git('log', '--format=%s')
            .split('\n')
            .filter((s) => s.startsWith('ralph('))
            .sort(),
          ids.map((id) => `ralph(${id}): iteration 1`).sort(),
        );
      } else {
        assert.deepEqual(
          ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean).sort(),
          [...ids].sort(),
        );
      }
    });
  }
});
