import assert from 'node:assert/strict';
import { Compactor, estimateTokens, PINNED_HEADER, splitForCompaction, SUMMARY_HEADER } from '../../../src/core/agent/compaction';
import { createDelegationTools } from '../../../src/core/agent/delegation/delegateTools';
import { ToolRegistry } from '../../../src/core/agent/toolRegistry';
import { parseConfig } from '../../../src/core/config/load';
import { createModelClient } from '../../../src/core/llm/factory';
import type { ChatMessage } from '../../../src/core/llm/types';
import { startScriptedServer, type ScriptedServer, type Step } from '../../fixtures/scriptedServer';
import { CheckpointStore } from '../../../src/core/record/checkpoint';
import { chatRequests, eventsOf, type LoopHarness, makeLoopHarness } from '../helpers/loopHarness';
import { type DelegationEnv, makeDelegationEnv, ofType, TASK_PROMPT } from './delegation/delegationEnv';

const PROMPT = 'Create hello.txt containing "hi".\nKeep the   spacing — and the unicode: ✓ exactly.';
const call = (id: string, name = 'read_file'): ChatMessage => ({
  role: 'assistant',
  content: null,
  toolCalls: [{ id, name, arguments: '{"path":"README.md"}' }],
});
const result = (id: string, content = 'x'.repeat(400)): ChatMessage => ({ role: 'tool', toolCallId: id, content });

