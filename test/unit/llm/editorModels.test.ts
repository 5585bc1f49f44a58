import * as assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Compactor } from '../../../src/core/agent/compaction';
import { parseConfig } from '../../../src/core/config/load';
import { loadConfig } from '../../../src/core/config/service';
import { modelsAfterChoice, writeModelChoice } from '../../../src/core/config/modelChoice';
import { ConfigService } from '../../../src/core/config/service';
import { ConfigError } from '../../../src/core/errors';
import {
  editorModelSelector,
  matchEditorModels,
  parseEditorModelSelector,
  type EditorModelInfo,
} from '../../../src/core/config/editorModels';
import { listEndpointModels } from '../../../src/core/llm/endpointModels';
import { createModelClient } from '../../../src/core/llm/factory';
import { estimateCostUsd } from '../../../src/core/llm/pricing';
import type { ChatMessage, ModelClient, TokenCounter } from '../../../src/core/llm/types';
import { RalphPaths } from '../../../src/core/paths';
import { SpendMeter, MeteredModelClient } from '../../../src/core/spend/budget';
import { RedactingModelClient, SecretRedactor } from '../../../src/core/commands/secrets';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';

const model = (vendor: string, family: string, id: string, maxInputTokens = 64000): EditorModelInfo => ({
  vendor,
  family,
  id,
  name: `${vendor} ${family}`,
  version: '1',
  maxInputTokens,
});

