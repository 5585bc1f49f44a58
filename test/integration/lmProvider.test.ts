/**
 * The loop on the editor's own models (`llm.provider` "vscode"): a test-only extension
 * (test/fixtures/lm-provider-extension, loaded next to Ralph Loop by the runner) registers the
 * vendor "ralph-test" through vscode.lm.registerLanguageModelChatProvider; each reply is
 * scripted through its exports. Nothing of Ralph Loop is mocked: the extension selects the
 * model with vscode.lm.selectChatModels and talks to it through the real LM API.
 */
import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RalphExtensionApi } from '../../src/extension';
import type { RalphEvent } from '../../src/core/events';
import { waitFor } from '../helpers/waitFor';

const EXTENSION_ID = 'ralph-loop.ralph-loop';
const FIXTURE_ID = 'ralph-test.ralph-lm-fixture';

interface ScriptStep {
  text?: string[];
  toolCalls?: { callId: string; name: string; input: object }[];
  error?: 'NoPermissions' | 'Blocked' | 'NotFound';
  message?: string;
  waitForCancel?: boolean;
  /** Throw a plain Error (not a LanguageModelError) with `message`. */
  plainError?: boolean;
}
interface RecordedPart {
  type: string;
  value?: string;
  callId?: string;
  name?: string;
  input?: unknown;
  content?: RecordedPart[];
}
interface FixtureApi {
  script(steps: ScriptStep[]): void;
  pending(): number;
  reset(): void;
  requests: { model: string; messages: { role: string; content: RecordedPart[] }[]; tools: { name: string }[] }[];
  counts: { tokenCounts: number; cancelled: number };
}

