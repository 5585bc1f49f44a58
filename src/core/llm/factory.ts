import type { RalphConfig } from '../config/schema';
import { ConfigError } from '../errors';
import type { SecretSource } from '../ports';
import { OpenAIModelClient } from './openaiClient';
import type { ModelClient, RetryNotice } from './types';

/**
 * The key for `llm`: required for OpenAI itself; optional for a custom `baseUrl`
 * (Ollama, LM Studio and vLLM usually need none).
 */
export async function resolveApiKey(llm: RalphConfig['llm'], secrets: SecretSource): Promise<string> {
  const key = await secrets.getApiKey(llm.apiKeyEnv);
  if (key) return key;
  if (llm.baseUrl) return '';
  throw new ConfigError(
    `no API key: set the environment variable ${llm.apiKeyEnv} (or "llm.apiKeyEnv" in .ralph/config.json), or "llm.baseUrl" for a keyless local server`,
  );
}

export function createModelClient(llm: RalphConfig['llm'], apiKey: string, onRetry?: (notice: RetryNotice) => void): ModelClient {
  return new OpenAIModelClient({
    apiKey,
    baseUrl: llm.baseUrl,
    timeoutMs: llm.requestTimeoutMs,
    maxRetries: llm.maxRetries,
    onRetry,
  });
}

/** Environment variables as the CLI's secret source. */
export const envSecrets: SecretSource = {
  getApiKey: async (envName) => process.env[envName] || undefined,
};