describe('editor models (llm.provider "vscode")', () => {
  describe('selectors in llm.models', () => {
    const all = [
      model('copilot', 'gpt-4.1', 'gpt-4.1'),
      model('copilot', 'claude-sonnet-4', 'claude-sonnet-4'),
      model('copilot', 'gpt-4o', 'gpt-4o-2024'),
      model('copilot', 'gpt-4o', 'gpt-4o-mini-x'),
      model('acme', 'local', 'acme-local-7b'),
    ];

    it('parses vendor/family and vendor/id and refuses anything else', () => {
      assert.deepEqual(parseEditorModelSelector('copilot/gpt-4.1'), { vendor: 'copilot', model: 'gpt-4.1' });
      assert.deepEqual(parseEditorModelSelector('acme/org/model:latest'), { vendor: 'acme', model: 'org/model:latest' });
      for (const bad of ['gpt-4.1', 'copilot/', '/gpt-4.1', 'copilot/gpt 4', ' /x', 'co pilot/x'])
        assert.equal(parseEditorModelSelector(bad), undefined, bad);
    });

    it('matches an id first, then the family, within the vendor (case-insensitive vendor)', () => {
      assert.deepEqual(
        matchEditorModels('copilot/gpt-4.1', all).map((m) => m.id),
        ['gpt-4.1'],
      );
      assert.deepEqual(
        matchEditorModels('Copilot/gpt-4o', all).map((m) => m.id),
        ['gpt-4o-2024', 'gpt-4o-mini-x'],
      );
      assert.deepEqual(
        matchEditorModels('copilot/gpt-4o-mini-x', all).map((m) => m.id),
        ['gpt-4o-mini-x'],
      );
      assert.deepEqual(matchEditorModels('acme/gpt-4.1', all), []);
      assert.deepEqual(matchEditorModels('nonsense', all), []);
    });

    it('names a model by family when that picks it, by id otherwise', () => {
      assert.equal(editorModelSelector(all[0], all), 'copilot/gpt-4.1');
      assert.equal(editorModelSelector(all[2], all), 'copilot/gpt-4o');
      assert.equal(editorModelSelector(all[3], all), 'copilot/gpt-4o-mini-x', 'the second of a family is named by id');
      assert.equal(editorModelSelector(model('x', 'has space', 'x-1'), []), 'x/x-1');
    });
  });

  describe('config', () => {
    it('accepts provider "vscode" with selectors, and defaults to "openai"', () => {
      assert.equal(parseConfig({}).llm.provider, 'openai');
      const config = parseConfig({
        llm: { provider: 'vscode', models: ['copilot/gpt-4.1', 'copilot/claude-sonnet-4'] },
        escalation: { councilModels: ['copilot/o3'] },
      });
      assert.deepEqual(config.llm.models, ['copilot/gpt-4.1', 'copilot/claude-sonnet-4']);
    });

    it('refuses entries that name no editor model, with the key and the expected form', () => {
      assert.throws(
        () => parseConfig({ llm: { provider: 'vscode', models: ['gpt-4.1'] } }),
        (error: unknown) =>
          error instanceof ConfigError &&
          /llm\.models\.0|llm.models\[0\]|models/.test(error.message) &&
          /copilot\/gpt-4\.1/.test(error.message),
      );
      assert.throws(
        () => parseConfig({ llm: { provider: 'vscode', models: ['copilot/gpt-4.1'] }, escalation: { councilModels: ['o3'] } }),
        /councilModels[\s\S]*"o3" does not name an editor model/,
      );
      assert.throws(
        () => parseConfig({ llm: { provider: 'vscode', models: ['copilot/gpt-4.1'] }, agents: { devo: { model: 'gpt-4.1' } } }),
        /agents[\s\S]*devo[\s\S]*"gpt-4\.1" does not name an editor model/,
      );
      assert.throws(() => parseConfig({ llm: { provider: 'copilot' } }), ConfigError);
      // with the OpenAI provider, names are the endpoint's business
      assert.deepEqual(parseConfig({ llm: { models: ['gpt-4.1'] } }).llm.models, ['gpt-4.1']);
    });
  });

  describe('Select Model writes llm.provider and llm.models', () => {
    let dir: string;
    let paths: RalphPaths;
    beforeEach(async () => {
      dir = await fs.mkdtemp(path.join(os.tmpdir(), 'ralph-model-'));
      paths = new RalphPaths(dir);
      await fs.mkdir(paths.dir, { recursive: true });
    });
    afterEach(async () => fs.rm(dir, { recursive: true, force: true }));

    it('puts the choice first, keeps the ladder of the same provider, starts a new one on a provider change', () => {
      const llm = parseConfig({ llm: { models: ['a', 'b', 'c'] } }).llm;
      assert.deepEqual(modelsAfterChoice(llm, { provider: 'openai', model: 'b' }), ['b', 'a', 'c']);
      assert.deepEqual(modelsAfterChoice(llm, { provider: 'vscode', model: 'copilot/gpt-4.1' }), ['copilot/gpt-4.1']);
    });

    it('edits the file in place (other keys, order and indentation kept) and the config service sees it', async () => {
      const text =
        '{\n    "llm": {\n        "models": ["gpt-4.1-mini", "gpt-4.1"],\n        "temperature": 0.2\n    },\n    "loop": { "maxIterations": 7 }\n}\n';
      await fs.writeFile(paths.config, text);
      assert.equal((await loadConfig(paths)).llm.provider, 'openai');
      const written = await writeModelChoice(new ConfigService(paths), { provider: 'vscode', model: 'copilot/gpt-4.1' });
      assert.equal(written.llm.provider, 'vscode');
      const after = await fs.readFile(paths.config, 'utf8');
      assert.match(after, /^ {8}"models": \[/m, 'the file keeps its 4-space indentation');
      const parsed = JSON.parse(after);
      assert.deepEqual(parsed.llm, { models: ['copilot/gpt-4.1'], temperature: 0.2, provider: 'vscode' });
      assert.deepEqual(parsed.loop, { maxIterations: 7 });
      const loaded = await loadConfig(paths);
      assert.deepEqual([loaded.llm.provider, loaded.llm.models], ['vscode', ['copilot/gpt-4.1']]);
      // and back to the endpoint
      await writeModelChoice(new ConfigService(paths), { provider: 'openai', model: 'gpt-4.1' });
      assert.deepEqual(JSON.parse(await fs.readFile(paths.config, 'utf8')).llm.models, ['gpt-4.1']);
    });

    it('creates the file from the starter config when there is none', async () => {
      await writeModelChoice(new ConfigService(paths), { provider: 'vscode', model: 'copilot/gpt-4.1' });
      const config = await loadConfig(paths);
      assert.deepEqual([config.llm.provider, config.llm.models], ['vscode', ['copilot/gpt-4.1']]);
    });

    it('never overwrites a broken file, and refuses a choice that would make the config invalid', async () => {
      await fs.writeFile(paths.config, '{ "llm": { "models": [ }');
      await assert.rejects(writeModelChoice(new ConfigService(paths), { provider: 'vscode', model: 'copilot/gpt-4.1' }), ConfigError);
      assert.equal(await fs.readFile(paths.config, 'utf8'), '{ "llm": { "models": [ }');
      const valid =
        '{ "llm": { "models": ["copilot/gpt-4.1"], "provider": "vscode" }, "escalation": { "councilModels": ["copilot/o3"] } }\n';
      await fs.writeFile(paths.config, valid);
      await assert.rejects(writeModelChoice(new ConfigService(paths), { provider: 'vscode', model: 'not-a-selector' }), /left unchanged/);
      assert.equal(await fs.readFile(paths.config, 'utf8'), valid);
    });
  });

  describe("the endpoint's models", () => {
    let server: ScriptedServer | undefined;
    afterEach(async () => server?.close());

    it('lists GET /models of the scripted server, and says why when the endpoint is unreachable', async () => {
      server = await startScriptedServer({ steps: [], models: ['m-b', 'm-a', 'm-b'] });
      assert.deepEqual(await listEndpointModels({ baseUrl: server.url, apiKey: 'k' }), ['m-a', 'm-b']);
      await assert.rejects(listEndpointModels({ baseUrl: 'http://127.0.0.1:9/v1', timeoutMs: 2000 }), Error);
    });
  });

  describe('cost of editor models', () => {
    it('is unknown (not a list price, not $0) unless llm.prices names the model', () => {
      const tokens = { promptTokens: 1_000_000, completionTokens: 0 };
      assert.equal(
        estimateCostUsd('copilot/gpt-4.1', tokens, {}),
        2,
        'an OpenRouter-style id still gets the list price on the openai provider',
      );
      assert.equal(estimateCostUsd('copilot/gpt-4.1', tokens, {}, 'vscode'), undefined);
      assert.equal(estimateCostUsd('copilot/gpt-4.1', tokens, { 'copilot/gpt-4.1': { input: 1, output: 1 } }, 'vscode'), 1);
    });

    it('counts tokens against token budgets while the cost stays at zero spent', () => {
      const config = parseConfig({
        llm: { provider: 'vscode', models: ['copilot/gpt-4.1'] },
        budget: { maxTokens: 100, maxCostUsd: 0.01 },
      });
      const meter = new SpendMeter(config);
      meter.beginTask('T-1');
      meter.record('copilot/gpt-4.1', { promptTokens: 80, completionTokens: 30 });
      assert.equal(meter.runTotals.costUsd, 0);
      assert.equal(meter.runTotals.tokens, 110);
      assert.throws(() => meter.check(), /token budget reached/);
    });
  });

  describe('token counting feeds compaction', () => {
    let server: ScriptedServer | undefined;
    afterEach(async () => server?.close());

    /** The scripted server's model, with a tokenizer that counts 1 token a character and a 1000-token context. */
    function withCounter(inner: ModelClient, counted: string[][]): ModelClient {
      const tokens: TokenCounter = {
        countTokens: async (_model, messages) => {
          counted.push(messages.map((m) => m.content ?? ''));
          return messages.reduce(
            (n, m) =>
              n + (m.content ?? '').length + (m.role === 'assistant' ? (m.toolCalls ?? []).reduce((k, c) => k + c.arguments.length, 0) : 0),
            0,
          );
        },
        maxInputTokens: async () => 1000,
      };
      return { chat: (request) => inner.chat(request), tokens };
    }

    it("measures with the model's own count and context size, through the redacting and metering wrappers", async () => {
      server = await startScriptedServer({ steps: [{ content: 'SUMMARY', usage: { prompt_tokens: 5, completion_tokens: 2 } }] });
      const config = parseConfig({ llm: { baseUrl: server.url, maxRetries: 0 } });
      const counted: string[][] = [];
      const redactor = new SecretRedactor(['sk-secret-value-123']);
      const wrapped = new MeteredModelClient(
        new RedactingModelClient(withCounter(createModelClient(config.llm, 'k'), counted), redactor),
        new SpendMeter(config),
      );
      // 100 000 configured, but the model says 1000: 0.5 × 1000 = 500 tokens is the threshold
      const compactor = new Compactor({
        contextWindow: 100_000,
        compactAt: 0.5,
        model: wrapped,
        modelName: 'm',
        pinned: 'p',
        signal: new AbortController().signal,
      });
      const messages: ChatMessage[] = [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'task sk-secret-value-123' },
        { role: 'assistant', content: null, toolCalls: [{ id: 'a', name: 'read_file', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'a', content: 'x'.repeat(300) },
        { role: 'assistant', content: null, toolCalls: [{ id: 'b', name: 'read_file', arguments: '{}' }] },
        { role: 'tool', toolCallId: 'b', content: 'y'.repeat(300) },
      ];
      // 4 characters a token would say ~160 tokens: no compaction; the model's count says ~640
      const outcome = await compactor.beforeRequest(messages, []);
      assert.ok(outcome, "compacted on the model's own count");
      assert.equal(compactor.threshold, 500);
      assert.ok(outcome.tokensBefore > 600, `counted ${outcome.tokensBefore}`);
      assert.ok(outcome.tokensAfter < outcome.tokensBefore);
      assert.ok(counted.length >= 2, 'counted before and after');
      assert.ok(
        counted.flat().every((text) => !text.includes('sk-secret-value-123')),
        'the counter sees redacted messages only',
      );
      assert.equal(server.requests.length, 1, 'one summary call');
    });
  });
});
