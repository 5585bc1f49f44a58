import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import type { Step } from '../../fixtures/scriptedServer';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness, requestText } from '../helpers/loopHarness';

const complete: Step = {
  toolCalls: [{ name: 'ralph_complete', arguments: { summary: 'done', promiseEvidence: 'hello.txt contains hi' } }],
};
const chunk = (delta: object, finish: string | null = null) => ({
  id: 'x',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const toolMessages = (request: { body?: { messages?: { role: string; content?: unknown }[] } }) =>
  (request.body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

describe('hostile model output (against the scripted server)', function () {
  let h: LoopHarness;
  afterEach(async () => h?.cleanup());

  it('answers a non-string tool name and an absurd index with a failed call, and treats garbage usage as unknown', async () => {
    h = await makeLoopHarness([
      {
        fault: 'raw-chunks',
        chunks: [
          chunk({ role: 'assistant', content: '' }),
          chunk({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: { evil: true }, arguments: '{}' } }] }),
          chunk({
            tool_calls: [
              { index: 4294967294, id: 'c2', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } },
            ],
          }),
          chunk({ content: 42 }, 'tool_calls'),
          {
            id: 'x',
            object: 'chat.completion.chunk',
            created: 1,
            model: 'm',
            choices: [],
            usage: { prompt_tokens: '12', completion_tokens: 1e300, total_tokens: { a: 1 } },
          },
        ],
      },
      complete,
    ]);
    const id = await h.addTask();
    const summary = await h.runner().run();

    assert.equal(summary.results[0].status, 'done');
    const results = toolMessages(chatRequests(h.server)[1]);
    assert.equal(results.length, 2, 'both calls are answered, neither crashed the loop');
    assert.match(results[0], /malformed.*tool name is an object/);
    assert.match(results[1], /malformed.*index 4294967294/);
    const checkpoint = await new CheckpointStore(h.paths).load(id);
    assert.ok(checkpoint, 'the checkpoint is still valid');
    assert.ok(Number.isFinite(checkpoint.usage.totalTokens) && checkpoint.usage.totalTokens < 1e9);
    const warnings = eventsOf(h.events, 'warning')
      .filter((w) => w.code === 'model-wire')
      .map((w) => w.message);
    assert.ok(
      warnings.some((m) => /usage/.test(m)),
      `a usage warning is emitted: ${warnings.join(' | ')}`,
    );
  });

  it('finishes a run whose model sends a catastrophic regex: the task timeout still fires', async () => {
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: `${'a'.repeat(41)}!\n` } }] },
      { toolCalls: [{ name: 'search', arguments: { query: '^(a+)+$', regex: true } }] },
      complete,
    ]);
    await h.configure({ loop: { taskTimeoutMinutes: 0.02 } }); // 1.2 s, well under the regex deadline
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'timeout');
    assert.match(summary.results[0].reason, /task timeout/);
  });

  it('stops on request while a catastrophic regex runs', async () => {
    let runner!: ReturnType<LoopHarness['runner']>; // eslint-disable-line prefer-const -- assigned inside the harness's callback
    h = await makeLoopHarness([
      { toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: `${'a'.repeat(41)}!\n` } }] },
      () => {
        // Fires while the search runs: a blocked event loop would never get here.
        setTimeout(() => runner.stop(), 300);
        return { toolCalls: [{ name: 'search', arguments: { query: '^(a+)+$', regex: true } }] };
      },
      complete,
    ]);
    const id = await h.addTask();
    runner = h.runner();
    const summary = await runner.run();
    assert.equal(summary.results[0].status, 'halted');
    assert.equal((await h.store.get(id)).status, 'halted');
  });

  it('answers a forty-star glob, a 600,000-character path and huge arguments with bounded work', async () => {
    h = await makeLoopHarness([
      {
        toolCalls: [
          { name: 'list_files', arguments: { pattern: `${'*'.repeat(40)}x` } },
          { name: 'list_files', arguments: { pattern: 'a*'.repeat(400) } },
          { name: 'read_file', arguments: { path: 'a/'.repeat(300_000) } },
          { name: 'search', arguments: { query: 'q'.repeat(5000) } },
          { name: 'write_file', arguments: JSON.stringify({ path: 'big.txt', content: 'z'.repeat(5 * 1024 * 1024) }) },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 100 }, // the server's estimate would trigger compaction
      },
      complete,
    ]);
    await h.addTask();
    const summary = await h.runner().run();
    assert.equal(summary.results[0].status, 'done', summary.results[0].reason);
    const results = toolMessages(chatRequests(h.server)[1]);
    assert.equal(results.length, 5);
    assert.match(results[0], /no files/);
    assert.match(results[1], /invalid arguments|no files/);
    assert.match(results[2], /invalid arguments for read_file/);
    assert.match(results[3], /invalid arguments for search/);
    assert.match(results[4], /arguments too|longer than/);
    await assert.rejects(fs.stat(path.join(h.ws.dir, 'big.txt')), 'an oversized write is not performed');
  });

  it('caps a gate that prints megabytes on one line, and keeps a bounded log of it on disk', async () => {
    const size = 3_000_000;
    h = await makeLoopHarness([complete, complete]);
    await h.configure({
      loop: { maxIterations: 2 },
      gates: [{ name: 'noisy', kind: 'custom', command: `node -e "process.stdout.write('x'.repeat(${size})); process.exitCode = 1"` }],
    });
    const id = await h.addTask();
    await h.runner().run();

    const requests = chatRequests(h.server);
    assert.equal(requests.length, 2);
    const prompt = requestText(requests[1]);
    assert.ok(prompt.length < 40_000, `the next prompt stays small (${prompt.length} characters)`);
    assert.match(prompt, /x{400}… \[line cut\]/);
    assert.doesNotMatch(prompt, /x{401}/);
    const log = path.join(h.paths.reportsDir(id), 'gates', 'iteration-1-noisy.log');
    const kept = await fs.readFile(log, 'utf8');
    assert.ok(kept.length < 1024 * 1024 + 300, `the log is bounded (reports.logMaxKb): ${kept.length}`);
    assert.match(
      kept,
      new RegExp(`^x{262144}\\n… \\[${size - 1024 * 1024} bytes of output left out here.*\\] …\\nx{786432}$`),
      'its head and tail are kept, the gap said',
    );
    assert.match(prompt, /iteration-1-noisy\.log/, 'the feedback names the log');
  });
});
