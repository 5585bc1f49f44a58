import * as assert from 'node:assert/strict';
import { parseConfig } from '../../../src/core/config/load';
import { ModelError } from '../../../src/core/errors';
import type { FallbackNotice } from '../../../src/core/llm/fallbackClient';
import { createModelClient } from '../../../src/core/llm/factory';
import type { ModelClient } from '../../../src/core/llm/types';
import { openAI, openRouter } from '../../fixtures/providerErrors';
import { startScriptedServer, type ScriptedServer } from '../../fixtures/scriptedServer';

const PRIMARY_KEY = 'sk-primary-0123456789';
const BACKUP_KEY = 'sk-backup-9876543210';

describe('llm.fallback (a ModelClient decorator, two scripted endpoints, an injected clock)', () => {
  let primary: ScriptedServer;
  let backup: ScriptedServer;
  let now: number;
  let notices: FallbackNotice[];
  let client: ModelClient;

  beforeEach(async () => {
    primary = await startScriptedServer();
    backup = await startScriptedServer();
    now = 1_000_000;
    notices = [];
    const config = parseConfig({
      llm: {
        baseUrl: primary.url,
        apiKeyEnv: 'RALPH_PRIMARY_KEY',
        models: ['primary-model'],
        maxRetries: 1,
        fallback: [{ model: 'backup-model', baseUrl: backup.url, apiKeyEnv: 'RALPH_BACKUP_KEY' }],
        fallbackCooldownSec: 60,
      },
    });
    client = createModelClient(config.llm, PRIMARY_KEY, undefined, {
      fallbackKeys: { RALPH_BACKUP_KEY: BACKUP_KEY },
      onFallback: (notice) => notices.push(notice),
      clock: { now: () => now },
    });
  });
  afterEach(async () => {
    await primary.close();
    await backup.close();
  });

  const ask = (text = 'do the work') => client.chat({ model: 'primary-model', messages: [{ role: 'user', content: text }] });
  const chats = (server: ScriptedServer) => server.requests.filter((r) => r.path.endsWith('/chat/completions'));

  it('switches to the fallback on an exhausted quota, stays there during the cool-down, and returns after a successful probe', async () => {
    primary.push(openAI.quota());
    backup.push({ content: 'from backup 1' }, { content: 'from backup 2' });
    const first = await ask();
    assert.equal(first.content, 'from backup 1');
    assert.equal(first.servedBy, 'backup-model', 'priced as the model that served it');
    assert.equal(notices.length, 1);
    assert.deepEqual(
      { ...notices[0], reason: undefined },
      {
        kind: 'switch',
        from: 'primary-model',
        to: `backup-model at 127.0.0.1:${backup.port}`,
        fault: 'quota',
        reason: undefined,
        cooldownSec: 60,
      },
    );
    assert.match(notices[0].reason, /exceeded your current quota/);
    assert.equal(chats(primary).length, 1, 'quota is not retried');
    assert.equal(chats(backup)[0].headers.authorization, `Bearer ${BACKUP_KEY}`, 'the fallback endpoint gets its own key');
    assert.equal(chats(backup)[0].model, 'backup-model');

    now += 59_000; // still cooling down: the primary is left alone
    assert.equal((await ask()).content, 'from backup 2');
    assert.equal(chats(primary).length, 1);

    now += 2_000; // cool-down over: a probe first, then the real request on the primary
    primary.push({ content: 'OK' }, { content: 'from primary' });
    const back = await ask('the real request');
    assert.equal(back.content, 'from primary');
    assert.equal(back.servedBy, undefined);
    const [probe, real] = chats(primary).slice(1);
    assert.equal(probe.body?.max_completion_tokens, 16, 'the probe is tiny');
    assert.equal(probe.body?.messages?.length, 1);
    assert.equal(probe.body?.tools, undefined);
    assert.equal(real.body?.messages?.[0].content, 'the real request');
    assert.deepEqual(
      notices.map((n) => `${n.kind} ${n.from} → ${n.to}`),
      [
        `switch primary-model → backup-model at 127.0.0.1:${backup.port}`,
        `return backup-model at 127.0.0.1:${backup.port} → primary-model`,
      ],
    );
    assert.equal(chats(backup).length, 2, 'nothing more went to the fallback after the return');
  });

  it('a failed probe keeps the fallback, says so, and starts a new cool-down', async () => {
    primary.push(openRouter.credits());
    backup.push({ content: 'b1' }, { content: 'b2' }, { content: 'b3' });
    await ask();
    now += 61_000;
    primary.push(openAI.outage()); // the probe: no retries
    assert.equal((await ask()).content, 'b2');
    assert.equal(chats(primary).length, 2, 'one probe, not retried');
    const failed = notices[1];
    assert.equal(failed.kind, 'probe-failed');
    assert.equal(failed.fault, 'outage');
    assert.equal(failed.cooldownSec, 60);
    now += 30_000; // the new cool-down runs from the failed probe
    assert.equal((await ask()).content, 'b3');
    assert.equal(chats(primary).length, 2);
  });

  it("when every fallback fails too, the call fails with the primary's fault and both messages; the next call tries the primary again", async () => {
    primary.push(openAI.quota());
    backup.push(openRouter.credits());
    const error = await ask().then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ModelError);
    assert.equal(error.fault, 'quota');
    assert.match(error.message, /primary-model and every llm\.fallback entry failed/);
    assert.match(error.message, /exceeded your current quota/);
    assert.match(error.message, /Insufficient credits/);
    primary.push({ content: 'primary again' });
    assert.equal((await ask()).content, 'primary again');
  });

  it('when the fallback fails during the cool-down, the primary is asked again at once (and said so)', async () => {
    primary.push(openAI.outage(), openAI.outage()); // maxRetries 1: two attempts
    backup.push({ content: 'b1' }, openRouter.credits());
    assert.equal((await ask()).content, 'b1');
    primary.push({ content: 'primary is back' });
    now += 1_000;
    assert.equal((await ask()).content, 'primary is back');
    assert.deepEqual(
      notices.map((n) => n.kind),
      ['switch', 'return'],
    );
    assert.match(notices[1].reason, /every llm\.fallback entry failed \(quota or credits exhausted\); trying the primary again/);
  });

  it('a fallback on the same endpoint shares its key, and the failing model itself is skipped when listed', async () => {
    const config = parseConfig({
      llm: { baseUrl: primary.url, models: ['gpt-a', 'gpt-b'], maxRetries: 0, fallback: [{ model: 'gpt-b' }, { model: 'gpt-c' }] },
    });
    const same = createModelClient(config.llm, PRIMARY_KEY, undefined, { onFallback: (n) => notices.push(n), clock: { now: () => now } });
    primary.push(openAI.quota(), { content: 'from gpt-c' });
    // escalated to gpt-b, which is also the first fallback: it fails, so gpt-c serves
    const response = await same.chat({ model: 'gpt-b', messages: [{ role: 'user', content: 'hi' }] });
    assert.equal(response.content, 'from gpt-c');
    assert.deepEqual(
      chats(primary).map((r) => r.model),
      ['gpt-b', 'gpt-c'],
    );
    assert.ok(chats(primary).every((r) => r.headers.authorization === `Bearer ${PRIMARY_KEY}`));
    assert.deepEqual(
      notices.map((n) => `${n.kind} ${n.from} → ${n.to}`),
      ['switch gpt-b → gpt-c'],
    );
  });

  it('faults that a fallback cannot cure are not hidden: a bad key on the primary fails at once', async () => {
    primary.push(openAI.auth());
    const error = await ask().then(
      () => assert.fail('expected a failure'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof ModelError);
    assert.equal(error.fault, 'auth');
    assert.equal(chats(backup).length, 0);
    assert.deepEqual(notices, []);
  });
});
