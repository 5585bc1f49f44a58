import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { BaseRunCache, type BaseRun, localized, portable } from '../../../src/core/loop/baseRunCache';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { makeTempWorkspace } from '../helpers/tempWorkspace';

/**
 * A node:test suite that writes down every run of it (where it ran, which *.num files it saw)
 * in a file outside the repository, with one test that fails everywhere (pre-existing at the
 * base) and one that checks the tasks' files. Slow enough (≈ 0.6 s) for tasks to start together.
 */
function suite(log: string): string {
  return `const fs = require('fs'); const path = require('path'); const test = require('node:test'); const assert = require('assert');
const files = fs.readdirSync('.').filter((f) => f.endsWith('.num')).sort();
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ where: path.basename(process.cwd()), files }) + '\\n');
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600);
test('legacy date parsing', () => assert.equal(new Date('2001-02-30').getDate(), 30));
test('num files hold digits', () => { for (const f of files) assert.match(fs.readFileSync(f, 'utf8'), /^\\d+$/); });
`;
}

function fileOf(request: RecordedRequest): { file: string; content: string } {
  const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : '';
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no WRITE instruction: ${text.slice(0, 200)}`);
  return { file: match[1], content: match[2] };
}

const agent: Step = (request) => {
  const { file, content } = fileOf(request);
  if ((request.body?.messages ?? []).at(-1)?.role === 'tool') return { toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${file}`, promiseEvidence: `${file} written` } }] };
  return { toolCalls: [{ name: 'write_file', arguments: { path: file, content } }] };
};

interface SuiteRun {
  where: string;
  files: string[];
}

