/**
 * The person's verbs of the CLI against the scripted model server on real git: `ralph task answer`
 * (with text, and asked on a terminal), `ralph task council`, `ralph review list|diff|approve|changes|reject`,
 * and what `ralph run` / `ralph status` say about what waits for the person. `ralph run` and the answer asked
 * on a terminal are child processes; the other verbs run through the same bundle's `main` in this process
 * (`runCliInProcess`: their output and exit code, without a Node start and a bundle load each).
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { parseCli } from '../../../src/cli/args';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { RalphPaths } from '../../../src/core/paths';
import { startScriptedServer, type RecordedRequest, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { runCli, runCliInProcess, runOnTerminal } from '../helpers/cliHarness';
import { chatRequests, requestText, TEST_KEY_ENV } from '../helpers/loopHarness';
import { makeTempWorkspace, type TempWorkspace } from '../helpers/tempWorkspace';

const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'written' } }] };

/** `WRITE <file> <<content>>` in the prompt; a pinned review feedback `USE <text>` replaces the content. */
const writer: Step = (request: RecordedRequest) => {
  const messages = request.body?.messages ?? [];
  const text = requestText({ body: { messages: messages.filter((m) => m.role === 'user') } });
  const match = /WRITE (\S+) <<(.*?)>>/s.exec(text);
  if (!match) throw new Error(`no instruction in: ${text.slice(0, 200)}`);
  if (messages.at(-1)?.role === 'tool') return complete as Exclude<Step, (r: RecordedRequest) => unknown>;
  const content = /USE (\S+)/.exec(text)?.[1] ?? match[2];
  return { toolCalls: [{ name: 'write_file', arguments: { path: match[1], content } }] };
};

