import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';

import { TaskFileSchema } from '../../../src/core/tasks/schema';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { TEST_KEY_ENV } from '../helpers/loopHarness';
import { fileOf, runCliInProcess, startCli } from '../helpers/cliHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

/**
 * Passes at once on a tree with one task's work (a task's worktree, the first prefix onto main);
 * on a prefix of two or more tasks (a merge worktree) it waits (bounded) for `.ralph/runs/release`
 * of the workspace.
 */
const GATE_JS = `const fs = require('fs'); const path = require('path');
const cwd = process.cwd();
const work = fs.readdirSync(cwd).filter((f) => /^[a-d]\\.txt$/.test(f)).length;
if (/_merge/.test(path.basename(cwd)) && work >= 2) {
  const release = path.resolve(cwd, '..', '..', '..', '.ralph', 'runs', 'release');
  const until = Date.now() + 60000;
  while (!fs.existsSync(release) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
}
console.log('ok');
`;

const agent: Step = (request) => {
  const file = fileOf(request);
  if ((request.body?.messages ?? []).at(-1)?.role === 'tool')
    return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: 'written' } }] };
  return { toolCalls: [{ name: 'write_file', arguments: { path: file, content: `made for ${file}\n` } }] };
};

interface Chain {
  entries: { taskId: string; state: string; place?: number }[];
}

describe('a run killed with SIGKILL during concurrent merged checks, then run again', function () {
  this.timeout(120000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  beforeEach(async () => {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n', 'gate.js': GATE_JS } });
    server = await startScriptedServer();
  });
  afterEach(async () => {
    await server.close();
    await ws.cleanup();
  });

  it('lands nothing twice and nothing unchecked, and leaves no orphan merge worktree', async () => {
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 1 },
      loop: { maxIterations: 4, maxParallel: 3 },
      merge: { concurrency: 3 },
      gates: [{ name: 'suite', kind: 'custom', command: 'node gate.js', required: true }],
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    const ids: string[] = [];
    for (const file of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) {
      const added = await runCliInProcess(
        ['task', 'add', `Write ${file}`, '--prompt', `WRITE ${file}`, '--promise', `${file} exists`],
        ws.dir,
      );
      assert.equal(added.code, 0, added.stderr);
      ids.push(added.stdout.trim());
    }
    server.push(...Array.from({ length: 8 }, () => agent));
    const first = startCli(['run'], ws.dir);
    // the first task onto main lands at once (its prefix holds one task's work); the three behind it are in
    // the chain, checked side by side (each check of two tasks' work or more waits for the release)
    const chainFile = ws.path('.ralph', 'runs', 'merge-chain.json');
    const checking = async (besides: string) => {
      const text = await fs.readFile(chainFile, 'utf8').catch(() => '');
      const chain = text ? (JSON.parse(text) as Chain) : { entries: [] };
      return chain.entries.filter((e) => e.state === 'checking' && e.place !== undefined && e.taskId !== besides).length;
    };
    const mergeDirs = async () =>
      (await fs.readdir(ws.path('.ralph', 'worktrees')).catch(() => [] as string[])).filter((n) => n.startsWith('_merge')).sort();
    const nap = () => new Promise((resolve) => setTimeout(resolve, 100));
    // the first landing, then the three behind it in their checks (the chain file may still show the landed one a moment)
    for (let waited = 0; ws.git('rev-list', '--count', 'main') !== '2' && waited < 600; waited++) await nap();
    const firstLanded = ws.git('log', '-1', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').trim();
    assert.ok(ids.includes(firstLanded), `the first task landed (${firstLanded})`);
    for (let waited = 0; ((await checking(firstLanded)) < 3 || (await mergeDirs()).length < 3) && waited < 600; waited++) await nap();
    assert.equal(await checking(firstLanded), 3, 'three prefixes in their checks at once');
    assert.deepEqual(await mergeDirs(), ['_merge', '_merge-2', '_merge-3'], 'each in its own merge worktree');
    first.child.kill('SIGKILL');
    assert.equal((await first.done).code, null);
    assert.equal(ws.git('rev-list', '--count', 'main'), '2', 'only the first task landed: nothing landed before its check passed');

    // what the run left: `ralph status` shows the chain as it stood
    const status = await startCli(['status'], ws.dir).done;
    assert.equal(status.code, 0, status.stderr);
    assert.match(status.stdout, /merge queue → main \(as the last run left it, .*\):/);
    assert.match(status.stdout, /#3 T-00\d checking on main \+ T-00\d \+ T-00\d \+ T-00\d — checking, lands after T-00\d, T-00\d/);

    await fs.writeFile(ws.path('.ralph', 'runs', 'release'), '');
    server.push(...Array.from({ length: 6 }, () => agent));
    const second = await startCli(['run'], ws.dir).done;
    assert.equal(second.code, 0, second.stderr + second.stdout);
    const tasks = TaskFileSchema.parse(JSON.parse(await ws.read('.ralph/tasks.json'))).tasks;
    assert.deepEqual(
      tasks.map((t) => t.status),
      ['done', 'done', 'done', 'done'],
    );
    const landed = ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean);
    assert.deepEqual([...landed].sort(), [...ids].sort(), 'each task landed exactly once');
    // every commit main got is a prefix the second run checked (a merged check's gate passed for each task)
    const checkedTasks = [...second.stdout.matchAll(/^⇶ (T-00\d) merge merged: merged into main as ([0-9a-f]{10})$/gm)].map((m) => m[2]);
    assert.deepEqual(
      new Set(checkedTasks),
      new Set(
        ws
          .git('rev-list', 'main', '--max-count=3')
          .split('\n')
          .map((s) => s.slice(0, 10)),
      ),
    );
    assert.deepEqual(
      ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
      [`worktree ${ws.dir}`],
      'no orphan merge worktree',
    );
    assert.deepEqual(await mergeDirs(), []);
    assert.equal(ws.git('status', '--porcelain', '--untracked-files=no'), '');
  });
});
