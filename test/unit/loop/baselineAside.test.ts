import assert from 'node:assert/strict';
import { existsSync, promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Step } from '../../fixtures/scriptedServer';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';

/**
 * A node:test suite that, at the task's base (no *.num file), waits — bounded — for a release
 * file the agent's first model call writes, so the base run can only end if the agent ran beside
 * it. Every run logs where it ran and whether it got to its end. One legacy test fails everywhere.
 */
function suite(log: string, release: string): string {
  return `const fs = require('fs'); const path = require('path'); const test = require('node:test'); const assert = require('assert');
const files = fs.readdirSync('.').filter((f) => f.endsWith('.num'));
const where = path.basename(process.cwd());
fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ where, files, phase: 'start' }) + '\\n');
if (files.length === 0) {
  const until = Date.now() + 60000;
  while (!fs.existsSync(${JSON.stringify(release)}) && Date.now() < until) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  fs.appendFileSync(${JSON.stringify(log)}, JSON.stringify({ where, files, phase: 'end', released: fs.existsSync(${JSON.stringify(release)}) }) + '\\n');
}
test('legacy date parsing', () => assert.equal(new Date('2001-02-30').getDate(), 30));
test('num files hold digits', () => { for (const f of files) assert.match(fs.readFileSync(f, 'utf8'), /^\\d+$/); });
`;
}

interface Logged {
  where: string;
  files: string[];
  phase: 'start' | 'end';
  released?: boolean;
}