describe('the gates\' runs at the base, shared by the tasks that start on the same commit (real git, scripted model)', function () {
  this.timeout(240000);
  let h: LoopHarness;
  let dir: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-baseruns-'));
  });
  afterEach(async () => {
    await h?.cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function project(tasks: { n: number; dependsOn?: string[] }[]): Promise<{ ids: string[]; runs: () => Promise<SuiteRun[]> }> {
    const log = path.join(dir, 'runs.jsonl');
    h = await makeLoopHarness(Array.from({ length: 40 }, () => agent));
    // no sandbox: the suite writes its log outside the repository
    await h.configure({ loop: { maxParallel: 4, maxIterations: 4 }, commands: { sandbox: 'off' }, gates: [{ name: 'suite', command: 'node --test --test-reporter=tap suite.test.js', kind: 'tests', required: true }] });
    await h.ws.write('suite.test.js', suite(log));
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a red legacy test');
    const ids: string[] = [];
    for (const t of tasks) ids.push(await h.addTask({ title: `Write n${t.n}`, prompt: `WRITE n${t.n}.num <<${t.n}>>`, promise: `n${t.n}.num written`, ...(t.dependsOn ? { dependsOn: t.dependsOn } : {}) }));
    // the agents' runs (the merge queue's checks run in _merge worktrees, at their own base too)
    const runs = async () => (await fs.readFile(log, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as SuiteRun).filter((r) => !r.where.startsWith('_merge'));
    return { ids, runs };
  }

  it('4 tasks on one base: the suite runs there once, and each task still has the red legacy test forgiven as pre-existing', async () => {
    const { ids, runs } = await project([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
    const summary = await h.runner().run();
    assert.deepEqual(summary.results.map((r) => r.status), ids.map(() => 'done'), summary.results.map((r) => r.reason).join('; '));
    const all = await runs();
    const atBase = all.filter((r) => r.files.length === 0);
    assert.equal(atBase.length, 1, `one run at the shared base, saw ${JSON.stringify(all)}`);
    assert.ok(ids.includes(atBase[0].where), 'the base run happened in one task\'s worktree');
    // each task's baseline carries the base's verdict: the legacy failure is forgiven in every task's completion
    const baselines = eventsOf(h.events, 'integrity.baseline');
    assert.deepEqual(baselines.map((b) => b.taskId).sort(), [...ids].sort());
    for (const b of baselines) assert.equal(b.gates[0].tests?.named, 2);
    const finished = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId && ids.includes(e.taskId));
    for (const id of ids) {
      const own = finished.filter((e) => e.taskId === id && e.passed);
      assert.ok(own.length >= 1, `${id} passed its gate`);
      assert.deepEqual(own[0].preExisting, ['legacy date parsing'], `${id}: the legacy failure forgiven`);
    }
  });

  it('a task that starts after another landed (a new base) runs the suite at its own base', async () => {
    const first = await project([{ n: 1 }, { n: 2 }]);
    const dependent = await h.addTask({ title: 'Write n3', prompt: 'WRITE n3.num <<3>>', promise: 'n3.num written', dependsOn: [first.ids[0]] });
    const summary = await h.runner().run();
    assert.deepEqual(summary.results.map((r) => r.status), ['done', 'done', 'done'], summary.results.map((r) => r.reason).join('; '));
    const all = await first.runs();
    assert.equal(all.filter((r) => r.files.length === 0).length, 1, `the two first tasks shared their base's run: ${JSON.stringify(all)}`);
    const dependentBase = all.filter((r) => r.where === dependent && !r.files.includes('n3.num'));
    assert.equal(dependentBase.length, 1, `the dependent task ran its own base check: ${JSON.stringify(all)}`);
    assert.ok(dependentBase[0].files.includes('n1.num'), 'its base has the task it depends on');
    const own = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId === dependent && e.passed);
    assert.deepEqual(own[0]?.preExisting, ['legacy date parsing']);
  });
});

describe('BaseRunCache', () => {
  const run: BaseRun = { verdict: { passed: true, failing: [], unnamed: 0, counted: true } };

  it('a name that spells out the tree (a file that failed to load) is read in the other tree, under the same spelling of its root', () => {
    const failing = (name: string) => ({ tests: { passed: 0, failed: 1, total: 1, skipped: 0, failures: [{ name }] }, verdict: { passed: false, failing: [{ name }], unnamed: 0, counted: true } }) as BaseRun;
    const shared = portable(failing('/private/var/wt/T-001/suite.test.js'), ['/var/wt/T-001', '/private/var/wt/T-001']);
    assert.equal(localized(shared, ['/var/wt/T-002', '/private/var/wt/T-002']).verdict.failing[0].name, '/private/var/wt/T-002/suite.test.js');
    const plain = portable(failing('/tmp/wt/T-001/suite.test.js'), ['/tmp/wt/T-001']);
    assert.equal(localized(plain, ['/tmp/wt/T-003']).tests?.failures[0].name, '/tmp/wt/T-003/suite.test.js');
  });

  it('shares one run among the callers that ask at once', async () => {
    const cache = new BaseRunCache();
    let produced = 0;
    const produce = async () => {
      produced++;
      await new Promise((r) => setTimeout(r, 50));
      return run;
    };
    const stop = new AbortController().signal;
    const results = await Promise.all([1, 2, 3].map(() => cache.run('k', stop, produce)));
    assert.equal(produced, 1);
    for (const r of results) assert.equal(r, run);
    assert.equal(await cache.run('k', stop, produce), run);
    assert.equal(produced, 1, 'a finished run is kept for the run');
  });

  it('drops a run its owner stopped: a waiter runs its own, and so does the next caller', async () => {
    const cache = new BaseRunCache();
    let produced = 0;
    const owner = new AbortController();
    const produce = (signal: AbortSignal) => {
      produced++;
      return new Promise<BaseRun | undefined>((resolve) => {
        const timer = setTimeout(() => resolve(run), 50);
        signal.addEventListener('abort', () => (clearTimeout(timer), resolve(undefined)), { once: true });
      });
    };
    const first = cache.run('k', owner.signal, produce);
    const waiter = cache.run('k', new AbortController().signal, produce);
    owner.abort();
    assert.equal(await first, undefined);
    assert.equal(await waiter, run, 'the waiter ran its own');
    assert.equal(produced, 2);
  });

  it('a waiter stopped while waiting leaves the run to the others', async () => {
    const cache = new BaseRunCache();
    let produced = 0;
    const produce = async () => {
      produced++;
      await new Promise((r) => setTimeout(r, 50));
      return run;
    };
    const first = cache.run('k', new AbortController().signal, produce);
    const stopped = new AbortController();
    const waiter = cache.run('k', stopped.signal, produce);
    stopped.abort();
    assert.equal(await waiter, undefined);
    assert.equal(await first, run);
    assert.equal(await cache.run('k', new AbortController().signal, produce), run);
    assert.equal(produced, 1);
  });
});

describe('BaseRunCache keys (real git)', () => {
  const gate = { name: 'suite', command: 'node --test', kind: 'tests', required: true } as Parameters<BaseRunCache['keyFor']>[1];

  it('two worktrees at one clean commit share a key; a changed tracked file, another commit or another gate definition do not', async () => {
    const ws = await makeTempWorkspace({ commit: true, files: { 'a.txt': 'a\n' } });
    const other = path.join(ws.dir, '..', `${path.basename(ws.dir)}-wt`);
    try {
      ws.git('worktree', 'add', '-q', '--detach', other);
      const cache = new BaseRunCache();
      const key = await cache.keyFor(ws.dir, gate);
      assert.ok(key);
      assert.equal(await cache.keyFor(other, gate), key);
      assert.notEqual(await cache.keyFor(ws.dir, { ...gate, timeoutMs: 5000 }), key, 'the whole definition is the key');
      await fs.writeFile(path.join(other, 'a.txt'), 'changed\n');
      assert.equal(await cache.keyFor(other, gate), undefined, 'a tree with changes is never shared');
      await fs.writeFile(path.join(ws.dir, 'new.test.js'), 'untracked\n');
      const untracked = await cache.keyFor(ws.dir, gate);
      assert.ok(untracked && untracked !== key, 'an untracked file the suite may read makes another key');
      ws.git('add', '-A');
      ws.git('commit', '-q', '-m', 'next');
      assert.notEqual(await cache.keyFor(ws.dir, gate), key, 'another commit, another key');
    } finally {
      await fs.rm(other, { recursive: true, force: true });
      await ws.cleanup();
    }
  });
});