describe("the person's verbs of the CLI (task answer, task council, review …)", function () {
  this.timeout(180_000);
  let ws: TempWorkspace;
  let server: ScriptedServer;
  afterEach(async () => {
    await server?.close();
    await ws?.cleanup();
  });

  async function setUp(steps: Step[], extra: Record<string, unknown> = {}): Promise<void> {
    ws = await makeTempWorkspace({ commit: true, files: { 'README.md': '# sample\n' } });
    server = await startScriptedServer({ steps });
    assert.equal((await runCliInProcess(['init'], ws.dir)).code, 0);
    const config = {
      llm: { baseUrl: server.url, apiKeyEnv: TEST_KEY_ENV, models: ['model-a'], maxRetries: 0 },
      loop: { maxParallel: 1, maxIterations: 4 },
      ...extra,
    };
    await fs.writeFile(ws.path('.ralph/config.json'), JSON.stringify(config));
    ws.git('add', '-A');
    ws.git('commit', '-q', '-m', 'ralph init');
  }

  it('parses the verbs and refuses malformed ones (exit 2 with usage)', async () => {
    assert.deepEqual(parseCli(['task', 'answer', 'T-1', 'use tabs'], '/w'), {
      kind: 'task.answer',
      workspace: '/w',
      taskId: 'T-1',
      text: 'use tabs',
    });
    assert.deepEqual(parseCli(['task', 'answer', 'T-1', '--approve'], '/w'), {
      kind: 'task.answer',
      workspace: '/w',
      taskId: 'T-1',
      approved: true,
    });
    assert.deepEqual(parseCli(['review', 'changes', 'T-1', 'more tests'], '/w'), {
      kind: 'review.changes',
      workspace: '/w',
      taskId: 'T-1',
      text: 'more tests',
    });
    assert.deepEqual(parseCli(['review', 'list', '--json'], '/w'), { kind: 'review.list', workspace: '/w', json: true });
    assert.throws(() => parseCli(['task', 'answer', 'T-1', 'two', 'words'], '/w'), /quote it/);
    assert.throws(() => parseCli(['task', 'answer', 'T-1', '--approve', '--refuse'], '/w'), /not both/);
    assert.throws(() => parseCli(['review', 'changes', 'T-1'], '/w'), /needs the feedback/);
    assert.throws(() => parseCli(['review', 'frobnicate', 'T-1'], '/w'), /unknown review command/);
    assert.throws(() => parseCli(['review', 'approve'], '/w'), /needs a task id/);
    const usage = await runCliInProcess(['review', 'approve'], '/');
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /review approve <id>/);
  });

  it('a question: ralph run ends needs you (exit 3, how to answer named); task answer resumes it with the answer pinned', async () => {
    await setUp([
      { content: '<ralph>NEEDS_HELP:Which port should the server use?</ralph>' },
      (request: RecordedRequest) =>
        /A \(.*\): 8080 please/.test(requestText(request))
          ? { toolCalls: [{ name: 'write_file', arguments: { path: 'port.txt', content: '8080' } }] }
          : { content: '<ralph>BLOCKED:no answer in my context</ralph>' },
      complete,
    ]);
    assert.equal(
      (await runCliInProcess(['task', 'add', 'Pick a port', '--prompt', 'Write port.txt', '--promise', 'port.txt'], ws.dir)).code,
      0,
    );
    const run = await runCli(['run'], ws.dir);
    assert.equal(run.code, 3, run.stderr);
    assert.match(
      run.stdout,
      /run summary: 0 done · 1 needs you \(1 question\)\n  T-001 asks: Which port should the server use\?\n    → ralph task answer T-001 "<text>"/,
    );
    const status = await runCliInProcess(['status'], ws.dir);
    assert.match(status.stdout, /needs you: 1 question\n  T-001 asks: Which port should the server use\?/);
    const json = JSON.parse((await runCliInProcess(['status', '--json'], ws.dir)).stdout);
    assert.equal(json.questions[0].question.question, 'Which port should the server use?');

    const noText = await runCliInProcess(['task', 'answer', 'T-001'], ws.dir);
    assert.equal(noText.code, 2, 'no text and no terminal');
    assert.match(noText.stderr, /stdin is not a terminal: ralph task answer T-001 "<text>"/);
    const answered = await runCliInProcess(['task', 'answer', 'T-001', '8080 please'], ws.dir);
    assert.equal(answered.code, 0, answered.stderr);
    assert.match(answered.stdout, /T-001 is answered; it resumes from its checkpoint/);
    const again = await runCliInProcess(['task', 'answer', 'T-001', 'twice'], ws.dir);
    assert.equal(again.code, 2, 'a halted task has no question to answer');

    const resumed = await runCli(['run'], ws.dir);
    assert.equal(resumed.code, 0, resumed.stdout + resumed.stderr);
    assert.match(resumed.stdout, /resuming at iteration 2/);
    assert.equal(await ws.read('port.txt'), '8080');
  });

  it('task answer without text asks on a terminal', async () => {
    await setUp([{ content: '<ralph>NEEDS_HELP:Tabs or spaces?</ralph>' }]);
    assert.equal((await runCliInProcess(['task', 'add', 'Indent', '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
    assert.equal((await runCli(['run'], ws.dir)).code, 3);
    const asked = await runOnTerminal(['task', 'answer', 'T-001'], ws.dir, 'spaces, two of them');
    assert.equal(asked.code, 0, asked.stdout);
    assert.match(asked.stdout, /T-001 asks: Tabs or spaces\?[\s\S]*Your answer:/);
    const task = JSON.parse(await ws.read('.ralph/tasks.json')).tasks[0];
    assert.equal(task.questions[0].answer, 'spaces, two of them');
    assert.equal(task.status, 'halted');
  });

  it('review: run holds it (exit 3), list and diff show it, changes sends it back, approve lands it; reject needs confirmation', async () => {
    await setUp(
      Array.from({ length: 12 }, () => writer),
      { loop: { maxParallel: 2, maxIterations: 4 }, merge: { review: 'manual' } },
    );
    assert.equal(
      (await runCliInProcess(['task', 'add', 'Write a', '--prompt', 'WRITE a.txt <<alpha>>', '--promise', 'a.txt'], ws.dir)).code,
      0,
    );
    assert.equal(
      (await runCliInProcess(['task', 'add', 'Write b', '--prompt', 'WRITE b.txt <<beta>>', '--promise', 'b.txt'], ws.dir)).code,
      0,
    );
    const main = ws.git('rev-parse', 'main');
    const run = await runCli(['run'], ws.dir);
    assert.equal(run.code, 3, run.stdout + run.stderr);
    assert.match(run.stdout, /run summary: 0 done · 2 need you \(2 to review\)/);
    assert.match(
      run.stdout,
      /T-001 waits for review: the merged check passed on main; it waits for your review[\s\S]*→ ralph review diff T-001 · ralph review approve T-001/,
    );
    assert.equal(ws.git('rev-parse', 'main'), main, 'nothing landed before the review');

    const list = await runCliInProcess(['review', 'list'], ws.dir);
    assert.match(list.stdout, /^T-001  Write a  → main\n/m);
    const listed = JSON.parse((await runCliInProcess(['review', 'list', '--json'], ws.dir)).stdout);
    assert.deepEqual(
      listed.map((i: { id: string; base: string }) => [i.id, i.base]),
      [
        ['T-001', main],
        ['T-002', main],
      ],
    );
    const diff = await runCliInProcess(['review', 'diff', 'T-001'], ws.dir);
    assert.equal(diff.code, 0, diff.stderr);
    assert.match(diff.stderr, /T-001: what would land on main \(2 files\)/);
    assert.match(diff.stdout, /\+\+\+ b\/a\.txt\n@@ -0,0 \+1 @@\n\+alpha/);
    assert.match((await runCliInProcess(['review', 'diff', 'T-001', '--stat'], ws.dir)).stdout, /added {4}a\.txt/);

    const changes = await runCliInProcess(['review', 'changes', 'T-001', 'USE ALPHA'], ws.dir);
    assert.equal(changes.code, 0, changes.stderr);
    assert.match(changes.stdout, /goes back to its agent with your feedback pinned/);
    const again = await runCli(['run'], ws.dir);
    assert.equal(again.code, 3, again.stdout);
    const lastRequest = requestText(
      chatRequests(server)
        .filter((r) => /WRITE a\.txt/.test(requestText(r)))
        .at(-2)!,
    );
    assert.match(lastRequest, /changes requested:\n\s+USE ALPHA/);

    const approved = await runCliInProcess(['review', 'approve', 'T-001'], ws.dir);
    assert.equal(approved.code, 0, approved.stderr);
    assert.match(approved.stdout, /T-001 landed: merged into main as [0-9a-f]{10}/);
    assert.equal(ws.git('show', 'main:a.txt'), 'ALPHA');
    assert.equal(await ws.read('a.txt'), 'ALPHA', 'the checked-out main followed');

    const unconfirmed = await runCliInProcess(['review', 'reject', 'T-002'], ws.dir);
    assert.equal(unconfirmed.code, 4);
    assert.match(unconfirmed.stderr, /needs confirmation and stdin is not a terminal; nothing was changed/);
    const rejected = await runCliInProcess(['review', 'reject', 'T-002', '--yes'], ws.dir);
    assert.equal(rejected.code, 0, rejected.stderr);
    assert.equal(ws.git('branch', '--list', 'ralph/T-002'), '');
    const tasks = JSON.parse(await ws.read('.ralph/tasks.json')).tasks;
    assert.deepEqual(
      tasks.map((t: { id: string; status: string }) => [t.id, t.status]),
      [
        ['T-001', 'done'],
        ['T-002', 'cancelled'],
      ],
    );
    assert.equal((await runCliInProcess(['review', 'approve', 'T-002'], ws.dir)).code, 2, 'not waiting for review');
  });

  it("task council convenes the bug council on the task's history; its plan is the next iteration's feedback", async () => {
    await setUp([
      { content: 'Trying. <ralph>PROGRESS:10</ralph>' },
      { content: 'Still failing. <ralph>BLOCKED:the tests keep failing</ralph>' },
      { content: 'Root cause: the config is read before it is written.' },
      { content: '1. write the config first\n2. then read it' },
    ]);
    assert.equal((await runCliInProcess(['task', 'add', 'Fix it', '--prompt', 'p', '--promise', 'q'], ws.dir)).code, 0);
    assert.equal((await runCli(['run'], ws.dir)).code, 3);
    const council = await runCliInProcess(['task', 'council', 'T-001', '--note', 'look at the config loading'], ws.dir);
    assert.equal(council.code, 0, council.stderr);
    assert.match(council.stderr, /bug council convened \(model-a\): asked for by the person: look at the config loading/);
    assert.match(council.stdout, /bug council plan for T-001 \(handed to its next iteration\):\n1\. write the config first/);
    const cp = await new CheckpointStore(new RalphPaths(ws.dir)).load('T-001');
    assert.match(cp?.history.at(-1)?.feedback[0] ?? '', /^Bug council plan .*convened by the person/);
    assert.equal((await runCliInProcess(['task', 'council', 'T-404'], ws.dir)).code, 2);
  });
});