describe('compaction with spec pinning', function () {
  describe('token tracking and the cut', () => {
    it('estimates ~4 characters a token, counting tool calls', () => {
      assert.equal(estimateTokens([{ role: 'user', content: 'x'.repeat(40) }]), 10);
      assert.equal(estimateTokens([{ role: 'assistant', content: null, toolCalls: [{ id: '1', name: 'abcd', arguments: 'efgh' }] }]), 2);
    });

    it("uses the last response's usage and estimates only the messages appended since", () => {
      const model = createModelClient(parseConfig({ llm: { baseUrl: 'http://127.0.0.1:9/v1' } }).llm, 'k');
      const compactor = new Compactor({
        contextWindow: 1000,
        compactAt: 0.5,
        model,
        modelName: 'm',
        pinned: 'p',
        signal: new AbortController().signal,
      });
      const messages: ChatMessage[] = [
        { role: 'system', content: 's'.repeat(400) },
        { role: 'user', content: 'u'.repeat(400) },
      ];
      assert.equal(compactor.estimate(messages, []), 200, 'nothing reported yet: all estimated');
      messages.push(call('a'));
      compactor.noteResponse({ promptTokens: 450, completionTokens: 20, totalTokens: 470 }, messages.length);
      messages.push(result('a', 'r'.repeat(80)));
      assert.equal(compactor.estimate(messages, []), 470 + 20);
      compactor.noteResponse({ promptTokens: 0, completionTokens: 0, totalTokens: 0 }, messages.length);
      assert.equal(compactor.estimate(messages, []), estimateTokens(messages), 'no usage from the server: estimated again');
      assert.equal(compactor.threshold, 500);
    });

    it('never separates an assistant tool call from its results, and keeps at least the last turn', () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'task' },
        {
          role: 'assistant',
          content: 'two calls',
          toolCalls: [
            { id: 'a', name: 'read_file', arguments: '{}' },
            { id: 'b', name: 'search', arguments: '{}' },
          ],
        },
        result('a'),
        result('b'),
        call('c'),
        result('c'),
        call('d'),
        result('d'),
      ];
      for (const keep of [0, 150, 250, 10_000]) {
        const split = splitForCompaction(messages, keep);
        assert.ok(split);
        assert.ok(split.older.length > 0, 'something is always folded in');
        assert.deepEqual(split.head, [messages[0]]);
        assert.notEqual(split.recent[0].role, 'tool', `keep ${keep}: the kept part starts with a whole turn`);
        const ids = new Set(split.recent.flatMap((m) => (m.role === 'assistant' ? (m.toolCalls ?? []).map((c) => c.id) : [])));
        for (const m of split.recent) if (m.role === 'tool') assert.ok(ids.has(m.toolCallId));
        assert.deepEqual([...split.head, ...split.older, ...split.recent], messages);
      }
      assert.deepEqual(splitForCompaction(messages, 0)?.recent, messages.slice(7));
      assert.deepEqual(splitForCompaction(messages, 10_000)?.older, [messages[1]], 'everything would fit: still the oldest turn goes');
    });

    it('drops an earlier pin (it is re-inserted) and has nothing to do when only a summary is older', () => {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: `${SUMMARY_HEADER}\nearlier` },
        { role: 'user', content: `${PINNED_HEADER}\n${PROMPT}` },
        call('z'),
        result('z'),
      ];
      assert.equal(splitForCompaction(messages, 0), undefined);
      const more = [...messages, call('y'), result('y')];
      const split = splitForCompaction(more, 0);
      assert.deepEqual(
        split?.older.map((m) => m.role),
        ['user', 'assistant', 'tool'],
        'the summary rolls in; the old pin does not',
      );
    });
  });

  describe('against the scripted server', () => {
    let server: ScriptedServer | undefined;
    afterEach(async () => server?.close());

    it('compacts in place, pins the request verbatim right after the summary, and stops trying after a failed summary', async () => {
      server = await startScriptedServer({
        steps: [
          { content: 'SUMMARY ONE', usage: { prompt_tokens: 50, completion_tokens: 5 } },
          { fault: 'status', status: 400 },
        ],
      });
      const llm = parseConfig({ llm: { baseUrl: server.url, maxRetries: 0 } }).llm;
      const compactor = new Compactor({
        contextWindow: 400,
        compactAt: 0.5,
        model: createModelClient(llm, 'k'),
        modelName: 'model-a',
        pinned: PROMPT,
        signal: new AbortController().signal,
      });
      const messages: ChatMessage[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'the whole context' },
        call('a'),
        result('a', 'x'.repeat(1000)),
        call('b'),
        result('b', 'short'),
      ];
      const outcome = await compactor.beforeRequest(messages, []);
      assert.ok(outcome);
      assert.ok(outcome.tokensBefore > 200 && outcome.tokensAfter < outcome.tokensBefore);
      assert.deepEqual(outcome.usage, { promptTokens: 50, completionTokens: 5, totalTokens: 55 });
      assert.equal(outcome.model, 'model-a');
      assert.deepEqual(messages, [
        { role: 'system', content: 'sys' },
        { role: 'user', content: `${SUMMARY_HEADER}\nSUMMARY ONE` },
        { role: 'user', content: `${PINNED_HEADER}\n${PROMPT}` },
        call('b'),
        result('b', 'short'),
      ]);
      const summaryRequest = server.requests[0].body;
      assert.equal(summaryRequest?.tools, undefined, 'the summary call offers no tools');
      assert.match(String(summaryRequest?.messages?.[1].content), /the whole context[\s\S]*→ read_file\(\{"path":"README.md"\}\)/);

      messages.push(call('c'), result('c', 'y'.repeat(2000)));
      await assert.rejects(compactor.beforeRequest(messages, []), /compaction failed/);
      assert.equal(await compactor.beforeRequest(messages, []), undefined, 'no retry after a failure');
      assert.equal(server.requests.length, 2);
    });
  });

  describe('in the loop', () => {
    let h: LoopHarness;
    let env: DelegationEnv;
    afterEach(async () => {
      await h?.cleanup();
      await env?.cleanup();
    });

    it("the orchestrator's next request after a compaction carries the pinned original verbatim right after the summary", async () => {
      const bigUsage = { prompt_tokens: 9990, completion_tokens: 100 };
      const steps: Step[] = [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }], usage: bigUsage },
        { content: 'SUMMARY: README.md read; it is a sample.', usage: { prompt_tokens: 300, completion_tokens: 20 } },
        {
          toolCalls: [{ name: 'ralph_complete', arguments: { summary: 's', promiseEvidence: 'e' } }],
          usage: { prompt_tokens: 900, completion_tokens: 10 },
        },
      ];
      h = await makeLoopHarness(steps);
      await h.configure({ llm: { contextWindow: 20_000, compactAt: 0.5 } });
      await h.addTask({ prompt: PROMPT });
      const summary = await h.runner().run();
      assert.equal(summary.results[0].status, 'done');

      const [first, summarize, after] = chatRequests(h.server);
      assert.match(String(summarize.body?.messages?.[0].content), /^You compress the earlier part/);
      assert.match(String(summarize.body?.messages?.[1].content), /Original request \(exact\)/, 'the old context is what gets summarized');
      const messages = after.body?.messages ?? [];
      assert.deepEqual(
        messages.map((m) => m.role),
        ['system', 'user', 'user', 'assistant', 'tool'],
      );
      assert.equal(messages[0].content, first.body?.messages?.[0].content, 'the system message stays');
      assert.equal(messages[1].content, `${SUMMARY_HEADER}\nSUMMARY: README.md read; it is a sample.`);
      assert.equal(messages[2].content, `[ORIGINAL REQUEST — pinned]\n${PROMPT}`);
      assert.equal(messages[3].tool_calls?.[0].function.name, 'read_file');
      assert.equal(messages[4].tool_call_id, messages[3].tool_calls?.[0].id);

      const [compaction] = eventsOf(h.events, 'compaction');
      assert.equal(compaction.scope, 'orchestrator');
      assert.ok(compaction.tokensBefore > 10_000);
      assert.ok(compaction.tokensAfter < compaction.tokensBefore);
      const usage = eventsOf(h.events, 'iteration.finished')[0].usage;
      assert.equal(usage.totalTokens, 10_090 + 320 + 910, 'the summary call counts into the iteration');
      const responses = eventsOf(h.events, 'model.response');
      assert.equal(responses.length, 3, 'the summary call is reported like any model call');
      assert.equal(
        responses.reduce((n, e) => n + e.usage.totalTokens, 0),
        usage.totalTokens,
      );
      // on the receipt the summary is the compaction's, not the orchestrator's
      const receipt = (await new CheckpointStore(h.paths).load(summary.results[0].taskId))?.receipt;
      assert.deepEqual(
        [receipt?.byRole.compaction.calls, receipt?.byRole.compaction.promptTokens, receipt?.byRole.compaction.completionTokens],
        [1, 300, 20],
      );
      assert.deepEqual([receipt?.byRole.orchestrator.calls, receipt?.byRole.orchestrator.promptTokens], [2, 9990 + 900]);
    });

    it("a sub-agent's conversation compacts too, pinning its delegation brief (which carries the task prompt)", async () => {
      env = await makeDelegationEnv(
        [
          { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }], usage: { prompt_tokens: 9990, completion_tokens: 100 } },
          { content: 'SUB SUMMARY' },
          { content: 'Read it; nothing to change.' },
        ],
        { config: { llm: { contextWindow: 20_000, compactAt: 0.5 } } },
      );
      const outcome = await new ToolRegistry(createDelegationTools(env.delegator)).execute(
        { id: 'c', name: 'delegate', arguments: JSON.stringify({ target: 'devo', objective: 'Check the README' }) },
        env.ctx,
      );
      const messages = env.server.requests[2].body?.messages ?? [];
      assert.equal(messages[1].content, `${SUMMARY_HEADER}\nSUB SUMMARY`);
      assert.equal(
        messages[2].content,
        `${PINNED_HEADER}\n# Objective\nCheck the README\n\n# The task this serves (its original request, verbatim)\n${TASK_PROMPT}`,
      );
      assert.deepEqual(
        ofType(env.events, 'compaction').map((e) => e.scope),
        ['devo'],
      );
      assert.match(outcome.content, /Status: SUCCESS\nEvidence:\n {2}- \[OK\] read_file: /, 'evidence from before the compaction is kept');
    });
  });
});
