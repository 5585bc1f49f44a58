import assert from 'node:assert/strict';
import { assertGreenAtEveryCommit } from '../helpers/greenHistory';
import { eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { writeAgent } from '../helpers/writeAgent';

/**
 * A slow suite: green while the *.num files add up to at most 30. A merged check (in a merge
 * worktree, `_merge…`) leaves `check-started` (ignored by git) in its tree; the one in `_merge`
 * first waits (bounded) until another merged check's process has started — which only happens
 * when two merged checks run at once — and every merged check takes a while, as a real suite does.
 */
const CHECK_JS = `const fs = require('fs'); const path = require('path');
const nap = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
const here = path.basename(process.cwd());
if (here.startsWith('_merge')) fs.writeFileSync('check-started', String(process.pid));
const another = () => fs.readdirSync('..').some((d) => d !== here && d.startsWith('_merge') && fs.existsSync(path.join('..', d, 'check-started')));
if (here === '_merge') { const until = Date.now() + 20000; while (!another() && Date.now() < until) nap(50); }
if (here.startsWith('_merge')) nap(300);
const total = fs.readdirSync('.').filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
if (total > 30) { console.error('total ' + total + ' exceeds 30'); process.exit(1); }
console.log('total ' + total + ' ok');
`;

const agent = writeAgent;

describe('the merge chain in a parallel run (real git, scripted model, a slow suite)', function () {
  this.timeout(240000);
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('12 tasks with 4 agents: all land, checked side by side, main green at every commit, each landed tree the checked one', async () => {
    h = await makeLoopHarness(Array.from({ length: 30 }, () => agent));
    await h.configure({
      loop: { maxParallel: 4, maxIterations: 4 },
      merge: { concurrency: 4 },
      gates: [{ name: 'suite', command: 'node check.js', kind: 'custom', required: true }],
    });
    await h.ws.write('check.js', CHECK_JS);
    await h.ws.write('.gitignore', 'check-started\n');
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a slow suite');
    const project = h.ws.git('rev-parse', 'HEAD');
    const ids: string[] = [];
    for (let i = 1; i <= 12; i++) {
      const id = `T-${String(i).padStart(3, '0')}`;
      ids.push(id);
      await h.addTask({ id, title: `Write n${i}`, prompt: `WRITE n${i}.num <<${i % 3}>>`, promise: `n${i}.num written` });
    }
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ids.map(() => 'done'),
    );
    const landed = h.ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', `${project}..main`).split('\n').filter(Boolean);
    assert.deepEqual([...landed].sort(), ids, 'each task landed once, as one commit');

    // merged checks ran side by side (a check in _merge waited for a second one's process to start)
    let running = 0;
    let most = 0;
    for (const e of h.events) {
      if (e.type === 'gate.started' && e.iteration === undefined && e.taskId) most = Math.max(most, ++running);
      if (e.type === 'gate.finished' && e.iteration === undefined && e.taskId) running--;
    }
    assert.ok(most >= 2, `merged checks at once: ${most}`);

    // every commit main got is exactly a tree whose merged check passed
    const merges = eventsOf(h.events, 'merge');
    const commits = h.ws.git('rev-list', '--reverse', `${project}..main`).split('\n');
    assert.deepEqual(
      merges.filter((e) => e.state === 'merged').map((e) => e.commit),
      commits,
    );
    for (const e of merges.filter((m) => m.state === 'merged')) {
      assert.ok(e.gates?.length && e.gates.every((g) => g.passed), `${e.taskId} landed with a passed merged check`);
      const checkedOn = merges.filter((m) => m.taskId === e.taskId && m.state === 'checking' && m.chain).at(-1);
      assert.ok(checkedOn?.chain?.passed, `${e.taskId}'s own prefix was green before it landed`);
    }
    // and main is green at every one of them
    await assertGreenAtEveryCommit(h.ws, 'node check.js', commits);
    assert.deepEqual(
      h.ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
      [`worktree ${h.ws.dir}`],
      'no merge worktree left',
    );
  });
});
