import * as assert from 'node:assert/strict';
import { parseConfig } from '../../../src/core/config/load';
import { describeKeySource, envSecrets, resolveFallbackKeys } from '../../../src/core/llm/factory';
import { SecretStorageSource } from '../../../src/adapters/secrets';

/** VS Code's SecretStorage, as far as the adapter uses it (it only imports the type). */
function storage(initial?: string) {
  let value = initial;
  return {
    get: async () => value,
    store: async (_key: string, next: string) => {
      value = next;
    },
    delete: async () => {
      value = undefined;
    },
    keys: async () => (value ? ['ralph.apiKey'] : []),
    onDidChange: () => ({ dispose() {} }),
  };
}

describe('where the key comes from (named in authentication faults, never the key)', () => {
  const llm = parseConfig({ llm: { apiKeyEnv: 'RALPH_SOURCE_TEST_KEY' } }).llm;

  it('the CLI names the environment variable', async () => {
    assert.equal(await describeKeySource(llm, envSecrets), 'the environment variable RALPH_SOURCE_TEST_KEY');
  });

  it('the extension names its secret storage when the key is stored there, else the variable', async () => {
    const stored = new SecretStorageSource(storage('sk-stored') as never);
    assert.equal(await describeKeySource(llm, stored), "VS Code's secret storage (Ralph: Set API Key)");
    const empty = new SecretStorageSource(storage() as never);
    assert.equal(await describeKeySource(llm, empty), 'the environment variable RALPH_SOURCE_TEST_KEY');
  });

  it('a fallback entry naming an unset variable refuses the run before it starts; a set one is resolved from the environment', async () => {
    const config = parseConfig({
      llm: { fallback: [{ model: 'm2', baseUrl: 'https://openrouter.ai/api/v1', apiKeyEnv: 'RALPH_FALLBACK_TEST_KEY' }] },
    }).llm;
    delete process.env.RALPH_FALLBACK_TEST_KEY;
    await assert.rejects(
      resolveFallbackKeys(config, envSecrets),
      /llm\.fallback entry "m2" names the environment variable RALPH_FALLBACK_TEST_KEY, which is not set/,
    );
    process.env.RALPH_FALLBACK_TEST_KEY = 'sk-fallback';
    try {
      // the extension's secret-storage key is the primary's: another variable is read from the environment only
      assert.deepEqual(await resolveFallbackKeys(config, new SecretStorageSource(storage('sk-primary-stored') as never)), {
        RALPH_FALLBACK_TEST_KEY: 'sk-fallback',
      });
    } finally {
      delete process.env.RALPH_FALLBACK_TEST_KEY;
    }
  });

  it('config: llm.fallback entries are strict, with did-you-mean', () => {
    assert.throws(() => parseConfig({ llm: { fallback: [{ model: 'm', apiKey: 'sk-inline' }] } } as never), /apiKey/);
    assert.throws(() => parseConfig({ llm: { fallbackCooldown: 10 } } as never), /fallbackCooldownSec/);
    assert.deepEqual(parseConfig({}).llm.fallback, []);
    assert.equal(parseConfig({}).llm.fallbackCooldownSec, 300);
    assert.equal(parseConfig({}).loop.windDownSeconds, 60);
  });
});
