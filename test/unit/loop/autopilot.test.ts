import assert from 'node:assert/strict';
import * as path from 'node:path';
import { WorktreeManager } from '../../../src/core/git/worktrees';
import { NodeCommandRunner } from '../../../src/core/commands/processRunner';
import type { RecordedRequest, Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

/** Green while the *.num files add up to at most 10 and no file holds a conflict marker. */
const CHECK_JS = `const fs = require('fs');
const files = fs.readdirSync('.').filter((f) => fs.statSync(f).isFile());
const total = files.filter((f) => f.endsWith('.num')).reduce((n, f) => n + Number(fs.readFileSync(f, 'utf8')), 0);
const marked = files.filter((f) => f !== 'check.js' && /^(<<<<<<<|>>>>>>>) /m.test(fs.readFileSync(f, 'utf8')));
if (marked.length) { console.error('conflict markers in ' + marked.join(', ')); process.exit(2); }
if (total > 10) { console.error('total ' + total + ' exceeds 10'); process.exit(1); }
console.log('total ' + total + ' ok');
`;
const GATES = [{ name: 'check', command: 'node check.js', kind: 'custom' as const, required: true }];

/** What the scripted agent of a task writes: from the task prompt `WRITE <file> <content>`, and, after merge feedback, its fix. */
interface Plan {
  file: string;
  content: string;
  /** Written instead once the merge queue sent the task back. */
  afterReturn?: (request: RecordedRequest) => string;
}

function planOf(request: RecordedRequest): Plan & { returned: boolean } {
  const user = (request.body?.messages ?? []).find((m) => m.role === 'user');
  const text = typeof user?.content === 'string' ? user.content : '';
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no WRITE instruction in the request: ${text.slice(0, 200)}`);
  return { file: match[1], content: match[2], returned: /Merge queue:/.test(text) };
}

/**
 * A scripted agent that serves every task of a parallel run: it writes the file its task
 * names, then calls ralph_complete; sent back by the queue, it writes `fix(request)` instead.
 * `barrier` holds every first call until that many tasks have made one, which proves that the
 * agents really run at the same time (a one-at-a-time run would never get past it).
 */
function agentSteps(count: number, fixes: Record<string, (text: string) => string> = {}, barrier = 0): Step[] {
  const arrived = new Set<string>();
  let release: () => void = () => undefined;
  const allThere = new Promise<void>((resolve) => (release = resolve));
  const step: Step = async (request) => {
    const plan = planOf(request);
    const last = (request.body?.messages ?? []).at(-1);
    if (last?.role === 'tool')
      return {
        toolCalls: [{ name: 'ralph_complete', arguments: { summary: `wrote ${plan.file}`, promiseEvidence: `${plan.file} written` } }],
      };
    if (barrier > 0) {
      arrived.add(`${plan.file}:${plan.content}`);
      if (arrived.size >= barrier) release();
      await allThere;
    }
    const fix = fixes[plan.file];
    const content = plan.returned && fix ? fix(requestText(request)) : plan.content;
    return { toolCalls: [{ name: 'write_file', arguments: { path: plan.file, content } }] };
  };
  return Array.from({ length: count }, () => step);
}

describe('parallel autopilot (worktrees + merge queue, real git, scripted model)', function () {
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  async function setUp(steps: Step[], maxParallel: number): Promise<void> {
    h = await makeLoopHarness(steps);
    // a first call held at the barrier waits as long as the other agents take to start: no request timeout cuts it short
    await h.configure({ loop: { maxParallel, maxIterations: 6 }, gates: GATES, llm: { requestTimeoutMs: 600_000 } });
    await h.ws.write('check.js', CHECK_JS);
    await h.ws.write('shared.txt', 'line one\nline two\nline three\n');
    h.ws.git('add', '-A');
    h.ws.git('commit', '-q', '-m', 'project with a check');
    if (process.env.RALPH_DEBUG_EVENTS) h.bus.subscribe((e) => console.log(JSON.stringify(e).slice(0, 300)));
  }

  const addWriteTask = (id: string, file: string, content: string, extra = {}) =>
    h.addTask({ id, title: `Write ${file}`, prompt: `WRITE ${file} <<${content}>>`, promise: `${file} holds the content`, ...extra });

  /** The invariant: the required gate passes on every commit of main. */
  async function assertMainGreenEverywhere(): Promise<void> {
    const scratch = path.join(await h.ws.outsideDir(), 'scratch');
    h.ws.git('worktree', 'add', '--detach', scratch, 'main');
    try {
      for (const sha of h.ws.git('rev-list', 'main').split('\n')) {
        h.ws.git('-C', scratch, 'checkout', '-q', '--detach', sha);
        if (!h.ws.git('-C', scratch, 'ls-files', 'check.js')) continue; // before the project had its check
        const result = await new NodeCommandRunner().run({
          command: 'node check.js',
          cwd: scratch,
          timeoutMs: 20000,
          maxOutputChars: 2000,
        });
        assert.equal(result.exitCode, 0, `main is red at ${sha}: ${result.output}`);
      }
    } finally {
      h.ws.git('worktree', 'remove', '--force', scratch);
    }
  }

  function assertNoLeftovers(): void {
    assert.deepEqual(
      h.ws
        .git('worktree', 'list', '--porcelain')
        .split('\n')
        .filter((l) => l.startsWith('worktree ')),
      [`worktree ${h.ws.dir}`],
      'no worktree left behind',
    );
    assert.equal(h.ws.git('branch', '--list', 'ralph/*'), '', 'no task branch left behind');
  }

  it('4 independent tasks with 3 agents: all done, each merged exactly once, main green at every commit', async () => {
    await setUp(agentSteps(12, {}, 3), 3);
    const ids = ['T-001', 'T-002', 'T-003', 'T-004'];
    for (const [i, id] of ids.entries()) await addWriteTask(id, `f${i}.txt`, `content ${i}`);
    const summary = await h.runner().run();

    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done', 'done', 'done', 'done'],
    );
    for (const id of ids) assert.equal((await h.store.get(id)).status, 'done');
    const merged = h.ws.git('log', '--format=%(trailers:key=Ralph-Task,valueonly)', 'main').split('\n').filter(Boolean);
    assert.deepEqual([...merged].sort(), ids, 'each task landed once, as one commit');
    for (const [i] of ids.entries()) assert.equal(await h.ws.read(`f${i}.txt`), `content ${i}`, 'the user tree followed the merges');
    assert.equal(h.ws.git('status', '--porcelain', '--untracked-files=no'), '');
    await assertMainGreenEverywhere();
    assertNoLeftovers();
    // every agent worked in its own worktree: the write_file results never touched the workspace directly
    const started = eventsOf(h.events, 'task.started');
    assert.equal(started.length, 4);
    const mergeStates = eventsOf(h.events, 'merge')
      .filter((e) => e.state === 'merged')
      .map((e) => e.taskId);
    assert.deepEqual([...mergeStates].sort(), ids);
    // done only after merged: each task.finished(done) comes after its merge event
    for (const id of ids) {
      const mergedAt = h.events.findIndex((e) => e.type === 'merge' && e.taskId === id && e.state === 'merged');
      const doneAt = h.events.findIndex((e) => e.type === 'task.status' && e.taskId === id && e.to === 'done');
      assert.ok(mergedAt >= 0 && doneAt > mergedAt, `${id} is done only once merged`);
    }
  });

  it('two tasks editing the same line: the second conflicts, goes back to its agent with the hunk, resolves it on the new tip, and lands', async () => {
    const resolve = (text: string) => {
      assert.match(text, /conflicts with main/);
      assert.match(text, /Conflict in shared\.txt/);
      return 'line one\nline two: first AND second\nline three\n';
    };
    await setUp(agentSteps(10, { 'shared.txt': resolve }, 2), 2);
    // both prompts name shared.txt: planOf reads the file and content from each task's own prompt
    await h.addTask({ id: 'T-001', title: 'First', prompt: 'WRITE shared.txt <<line one\nline two: first\nline three\n>>', promise: 'p' });
    await h.addTask({
      id: 'T-002',
      title: 'Second',
      prompt: 'WRITE shared.txt <<line one\nline two: second\nline three\n>>',
      promise: 'p',
    });
    const summary = await h.runner().run();

    assert.deepEqual(summary.results.map((r) => [r.taskId, r.status]).sort(), [
      ['T-001', 'done'],
      ['T-002', 'done'],
    ]);
    const conflict = eventsOf(h.events, 'merge').find((e) => e.state === 'conflict');
    assert.ok(conflict, 'the queue reported a conflict');
    assert.deepEqual(conflict.files, ['shared.txt']);
    const returned = chatRequests(h.server).filter((r) => /Merge queue:/.test(requestText(r)));
    assert.ok(returned.length >= 1, 'the agent was told about the conflict');
    // whichever agent finished first landed; the other one sees main's line first, its own second
    const loser = conflict.taskId === 'T-001' ? 'first' : 'second';
    const winner = loser === 'first' ? 'second' : 'first';
    assert.match(
      requestText(returned[0]),
      new RegExp(`<<<<<<< [^\\n]*\\nline two: ${winner}\\n=======\\nline two: ${loser}\\n>>>>>>> ralph/${conflict.taskId}`),
    );
    assert.equal(await h.ws.read('shared.txt'), 'line one\nline two: first AND second\nline three\n');
    assert.equal(
      h.ws
        .git('log', '-p', 'main')
        .split('\n')
        .filter((l) => /^\+(<<<<<<<|>>>>>>>) /.test(l)).length,
      0,
      'no conflict marker ever on main',
    );
    await assertMainGreenEverywhere();
    assertNoLeftovers();
  });

  it('two tasks green alone and red together: the second is not merged red; its agent gets the failure and fixes it', async () => {
    const fix = (text: string) => {
      assert.match(text, /total 12 exceeds 10/);
      return '4';
    };
    await setUp(agentSteps(10, { 'a.num': fix, 'b.num': fix }, 2), 2);
    await addWriteTask('T-001', 'a.num', '6');
    await addWriteTask('T-002', 'b.num', '6');
    const summary = await h.runner().run();

    assert.deepEqual(summary.results.map((r) => r.status).sort(), ['done', 'done']);
    const red = eventsOf(h.events, 'merge').find((e) => e.state === 'failed');
    assert.ok(red, 'the merged check failed once');
    assert.match(red.detail ?? '', /check/);
    const second = red.taskId;
    const file = second === 'T-002' ? 'b.num' : 'a.num';
    assert.equal(await h.ws.read(file), '4', 'the task sent back fixed its part on the new tip');
    assert.equal(await h.ws.read(file === 'a.num' ? 'b.num' : 'a.num'), '6', 'the first one landed as it was');
    assert.equal(eventsOf(h.events, 'merge').filter((e) => e.state === 'merged').length, 2);
    await assertMainGreenEverywhere();
    assertNoLeftovers();
  });

  it('a task that keeps conflicting ends needs_help with the conflict named, its worktree kept', async () => {
    await setUp(agentSteps(10, { 'shared.txt': () => 'line one\nline two: still mine\nline three\n' }, 2), 2);
    await h.configure({ loop: { maxParallel: 2, maxIterations: 6 }, gates: GATES, merge: { maxReturns: 0 } });
    await h.addTask({ id: 'T-001', title: 'First', prompt: 'WRITE shared.txt <<line one\nline two: first\nline three\n>>', promise: 'p' });
    await h.addTask({
      id: 'T-002',
      title: 'Second',
      prompt: 'WRITE shared.txt <<line one\nline two: second\nline three\n>>',
      promise: 'p',
    });
    const summary = await h.runner().run();
    const statuses = Object.fromEntries(summary.results.map((r) => [r.taskId, r.status]));
    const loser = statuses['T-001'] === 'needs_help' ? 'T-001' : 'T-002';
    assert.deepEqual(Object.values(statuses).sort(), ['done', 'needs_help']);
    assert.match((await h.store.get(loser)).blockedReason ?? '', /conflict in shared\.txt/);
    assert.ok(h.ws.exists(`.ralph/worktrees/${loser}`), 'kept for the user');
    assert.equal(h.ws.git('branch', '--list', `ralph/${loser}`), `+ ralph/${loser}`);
    await assertMainGreenEverywhere();
  });

  it('without a branch to merge into (detached HEAD) runs one task at a time in the workspace and says why', async () => {
    await setUp(agentSteps(2), 3);
    h.ws.git('checkout', '-q', '--detach');
    const id = await addWriteTask('T-001', 'solo.txt', 'alone');
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    const warning = eventsOf(h.events, 'warning').find((w) => w.code === 'parallel-unavailable');
    assert.match(warning?.message ?? '', /detached HEAD/);
    assert.equal(await h.ws.read('solo.txt'), 'alone');
    assert.equal(h.ws.exists('.ralph/worktrees'), false, 'no worktree was made');
  });

  it('a dependent task starts only once its dependency is merged, from a tip that has it', async () => {
    await setUp(agentSteps(4), 2);
    await addWriteTask('T-001', 'base.txt', 'from T-001');
    await addWriteTask('T-002', 'next.txt', 'from T-002', { dependsOn: ['T-001'] });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [
        ['T-001', 'done'],
        ['T-002', 'done'],
      ],
    );
    const merged = h.events.findIndex((e) => e.type === 'merge' && e.taskId === 'T-001' && e.state === 'merged');
    const started = h.events.findIndex((e) => e.type === 'task.started' && e.taskId === 'T-002');
    assert.ok(merged >= 0 && started > merged, 'T-002 waited for the merge of T-001, not just its COMPLETE');
    // T-002's branch started from the tip holding T-001's work: its one queue commit adds next.txt only
    assert.equal(h.ws.git('show', '--name-only', '--format=', 'main'), '.ralph/progress/T-002.md\nnext.txt');
  });

  it('ralph run <id> resumes a halted task in its worktree', async () => {
    let calls = 0;
    const stopping: Step = async () => {
      calls++;
      return new Promise<never>(() => {});
    };
    await setUp([stopping], 2);
    await addWriteTask('T-001', 'late.txt', 'after the halt');
    const first = h.runner();
    const running = first.run();
    while (calls === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    first.stop();
    const halted = await running;
    assert.deepEqual(
      halted.results.map((r) => r.status),
      ['halted'],
    );
    assert.ok(h.ws.exists('.ralph/worktrees/T-001'), 'the halted task keeps its worktree');
    h.server.push(...agentSteps(2));
    const resumed = await h.runner().run({ taskId: 'T-001' });
    assert.deepEqual(
      resumed.results.map((r) => [r.taskId, r.status]),
      [['T-001', 'done']],
    );
    assert.equal(await h.ws.read('late.txt'), 'after the halt');
  });

  it('waits while the user has uncommitted changes to a file the merge touches, says so once, and merges once they are gone', async () => {
    await setUp(agentSteps(2), 2);
    await addWriteTask('T-001', 'shared.txt', 'line one\nthe task rewrote this\nline three\n');
    await h.ws.write('shared.txt', 'line one\nthe user is typing here\nline three\n');
    let looks = 0;
    h.bus.subscribe((e) => {
      // the user gives up their edit only after the queue has looked twice
      if (e.type === 'merge' && e.state === 'waiting' && ++looks === 2) h.ws.git('checkout', '--', 'shared.txt');
    });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
    );
    assert.equal(looks, 2);
    const warnings = eventsOf(h.events, 'warning').filter((w) => w.code === 'merge-waiting');
    assert.equal(warnings.length, 1, 'said once, not at every look');
    assert.match(warnings[0].message, /shared\.txt would be overwritten/);
    assert.equal(await h.ws.read('shared.txt'), 'line one\nthe task rewrote this\nline three\n');
    assert.equal(h.ws.git('stash', 'list'), '');
  });

  it('maxParallel 1 still finishes a task that has a worktree through the queue, so its work is never stranded', async () => {
    await setUp(agentSteps(2), 3);
    await addWriteTask('T-001', 'w.txt', 'finished later');
    const { path: dir } = await new WorktreeManager(h.ws.dir).create('T-001', 'main');
    await h.ws.write(path.relative(h.ws.dir, path.join(dir, 'earlier.txt')), 'work of an earlier parallel run\n');
    h.ws.git('-C', dir, 'add', '-A');
    h.ws.git('-C', dir, 'commit', '-q', '-m', 'ralph(T-001): iteration 1');
    await h.store.update('T-001', { status: 'in_progress' });
    await h.configure({ loop: { maxParallel: 1, maxIterations: 6 }, gates: GATES });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['done'],
    );
    assert.equal(await h.ws.read('earlier.txt'), 'work of an earlier parallel run\n', 'the branch work landed');
    assert.equal(await h.ws.read('w.txt'), 'finished later');
    assertNoLeftovers();
  });

  it('one run budget for all agents: the cap holds within one model call per running agent', async () => {
    await setUp(agentSteps(9, {}, 3), 3);
    await h.configure({ loop: { maxParallel: 3, maxIterations: 6 }, gates: GATES, budget: { maxTokens: 100 } });
    for (const [i, id] of ['T-001', 'T-002', 'T-003'].entries()) await addWriteTask(id, `b${i}.txt`, 'x');
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['halted', 'halted', 'halted'],
    );
    for (const r of summary.results) assert.match(r.reason, /run token budget reached/);
    const calls = chatRequests(h.server);
    const windDowns = calls.filter((r) => r.body?.max_completion_tokens !== undefined);
    assert.equal(
      calls.length - windDowns.length,
      3,
      'each agent made the one call it had started; none after the cap but its wind-down turn',
    );
    assert.equal(windDowns.length, 3, 'one bounded wind-down turn per agent the cap cut short');
    for (const r of windDowns)
      assert.deepEqual(
        r.body?.tools?.map((t) => t.function.name),
        ['write_file', 'edit_file'],
      );
    assert.deepEqual(
      eventsOf(h.events, 'wind-down').map((e) => e.cause),
      ['budget', 'budget', 'budget'],
    );
    for (const id of ['T-001', 'T-002', 'T-003']) assert.ok(h.ws.exists(`.ralph/worktrees/${id}`), 'halted work stays in its worktree');
  });

  it('the error-threshold question pauses the whole autopilot until it is answered', async () => {
    const normal = agentSteps(1)[0];
    const failing: Step = (request) =>
      planOf(request).file === 'bad.txt'
        ? { fault: 'status', status: 400, body: { error: { message: 'bad request' } } }
        : typeof normal === 'function'
          ? normal(request)
          : normal;
    await setUp(
      Array.from({ length: 12 }, () => failing),
      2,
    );
    await addWriteTask('T-001', 'bad.txt', 'never');
    await addWriteTask('T-002', 'good.txt', 'fine');
    const asked: { code: string; pausedWhileAsked: boolean }[] = [];
    const runner = h.runner({
      safeguards: {
        decide: async (warning) => {
          asked.push({ code: warning.code, pausedWhileAsked: runner.paused });
          return { action: 'stop' };
        },
      },
    });
    const summary = await runner.run();
    const byId = Object.fromEntries(summary.results.map((r) => [r.taskId, r.status]));
    assert.equal(byId['T-002'], 'done');
    assert.equal(byId['T-001'], 'failed');
    const threshold = asked.find((a) => a.code === 'error-threshold');
    assert.equal(threshold?.pausedWhileAsked, true, 'every agent waits while the person decides');
    assert.equal(runner.paused, false, 'resumed once answered');
    assert.deepEqual(
      eventsOf(h.events, 'run.paused').map((e) => e.taskId),
      ['T-001'],
    );
    assert.deepEqual(
      eventsOf(h.events, 'run.resumed').map((e) => e.taskId),
      ['T-001'],
    );
  });
});