describe('the integrity baseline beside the first iteration (a task in a worktree, real git, scripted model)', function () {
  this.timeout(120000);
  let h: LoopHarness;
  let dir: string;
  let log: string;
  let release: string;
  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-aside-'));
    log = path.join(dir, 'runs.jsonl');
    release = path.join(dir, 'release');
  });
  afterEach(async () => {
    await h?.cleanup();
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function project(steps: Step[]): Promise<string> {
    h = await makeLoopHarness(steps);
    // no sandbox: the suite writes its log outside the repository
    await h.configure({
      // gate processes not bounded by the machine's idle time: a held base run must not keep the first iteration's gates out
      loop: { maxParallel: 2, maxIterations: 3, maxConcurrentGates: 3 },
      commands: { sandbox: 'off' },
      gates: [{ name: 'suite', command: 'node --test --test-reporter=tap suite.test.js', kind: 'tests', required: true }],
    });
    await h.ws.write('suite.test.js', suite(log, release));
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a red legacy test');
    return h.addTask({ title: 'Write n1', prompt: 'Write n1.num holding 1', promise: 'n1.num written' });
  }
  const logged = async () =>
    (await fs.readFile(log, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Logged);
  const worktrees = () =>
    h.ws
      .git('worktree', 'list', '--porcelain')
      .split('\n')
      .filter((l) => l.startsWith('worktree '));

  it('the agent works while the suite runs at the base in a scratch worktree; the first gates are judged against that run', async () => {
    let called = false;
    const id = await project([
      () => {
        called = true;
        return { toolCalls: [{ name: 'write_file', arguments: { path: 'n1.num', content: '1' } }] };
      },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote n1.num', promiseEvidence: 'n1.num written' } }] },
    ]);
    // the base run ends only once the agent is at work and its loop wrote the task's checkpoint meanwhile (not tampering)
    h.bus.subscribe((event) => {
      if (event.type === 'checkpoint' && called) void fs.writeFile(release, '');
    });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
      summary.results.map((r) => r.reason).join('; '),
    );
    const base = (await logged().catch(() => [] as Logged[])).filter((r) => r.files.length === 0);
    assert.deepEqual(
      base.map((r) => [r.where, r.phase, r.released]),
      [
        [`_base-${id}`, 'start', undefined],
        [`_base-${id}`, 'end', true],
      ],
      'one run at the base, in the scratch worktree, released once the agent was at work',
    );
    const own = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId === id && e.passed);
    assert.deepEqual(
      own[0]?.preExisting,
      ['legacy date parsing'],
      'the legacy failure forgiven as pre-existing: judged against the base run',
    );
    const baseline = eventsOf(h.events, 'integrity.baseline').find((b) => b.taskId === id);
    assert.equal(baseline?.gates[0].tests?.named, 2);
    const cp = JSON.parse(await fs.readFile(h.paths.state(id), 'utf8')) as { integrity?: { gates: { gate: string }[] } };
    assert.deepEqual(
      cp.integrity?.gates.map((g) => g.gate),
      ['suite'],
      'the baseline is kept in the checkpoint',
    );
    assert.deepEqual(
      eventsOf(h.events, 'warning').filter((w) => w.code === 'tampering'),
      [],
      "the loop's own checkpoint writes during the base run are not tampering",
    );
    assert.deepEqual(worktrees(), [`worktree ${h.ws.dir}`], 'no scratch or task worktree left');
    assert.equal(existsSync(path.join(h.ws.dir, '.ralph', 'worktrees', `_base-${id}`)), false);
  });

  it('a whole run in iteration 1 that ends before the base run waits for it and is judged against it (no part to go on with)', async () => {
    const id = await project([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'n1.num', content: '1' } }] },
      { content: 'more to do\n<ralph>PROGRESS:50</ralph>' },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote n1.num', promiseEvidence: 'n1.num written' } }] },
    ]);
    // the base run ends only once iteration 1's own whole run has begun (the gate names its file: no part)
    h.bus.subscribe((event) => {
      if (event.type === 'gate.started' && event.iteration === 1) void fs.writeFile(release, '');
    });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
      summary.results.map((r) => r.reason).join('; '),
    );
    const own = eventsOf(h.events, 'gate.finished').filter((e) => e.taskId === id && e.iteration !== undefined);
    assert.deepEqual(
      own.map((e) => [e.iteration, e.passed, e.preExisting ?? []]),
      [
        [1, true, ['legacy date parsing']],
        [2, true, ['legacy date parsing']],
      ],
      'iteration 1 waited for the base run: the legacy failure judged pre-existing there already',
    );
    const base = (await logged()).filter((r) => r.files.length === 0);
    assert.deepEqual(
      base.map((r) => [r.phase, r.released]),
      [
        ['start', undefined],
        ['end', true],
      ],
      'one run at the base, released by iteration 1',
    );
  });
  it('a task that ends (BLOCKED) before its base run: the run is stopped and its scratch worktree removed', async () => {
    const id = await project([{ content: 'the spec contradicts itself\n<ralph>BLOCKED:the spec contradicts itself</ralph>' }]);
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['blocked'],
      summary.results.map((r) => r.reason).join('; '),
    );
    const base = (await logged().catch(() => [] as Logged[])).filter((r) => r.files.length === 0);
    assert.ok(!base.some((r) => r.phase === 'end'), `the base run was stopped before its end: ${JSON.stringify(base)}`);
    assert.equal(existsSync(path.join(h.ws.dir, '.ralph', 'worktrees', `_base-${id}`)), false, 'its scratch is gone');
    assert.ok(!worktrees().some((w) => w.includes(`_base-${id}`)), `git forgot it too: ${worktrees().join(', ')}`);
    assert.deepEqual(
      eventsOf(h.events, 'warning').filter((w) => w.code === 'integrity-baseline-missing'),
      [],
      'a stop is not a missing baseline',
    );
  });
  it('a resumed task whose checkpoint lacks the baseline takes it at its base commit, not going on without one', async () => {
    await fs.writeFile(release, '');
    const write =
      (file: string): Step =>
      () => ({ toolCalls: [{ name: 'write_file', arguments: { path: file, content: '1' } }] });
    const id = await project([
      write('n1.num'),
      { content: 'more to do\n<ralph>PROGRESS:50</ralph>' },
      { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote n1.num', promiseEvidence: 'n1.num written' } }] },
    ]);
    await h.store.update(id, { maxIterations: 1 });
    const first = await h.runner().run();
    assert.deepEqual(
      first.results.map((r) => r.status),
      ['timeout'],
      first.results.map((r) => r.reason).join('; '),
    );
    // a checkpoint without the baseline (as a process killed before it was written leaves it)
    const state = JSON.parse(await fs.readFile(h.paths.state(id), 'utf8')) as Record<string, unknown>;
    assert.ok(state.integrity, 'the first run kept it');
    delete state.integrity;
    await fs.writeFile(h.paths.state(id), JSON.stringify(state));
    await h.store.update(id, { status: 'in_progress', maxIterations: 3 });
    const before = h.events.length;
    const second = await h.runner().run();
    assert.deepEqual(
      second.results.map((r) => r.status),
      ['done'],
      second.results.map((r) => r.reason).join('; '),
    );
    const later = h.events.slice(before);
    assert.deepEqual(
      eventsOf(later, 'warning').filter((w) => w.code === 'integrity-baseline-missing'),
      [],
      'no run without a baseline',
    );
    assert.equal(
      eventsOf(later, 'integrity.baseline').find((b) => b.taskId === id)?.gates[0].tests?.named,
      2,
      "taken again, at the base (the base's two tests)",
    );
    const own = eventsOf(later, 'gate.finished').filter((e) => e.taskId === id && e.passed);
    assert.deepEqual(own[0]?.preExisting, ['legacy date parsing']);
  });
});