describe('editor models (llm.provider "vscode", vscode.lm)', () => {
  const workspace = () => vscode.workspace.workspaceFolders![0].uri.fsPath;
  const configFile = () => path.join(workspace(), '.ralph', 'config.json');
  let api: RalphExtensionApi;
  let fixture: FixtureApi;
  let events: RalphEvent[] = [];
  let subscription: { dispose(): void } | undefined;
  let originalConfig: string | undefined;

  before(async () => {
    const extension = vscode.extensions.getExtension<RalphExtensionApi>(EXTENSION_ID);
    const fixtureExtension = vscode.extensions.getExtension<FixtureApi>(FIXTURE_ID);
    assert.ok(extension && fixtureExtension, 'both extensions are loaded');
    api = await extension.activate();
    fixture = await fixtureExtension.activate();
    await vscode.commands.executeCommand('ralph.initWorkspace');
    originalConfig = await fs.readFile(configFile(), 'utf8');
  });

  // the suites share one workspace: later ones expect the config as init wrote it
  after(async () => {
    if (originalConfig !== undefined) await fs.writeFile(configFile(), originalConfig);
  });

  beforeEach(async () => {
    fixture.reset();
    events = [];
    subscription = api.bus.subscribe((event: RalphEvent) => events.push(event));
    // Select Model's scripted form writes llm.provider and llm.models in place; the rest is the test's
    const config = JSON.parse(await fs.readFile(configFile(), 'utf8').catch(() => '{}')) as Record<string, unknown>;
    await fs.writeFile(
      configFile(),
      JSON.stringify({ ...config, llm: { maxRetries: 1, requestTimeoutMs: 60000 }, loop: { maxIterations: 4, maxParallel: 1 } }, null, 2),
    );
  });

  afterEach(async function () {
    if (this.currentTest?.state === 'failed') {
      for (const e of events)
        if (e.type !== 'model.delta' && e.type !== 'checkpoint') console.log(`      event ${JSON.stringify(e).slice(0, 400)}`);
    }
    subscription?.dispose();
    if (api.runs?.running) await vscode.commands.executeCommand('ralph.stop');
    await waitFor('the run to end', () => !api.runs?.running || undefined);
  });

  async function addTask(title: string, file: string): Promise<string> {
    const task = (await vscode.commands.executeCommand('ralph.addTask', {
      title,
      prompt: `Create ${file}`,
      promise: `${file} exists`,
    })) as { id: string };
    assert.ok(task?.id);
    return task.id;
  }

  async function readTasks(): Promise<{ id: string; status: string }[]> {
    return (
      JSON.parse(await fs.readFile(path.join(workspace(), '.ralph', 'tasks.json'), 'utf8')) as { tasks: { id: string; status: string }[] }
    ).tasks;
  }

  it('Select Model (scripted form) names the editor model in llm.models and sets the provider', async () => {
    const choice = await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted-large' });
    assert.deepEqual(choice, { provider: 'vscode', model: 'ralph-test/scripted-large' });
    const written = JSON.parse(await fs.readFile(configFile(), 'utf8')) as { llm: Record<string, unknown>; loop: Record<string, unknown> };
    assert.deepEqual(written.llm, { maxRetries: 1, requestTimeoutMs: 60000, provider: 'vscode', models: ['ralph-test/scripted-large'] });
    assert.deepEqual(written.loop, { maxIterations: 4, maxParallel: 1 }, 'the rest of the config is kept');
  });

  it("runs a task to done on the editor model: tools round-tripped, text streamed, tokens counted, compaction on the model's own count and context size", async () => {
    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted-large' });
    const id = await addTask('Write a file with an editor model', 'lm-made.txt');
    // scripted-large: 100 000 input tokens, and the fixture counts 2.5 tokens a character (~10x
    // the 4-characters-a-token estimate): the system prompt alone counts ~30 000. Two replies of
    // 12 000 characters pass 0.8 × 100 000 on the model's count only (the estimate would say
    // ~9 000 tokens of a 128 000 window); the first alone does not.
    fixture.script([
      {
        text: ['Reading the README first. ', 'a'.repeat(12000)],
        toolCalls: [{ callId: 'call-read', name: 'read_file', input: { path: 'README.md' } }],
      },
      {
        text: ['Now writing. ', 'b'.repeat(12000)],
        toolCalls: [{ callId: 'call-write', name: 'write_file', input: { path: 'lm-made.txt', content: 'made by an editor model\n' } }],
      },
      { text: ['SUMMARY: read README.md, wrote lm-made.txt.'] },
      {
        toolCalls: [
          { callId: 'call-done', name: 'ralph_complete', input: { summary: 'file written', promiseEvidence: 'lm-made.txt exists' } },
        ],
      },
    ]);
    const summary = (await vscode.commands.executeCommand('ralph.runSelectedTask', id)) as {
      results: { taskId: string; status: string }[];
    };
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    assert.equal(await fs.readFile(path.join(workspace(), 'lm-made.txt'), 'utf8'), 'made by an editor model\n');
    assert.equal(fixture.pending(), 0, 'every scripted reply was used');

    // tools offered as LanguageModelChatTools; calls and results round-tripped
    const [first, second, summaryCall, last] = fixture.requests;
    assert.ok(
      first.tools.some((t) => t.name === 'write_file') && first.tools.some((t) => t.name === 'ralph_complete'),
      'our tools are offered',
    );
    const resultOf = (request: FixtureApi['requests'][number], callId: string) =>
      request.messages.flatMap((m) => (m.role === 'user' ? m.content : [])).find((p) => p.type === 'toolResult' && p.callId === callId);
    const echoedCall = second.messages.flatMap((m) => (m.role === 'assistant' ? m.content : [])).find((p) => p.type === 'toolCall');
    assert.deepEqual(echoedCall, { type: 'toolCall', callId: 'call-read', name: 'read_file', input: { path: 'README.md' } });
    assert.match(resultOf(second, 'call-read')?.content?.[0]?.value ?? '', /Fixture workspace/, 'the tool result carries the file');
    assert.equal(summaryCall.tools.length, 0, 'the compaction summary offers no tools');
    assert.ok(resultOf(last, 'call-write'), 'the write result follows the compacted conversation');

    // streamed into the live stream, usage from the model's tokenizer, compaction on its count
    const streamed = events
      .filter((e): e is Extract<RalphEvent, { type: 'model.delta' }> => e.type === 'model.delta')
      .map((e) => e.text)
      .join('');
    assert.match(streamed, /Reading the README first\. a+/);
    assert.ok(events.some((e) => e.type === 'tool.call' && e.tool === 'write_file'));
    const responses = events.filter((e): e is Extract<RalphEvent, { type: 'model.response' }> => e.type === 'model.response');
    assert.ok(
      responses.length >= 3 && responses.every((r) => r.model === 'ralph-test/scripted-large' && r.usage.promptTokens > 0),
      JSON.stringify(responses.map((r) => r.usage)),
    );
    assert.ok(fixture.counts.tokenCounts > 0, 'the model counted tokens');
    const compaction = events.find((e): e is Extract<RalphEvent, { type: 'compaction' }> => e.type === 'compaction');
    assert.ok(compaction, 'the conversation was compacted');
    assert.ok(
      compaction.tokensBefore > 80000 && compaction.tokensAfter < compaction.tokensBefore,
      `compaction ${compaction.tokensBefore} → ${compaction.tokensAfter}`,
    );
    assert.ok(
      last.messages.some((m) => m.content.some((p) => p.type === 'text' && /SUMMARY: read README\.md/.test(p.value ?? ''))),
      'the summary replaced the older turns',
    );

    // the cost is "included", not $0
    const reportDir = path.join(workspace(), '.ralph', 'reports', id);
    const reports = await fs.readdir(reportDir);
    const report = await fs.readFile(
      path.join(
        reportDir,
        reports.find((f) => f.endsWith('.md'))!,
      ),
      'utf8',
    );
    assert.match(
      report,
      /### By model\n(?:.*\n){2}\| ralph-test\/scripted-large \| \d+ \| \d+ \| \d+ \| \d+ \| included \(editor plan\) \| — \|/,
      'the receipt says the editor plan pays, never $0',
    );
  });

  it('a sub-agent runs on its own tier of the editor-model ladder', async () => {
    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted-pro' });
    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted-large' });
    const config = JSON.parse(await fs.readFile(configFile(), 'utf8')) as Record<string, unknown> & { llm: { models: string[] } };
    assert.deepEqual(
      config.llm.models,
      ['ralph-test/scripted-large', 'ralph-test/scripted-pro'],
      'Select Model keeps the ladder of the same provider behind the choice',
    );
    await fs.writeFile(configFile(), JSON.stringify({ ...config, agents: { devo: { tier: 1 } } }, null, 2));
    const id = await addTask('Delegate to devo on an editor model', 'devo.txt');
    fixture.script([
      {
        toolCalls: [
          {
            callId: 'd1',
            name: 'delegate',
            input: { target: 'devo', objective: 'Write devo.txt saying hi', expectedOutcome: 'devo.txt exists' },
          },
        ],
      },
      { text: ['Writing it.'], toolCalls: [{ callId: 'w1', name: 'write_file', input: { path: 'devo.txt', content: 'hi from devo\n' } }] },
      { text: ['devo.txt written.'] },
      {
        toolCalls: [
          { callId: 'c1', name: 'ralph_complete', input: { summary: 'devo wrote devo.txt', promiseEvidence: 'devo.txt exists' } },
        ],
      },
    ]);
    const summary = (await vscode.commands.executeCommand('ralph.runSelectedTask', id)) as {
      results: { taskId: string; status: string }[];
    };
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    assert.deepEqual(
      fixture.requests.map((r) => r.model),
      ['scripted-large', 'scripted-pro', 'scripted-pro', 'scripted-large'],
      'the orchestrator on tier 0, devo on tier 1',
    );
    assert.equal(await fs.readFile(path.join(workspace(), 'devo.txt'), 'utf8'), 'hi from devo\n');
  });

  it("Stop cancels the editor model's request through its cancellation token; the task is halted with its state saved", async () => {
    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted' });
    const id = await addTask('Wait for a slow editor model', 'never.txt');
    fixture.script([{ text: ['thinking…'], waitForCancel: true }]);
    const run = vscode.commands.executeCommand('ralph.runSelectedTask', id) as Thenable<{ results: { taskId: string; status: string }[] }>;
    await waitFor('the streamed text', () => events.some((e) => e.type === 'model.delta' && e.text.includes('thinking')));
    await vscode.commands.executeCommand('ralph.stop');
    const summary = await run;
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'halted']],
    );
    assert.equal(fixture.counts.cancelled, 1, 'the provider saw the cancellation');
    assert.equal((await readTasks()).find((t) => t.id === id)?.status, 'halted');
    const finished = events.find((e) => e.type === 'task.finished' && e.taskId === id);
    assert.match(finished && finished.type === 'task.finished' ? finished.reason : '', /stopped by the user; state saved/);
  });

  it('LanguageModelErrors (quota, refused consent) halt the task with a clear message, never retried', async () => {
    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted' });
    const id = await addTask('Hit the quota', 'quota.txt');
    fixture.script([
      { error: 'Blocked', message: 'You have exceeded your premium request allowance for this month.' },
      { text: ['must not be reached'] },
    ]);
    const summary = (await vscode.commands.executeCommand('ralph.runSelectedTask', id)) as {
      results: { taskId: string; status: string; reason?: string }[];
    };
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'halted']],
    );
    assert.equal(fixture.requests.length, 1, 'a quota error is not retried');
    assert.equal(fixture.pending(), 1);
    const finished = events.find((e): e is Extract<RalphEvent, { type: 'task.finished' }> => e.type === 'task.finished' && e.taskId === id);
    assert.ok(finished);
    assert.match(
      finished.reason,
      /quota or credits exhausted: editor model ralph-test\/scripted failed: You have exceeded your premium request allowance/,
    );
    assert.match(finished.reason, /choose another model with "Ralph: Select Model"/);
    assert.equal(events.filter((e) => e.type === 'model.retry').length, 0);

    // a refused consent (NoPermissions) halts the same way, saying how to allow it
    const refused = await addTask('Without consent', 'consent.txt');
    fixture.reset();
    fixture.script([{ error: 'NoPermissions', message: 'The user did not give consent.' }]);
    const second = (await vscode.commands.executeCommand('ralph.runSelectedTask', refused)) as {
      results: { taskId: string; status: string }[];
    };
    assert.deepEqual(
      second.results.map((r) => [r.taskId, r.status]),
      [[refused, 'halted']],
    );
    assert.equal(fixture.requests.length, 1);
    const consent = events.find(
      (e): e is Extract<RalphEvent, { type: 'task.finished' }> => e.type === 'task.finished' && e.taskId === refused,
    );
    assert.match(
      consent?.reason ?? '',
      /consent refused: editor model ralph-test\/scripted failed: The user did not give consent\. \(Ralph Loop was not allowed to use this model: allow it when VS Code asks/,
    );
  });

  it('a transient failure is retried (with a retry event), and a model that is not there halts with what the editor has', async () => {
    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/scripted-large' });
    const id = await addTask('Survive a hiccup', 'hiccup.txt');
    // a plain provider Error whose message says the connection dropped: outage, retried once (llm.maxRetries 1)
    fixture.script([
      { message: 'network error: ECONNRESET', plainError: true },
      { toolCalls: [{ callId: 'c1', name: 'write_file', input: { path: 'hiccup.txt', content: 'ok\n' } }] },
      { toolCalls: [{ callId: 'c2', name: 'ralph_complete', input: { summary: 'done', promiseEvidence: 'hiccup.txt exists' } }] },
    ]);
    const summary = (await vscode.commands.executeCommand('ralph.runSelectedTask', id)) as {
      results: { taskId: string; status: string }[];
    };
    assert.deepEqual(
      summary.results.map((r) => [r.taskId, r.status]),
      [[id, 'done']],
    );
    const retries = events.filter((e): e is Extract<RalphEvent, { type: 'model.retry' }> => e.type === 'model.retry');
    assert.equal(retries.length, 1);
    assert.match(retries[0].reason, /outage: .*ECONNRESET/);

    await vscode.commands.executeCommand('ralph.selectModel', { provider: 'vscode', model: 'ralph-test/gone-model' });
    const gone = await addTask('Use a model that is not there', 'gone.txt');
    const result = (await vscode.commands.executeCommand('ralph.runSelectedTask', gone)) as {
      results: { taskId: string; status: string }[];
    };
    assert.deepEqual(
      result.results.map((r) => [r.taskId, r.status]),
      [[gone, 'halted']],
    );
    const finished = events.find(
      (e): e is Extract<RalphEvent, { type: 'task.finished' }> => e.type === 'task.finished' && e.taskId === gone,
    );
    assert.match(finished?.reason ?? '', /editor model ralph-test\/gone-model is not available: the editor has: .*ralph-test\/scripted\b/);
  });
});
