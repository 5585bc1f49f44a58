import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { LockError } from '../../../src/core/errors';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RunLock } from '../../../src/core/loop/run/runLock';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, readJson, requestText } from '../helpers/loopHarness';

const writeHello = (content = 'hi'): Step => ({ toolCalls: [{ name: 'write_file', arguments: { path: 'hello.txt', content } }] });
const complete: Step = {
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'wrote hello.txt', promiseEvidence: 'hello.txt contains hi' } }],
};
const progress = (percent: number): Step => ({ content: `working <ralph>PROGRESS:${percent}</ralph>` });

describe('the Ralph loop (against the scripted server)', function () {
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('takes a task from todo to done, committing each iteration that changed files', async () => {
    h = await makeLoopHarness([writeHello('draft'), progress(50), writeHello('hi'), complete]);
    const id = await h.addTask();
    const summary = await h.runner().run();

    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    const task = await h.store.get(id);
    assert.equal(task.status, 'done');
    assert.equal(task.iterations, 2);
    assert.equal(await h.ws.read('hello.txt'), 'hi');
    const log = h.ws.git('log', '--format=%s').split('\n');
    assert.deepEqual(log.slice(0, 2), [`ralph(${id}): iteration 2`, `ralph(${id}): iteration 1`]);
    assert.equal(h.ws.git('status', '--porcelain', '--', 'hello.txt'), '');
    // bookkeeping files are not committed
    assert.equal(h.ws.git('ls-files', '.ralph/state', '.ralph/runs'), '');
    assert.deepEqual(
      eventsOf(h.events, 'git.commit').map((e) => e.iteration),
      [1, 2],
    );
  });

  it('starts every iteration from a fresh context carrying the prompt, promise, notes and previous outcome', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'write_file', arguments: { path: '.ralph/progress/T-001.md', content: 'NOTE-FROM-ITERATION-1' } }] },
      { content: 'SECRET-ASSISTANT-TEXT-1 <ralph>PROGRESS:40</ralph>' },
      complete,
    ]);
    await h.addTask({ prompt: 'EXACT-PROMPT-42', promise: 'EXACT-PROMISE-42' });
    await h.runner().run();

    const requests = chatRequests(h.server);
    assert.equal(requests.length, 3);
    const second = requests[2];
    const messages = second.body?.messages ?? [];
    assert.deepEqual(
      messages.map((m) => m.role),
      ['system', 'user'],
      'iteration 2 starts with a fresh two-message context',
    );
    const text = requestText(second);
    assert.match(text, /EXACT-PROMPT-42/);
    assert.match(text, /EXACT-PROMISE-42/);
    assert.match(text, /NOTE-FROM-ITERATION-1/);
    assert.match(text, /Iteration 2 of at most 5/);
    assert.match(text, /signal PROGRESS:40/);
    assert.doesNotMatch(
      JSON.stringify(messages),
      /"content":"NOTE-FROM-ITERATION-1"|tool_call/,
      'no tool transcript of iteration 1 leaks into iteration 2',
    );
    assert.equal(requests[1].body?.messages?.length, 4, 'within an iteration the conversation continues (system, user, assistant, tool)');
  });

  it('ends in timeout when max iterations are used up', async () => {
    h = await makeLoopHarness([progress(10), progress(20), progress(30)]);
    const id = await h.addTask({ maxIterations: 3 });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    assert.match(summary.results[0].reason, /max iterations \(3\)/);
    assert.equal((await h.store.get(id)).iterations, 3);
    assert.equal(chatRequests(h.server).length, 3);
  });

  it('ends blocked with the reason, and needs_help with the question', async () => {
    h = await makeLoopHarness([
      { content: 'cannot go on <ralph>BLOCKED:need database credentials</ralph>' },
      { toolCalls: [{ name: 'ask_for_help', arguments: { question: 'Which port?' } }] },
    ]);
    const first = await h.addTask({ priority: 1 });
    const second = await h.addTask({ title: 'Second', priority: 2 });
    const summary = await h.runner().run();
    assert.deepEqual(
      summary.results.map((r) => r.status),
      ['blocked', 'needs_help'],
    );
    assert.equal((await h.store.get(first)).blockedReason, 'need database credentials');
    assert.equal((await h.store.get(second)).blockedReason, 'Which port?');
    assert.equal((await h.store.get(second)).status, 'needs_help');
  });

  it('feeds an unknown tool, malformed arguments and an escaping path back as errors and goes on', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'delete_everything', arguments: {} }] },
      { toolCalls: [{ name: 'write_file', arguments: '{"path": "x.txt", ' }] },
      { toolCalls: [{ name: 'write_file', arguments: { path: '../outside.txt', content: 'x' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { startLine: 'one' } }] },
      complete,
    ]);
    const id = await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    const toolMessages = chatRequests(h.server)
      .slice(1)
      .map((r) => {
        const messages = r.body?.messages ?? [];
        return String(messages[messages.length - 1].content);
      });
    assert.match(toolMessages[0], /unknown tool/i);
    assert.match(toolMessages[1], /JSON/);
    assert.match(toolMessages[2], /refused|outside/i);
    assert.match(toolMessages[3], /path/);
    assert.equal(await fs.stat(h.ws.path('..', 'outside.txt')).catch(() => undefined), undefined);
    const results = eventsOf(h.events, 'tool.result');
    assert.equal(results.filter((r) => !r.ok).length, 4);
    assert.equal((await h.store.get(id)).status, 'done');
  });

  it('retries a 429 from the endpoint and reports the retry', async () => {
    h = await makeLoopHarness([{ fault: 'status', status: 429, retryAfter: 0 }, complete]);
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    const retries = eventsOf(h.events, 'model.retry');
    assert.equal(retries.length, 1);
    assert.match(retries[0].reason, /429/);
  });

  it('fails a task after errorThreshold iterations that errored, with the cause', async () => {
    h = await makeLoopHarness([
      { fault: 'status', status: 422, body: { error: { message: 'unsupported parameter' } } },
      { fault: 'status', status: 422 },
      { fault: 'status', status: 422 },
    ]);
    await h.configure({ safeguards: { errorThreshold: 3 } });
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'failed');
    assert.match(summary.results[0].reason, /3 consecutive iterations failed.*422/s);
    assert.equal(chatRequests(h.server).length, 3, 'a rejected request (422) is not retried within an iteration');
  });

  it('resumes an interrupted task at its checkpointed iteration instead of restarting the counter', async () => {
    h = await makeLoopHarness([complete]);
    const id = await h.addTask();
    // the state a SIGKILL in the middle of iteration 3 leaves behind
    await h.store.update(id, { status: 'in_progress', iterations: 3 });
    const checkpoints = new CheckpointStore(h.paths);
    await checkpoints.save({
      version: 1,
      taskId: id,
      runId: 'killed-run',
      iteration: 3,
      phase: 'running',
      elapsedMs: 1000,
      commits: 2,
      consecutiveErrors: 0,
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
      modelUsage: { 'model-a': { calls: 2, promptTokens: 10, completionTokens: 5 } },
      optionalGateIterations: {},
      history: [],
      updatedAt: new Date().toISOString(),
    });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');
    const started = eventsOf(h.events, 'task.started')[0];
    assert.equal(started.resumed, true);
    assert.deepEqual(
      eventsOf(h.events, 'iteration.started').map((e) => e.iteration),
      [3],
    );
    const saved = await checkpoints.load(id);
    assert.equal(saved?.iteration, 3);
    assert.equal(saved?.phase, 'between');
    assert.ok((saved?.usage.totalTokens ?? 0) > 15, 'usage accumulates across the resume');
  });

  it('stops cleanly mid-iteration: the task is halted and its checkpoint saved', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    h = await makeLoopHarness([
      writeHello('partial'),
      async () => {
        runner.stop();
        await held;
        return progress(50) as never;
      },
    ]);
    const id = await h.addTask();
    const runner = h.runner();
    const running = runner.run();
    setTimeout(release, 50);
    const summary = await running;
    assert.equal(summary.results[0].status, 'halted');
    const task = await h.store.get(id);
    assert.equal(task.status, 'halted');
    const checkpoint = await new CheckpointStore(h.paths).load(id);
    assert.equal(checkpoint?.iteration, 1);
    assert.equal(checkpoint?.history.at(-1)?.outcome, 'stopped');
    assert.equal(await h.ws.read('hello.txt'), 'partial', 'work done before the stop is kept (and committed)');
    assert.match(h.ws.git('log', '-1', '--format=%s'), /iteration 1/);
  });

  it('refuses a second run while the run lock is held, with a clear message', async () => {
    h = await makeLoopHarness([complete]);
    await h.addTask();
    const lock = await RunLock.acquire(h.paths, 'other-run');
    // pretend the lock belongs to another live node process (not our parent: `npx mocha` runs under `sh -c`)
    const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      await fs.writeFile(h.paths.lock, JSON.stringify({ ...lock.info, pid: other.pid }));
      await assert.rejects(
        h.runner().run(),
        (error: unknown) => error instanceof LockError && /another Ralph run holds .*stop that run first/.test(error.message),
      );
    } finally {
      other.kill();
    }
    assert.equal(chatRequests(h.server).length, 0);
    await fs.rm(h.paths.lock);
  });

  it('writes every event of the run to .ralph/runs/<runId>.ndjson', async () => {
    h = await makeLoopHarness([complete]);
    await h.addTask();
    const summary = await h.runner().run();
    const lines = (await fs.readFile(summary.logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines[0].type, 'run.started');
    assert.equal(lines.at(-1).type, 'run.finished');
    assert.ok(lines.every((l) => l.runId === summary.runId));
    assert.ok(lines.some((l) => l.type === 'task.finished' && l.status === 'done'));
    const tasksFile = (await readJson(h.paths.tasks)) as { version: number };
    assert.equal(tasksFile.version, 1);
  });

  it('ends in timeout when the task timeout passes during an iteration', async () => {
    h = await makeLoopHarness([{ fault: 'hang' }]);
    await h.configure({ loop: { taskTimeoutMinutes: 0.005 } }); // 300 ms
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    assert.match(summary.results[0].reason, /task timeout/);
  });
});
