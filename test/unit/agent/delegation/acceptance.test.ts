import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import { formatEvent } from '../../../../src/core/eventFormat';
import type { Step } from '../../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, readJson } from '../../helpers/loopHarness';

const FAILING_TESTS = `node -e "console.log('2 tests failing'); process.exit(1)"`;
const complete: Step = { toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'checked', promiseEvidence: 'see the envelope' } }] };

function lastToolMessage(request: { body?: { messages?: { role: string; content?: unknown }[] } }): string {
  const tool = [...(request.body?.messages ?? [])].reverse().find((m) => m.role === 'tool');
  return String(tool?.content ?? '');
}

describe('verified delegation in the loop (RalphRunner against the scripted server)', function () {
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('the orchestrator delegates to devo; devo reads a file and runs a failing command; the next request carries the envelope', async () => {
    h = await makeLoopHarness([
      {
        toolCalls: [
          {
            name: 'delegate',
            arguments: {
              target: 'devo',
              objective: 'Make the tests pass',
              expectedOutcome: 'npm test passes',
              expectedEvidence: ['run_command', 'git_commit'],
            },
          },
        ],
      },
      {
        toolCalls: [
          { name: 'read_file', arguments: { path: 'README.md' } },
          { name: 'run_command', arguments: { command: FAILING_TESTS } },
        ],
      },
      { content: 'Fixed it, all tests pass now.' },
      complete,
    ]);
    await h.addTask({ prompt: 'Make the test suite green.' });
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done');

    const requests = chatRequests(h.server);
    assert.equal(requests.length, 4);
    assert.ok(
      (requests[0].body?.tools ?? []).some((t) => t.function.name === 'delegate_parallel'),
      'the orchestrator is offered delegate_parallel',
    );
    assert.match(String(requests[1].body?.messages?.[0].content), /You are DEVO/);
    const envelope = lastToolMessage(requests[3]);
    assert.ok(
      envelope.startsWith(
        '[DELEGATION RESULT — DEVO]\nObjective: Make the tests pass\nExpected Outcome: npm test passes\n\nStatus: PARTIAL\n',
      ),
      envelope,
    );
    assert.match(envelope, /^ {2}- \[OK\] read_file: read README\.md/m);
    assert.match(envelope, /^ {2}- \[ERROR\] run_command: node -e .* \(exit code 1\)$/m);
    assert.match(envelope, /^ {2}- \[MISSING\] run_command: no command succeeded$/m);
    assert.match(envelope, /^ {2}- \[MISSING\] git_commit: no commit created$/m);
    assert.match(envelope, /Agent Response:\nFixed it, all tests pass now\.$/);

    // visible: events, the log channel's lines, the run log
    const started = eventsOf(h.events, 'delegation.started');
    const result = eventsOf(h.events, 'delegation.result');
    assert.equal(started.length, 1);
    assert.equal(result[0].envelope, envelope);
    assert.equal(result[0].status, 'partial');
    assert.equal(formatEvent(started[0]), '    ⇢ delegate to devo (model-a): Make the tests pass');
    assert.match(formatEvent(result[0]) ?? '', /^ {4}⇠ devo: PARTIAL — 1 OK, 1 ERROR, 2 MISSING \(\d+\.\ds, \d+ tokens\)$/);
    const devoCall = eventsOf(h.events, 'tool.call').find((e) => e.agent === 'devo');
    assert.match(formatEvent(devoCall!) ?? '', /^ {4}\[devo\] → read_file /);
    const logged = (await fs.readFile(summary.logFile, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string });
    assert.ok(logged.some((e) => e.type === 'delegation.result'));

    // the sub-agent's tokens count into the iteration's usage
    const iteration = eventsOf(h.events, 'iteration.finished')[0];
    const allResponses = eventsOf(h.events, 'model.response');
    assert.equal(allResponses.length, 4);
    assert.equal(
      iteration.usage.totalTokens,
      allResponses.reduce((n, e) => n + e.usage.totalTokens, 0),
    );
    const checkpoint = (await readJson(h.paths.state(summary.results[0].taskId))) as { usage: { totalTokens: number } };
    assert.equal(checkpoint.usage.totalTokens, iteration.usage.totalTokens);
  });

  it('a caio action without approval never runs its command (the runner refuses by default)', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'delegate', arguments: { target: 'caio', objective: 'Announce the release' } }] },
      { toolCalls: [{ name: 'notify', arguments: { message: 'v1 is out' } }] },
      { content: 'The notification awaits approval.' },
      complete,
    ]);
    await h.configure({ agents: { caio: { commands: { notify: 'touch notified.marker' } } } });
    await h.addTask();
    await h.runner().run();
    assert.equal(h.ws.exists('notified.marker'), false);
    const envelope = lastToolMessage(chatRequests(h.server)[3]);
    assert.match(envelope, /^\[DELEGATION RESULT — CAIO\]/);
    assert.match(envelope, /^ {2}- \[PENDING\] notify: awaiting approval: send the notification "v1 is out"$/m);
  });

  it('an approval port on the runner lets the approved action run', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'delegate', arguments: { target: 'caio', objective: 'Announce the release' } }] },
      { toolCalls: [{ name: 'notify', arguments: { message: 'v1 is out' } }] },
      { content: 'Sent.' },
      complete,
    ]);
    await h.configure({ agents: { caio: { commands: { notify: 'touch notified.marker' } } } });
    await h.addTask();
    const asked: string[] = [];
    await h.runner({ approval: { approve: async (request) => (asked.push(request.title), true) } }).run();
    assert.deepEqual(asked, ['Ralph (caio) wants to send the notification "v1 is out"']);
    assert.equal(h.ws.exists('notified.marker'), true);
    assert.match(lastToolMessage(chatRequests(h.server)[3]), /\[OK\] notify: send the notification "v1 is out": done/);
  });
});
