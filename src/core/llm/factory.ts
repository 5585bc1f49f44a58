import type { FallbackConfig, RalphConfig } from '../config/schema';
import { ConfigError } from '../errors';
import { type Clock, type SecretSource, systemClock } from '../ports';
import { FallbackModelClient, type FallbackNotice, type FallbackTarget } from './fallbackClient';
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
  throw new MissingKeyError(
    `no API key: set the environment variable ${llm.apiKeyEnv} (or "llm.apiKeyEnv" in .ralph/config.json), or "llm.baseUrl" for a keyless local server`,
  );
}

/** No key for `llm` where one is needed: the editor offers Set API Key (or its own models) for this one. */
export class MissingKeyError extends ConfigError {}

/** Where the primary key comes from, as named in an authentication fault (never the key). */
export async function describeKeySource(llm: RalphConfig['llm'], secrets: SecretSource): Promise<string> {
  return (await secrets.keySource?.(llm.apiKeyEnv)) ?? `the environment variable ${llm.apiKeyEnv}`;
}

/**
 * The keys of the `llm.fallback` entries that name their own `apiKeyEnv`, by variable name.
 * A named variable that is unset is a configuration error, said before the run starts.
 */
export async function resolveFallbackKeys(llm: RalphConfig['llm'], secrets: SecretSource): Promise<Record<string, string>> {
  const keys: Record<string, string> = {};
  for (const entry of llm.fallback) {
    if (!entry.apiKeyEnv || entry.apiKeyEnv in keys) continue;
    const key = entry.apiKeyEnv === llm.apiKeyEnv ? await secrets.getApiKey(entry.apiKeyEnv) : process.env[entry.apiKeyEnv];
    if (!key)
      throw new ConfigError(`llm.fallback entry "${entry.model}" names the environment variable ${entry.apiKeyEnv}, which is not set`);
    keys[entry.apiKeyEnv] = key;
  }
  return keys;
}

export interface ModelClientHooks {
  /** Each retry of any endpoint, for `model.retry` events. */
  onRetry?: (notice: RetryNotice) => void;
  /** Every switch to a fallback and return to the primary, for `model.fallback` events. */
  onFallback?: (notice: FallbackNotice) => void;
  /** The keys of the fallback entries, from resolveFallbackKeys. */
  fallbackKeys?: Record<string, string>;
  /** Named in authentication faults of the primary endpoint. */
  keySource?: string;
  /** Times the fallback cool-down; injectable for tests. */
  clock?: Clock;
}

/** The model client of `llm`: the OpenAI-compatible endpoint, behind `llm.fallback` when entries are configured. */
export function createModelClient(
  llm: RalphConfig['llm'],
  apiKey: string,
  onRetry?: (notice: RetryNotice) => void,
  hooks: ModelClientHooks = {},
): ModelClient {
  const retry = onRetry ?? hooks.onRetry;
  const endpoint = (baseUrl: string | undefined, key: string, keySource: string | undefined, maxRetries = llm.maxRetries) =>
    new OpenAIModelClient({ apiKey: key, baseUrl, timeoutMs: llm.requestTimeoutMs, maxRetries, onRetry: retry, keySource });
  const primary = endpoint(llm.baseUrl, apiKey, hooks.keySource);
  if (llm.fallback.length === 0) return primary;
  return behindFallbacks(llm, primary, endpoint(llm.baseUrl, apiKey, hooks.keySource, 0), hooks, (entry) => {
    const client = sameEndpoint(entry, llm)
      ? primary
      : endpoint(entry.baseUrl ?? llm.baseUrl, fallbackKey(entry, llm, apiKey, hooks.fallbackKeys), keySourceOf(entry));
    return { model: entry.model, client, label: entry.baseUrl ? `${entry.model} at ${hostOf(entry.baseUrl)}` : entry.model };
  });
}

/**
 * `llm.fallback` over the editor's models (`llm.provider` "vscode"): an entry without a `baseUrl`
 * is another editor model served by `editor` itself; one with a `baseUrl` is an OpenAI-compatible
 * endpoint with the key of its `apiKeyEnv` (none otherwise). `probe` reaches the primary without
 * retries. Without fallback entries, `editor` as it is.
 */
export function withEditorFallback(
  llm: RalphConfig['llm'],
  editor: ModelClient,
  probe: ModelClient,
  hooks: ModelClientHooks = {},
): ModelClient {
  if (llm.fallback.length === 0) return editor;
  return behindFallbacks(llm, editor, probe, hooks, (entry) => {
    if (entry.baseUrl === undefined) return { model: entry.model, client: editor, label: entry.model };
    const key = entry.apiKeyEnv ? resolvedKey(entry, hooks.fallbackKeys) : '';
    const client = new OpenAIModelClient({
      apiKey: key,
      baseUrl: entry.baseUrl,
      timeoutMs: llm.requestTimeoutMs,
      maxRetries: llm.maxRetries,
      onRetry: hooks.onRetry,
      keySource: keySourceOf(entry),
    });
    return { model: entry.model, client, label: `${entry.model} at ${hostOf(entry.baseUrl)}` };
  });
}

/** `primary` behind the `llm.fallback` entries, each made a target by `target`. */
function behindFallbacks(
  llm: RalphConfig['llm'],
  primary: ModelClient,
  probe: ModelClient,
  hooks: ModelClientHooks,
  target: (entry: FallbackConfig) => FallbackTarget,
): ModelClient {
  return new FallbackModelClient({
    primary,
    probe,
    fallbacks: llm.fallback.map(target),
    cooldownMs: llm.fallbackCooldownSec * 1000,
    clock: hooks.clock ?? systemClock,
    onNotice: (notice) => hooks.onFallback?.(notice),
  });
}

function sameEndpoint(entry: FallbackConfig, llm: RalphConfig['llm']): boolean {
  return (
    (entry.baseUrl === undefined || entry.baseUrl === llm.baseUrl) && (entry.apiKeyEnv === undefined || entry.apiKeyEnv === llm.apiKeyEnv)
  );
}

/** A fallback on another endpoint never gets the primary's key unless it names the same variable. */
function fallbackKey(entry: FallbackConfig, llm: RalphConfig['llm'], apiKey: string, keys: Record<string, string> = {}): string {
  if (entry.apiKeyEnv === llm.apiKeyEnv) return apiKey;
  if (entry.apiKeyEnv) return resolvedKey(entry, keys);
  return entry.baseUrl && entry.baseUrl !== llm.baseUrl ? '' : apiKey;
}

/** The key of the variable an entry names, as resolveFallbackKeys found it. */
function resolvedKey(entry: FallbackConfig, keys: Record<string, string> = {}): string {
  const key = entry.apiKeyEnv ? keys[entry.apiKeyEnv] : undefined;
  if (key === undefined)
    throw new ConfigError(`llm.fallback entry "${entry.model}": the key of ${entry.apiKeyEnv} was not resolved (resolveFallbackKeys)`);
  return key;
}

function keySourceOf(entry: FallbackConfig): string | undefined {
  return entry.apiKeyEnv ? `the environment variable ${entry.apiKeyEnv}` : undefined;
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The model port of work that calls the model (a run, a plan, a council), its secrets, and what to release when done. */
export interface ModelSession {
  model: ModelClient;
  /** The keys it uses, redacted wherever the work writes. */
  secretValues: string[];
  dispose(): void;
}

/** What a model port reports while it works: retries and fallback switches. */
export interface ModelNotices {
  onRetry?(notice: RetryNotice): void;
  onFallback?(notice: FallbackNotice): void;
}

/**
 * Builds the model port from a configuration. The CLI's is `endpointModels` (OpenAI-compatible
 * endpoints); the editor's adds its own language models (`llm.provider` "vscode").
 */
export type ModelFactory = (config: RalphConfig, notices?: ModelNotices) => Promise<ModelSession>;

/**
 * The OpenAI-compatible endpoint of `llm` with its key, behind `llm.fallback` with theirs. A
 * missing primary key is a MissingKeyError; a fallback variable that is not set, a ConfigError.
 */
export function endpointModels(secrets: SecretSource): ModelFactory {
  return async (config, notices = {}) => {
    const apiKey = await resolveApiKey(config.llm, secrets);
    const fallbackKeys = await resolveFallbackKeys(config.llm, secrets);
    const keySource = await describeKeySource(config.llm, secrets);
    const model = createModelClient(config.llm, apiKey, notices.onRetry, { fallbackKeys, keySource, onFallback: notices.onFallback });
    return { model, secretValues: [apiKey, ...Object.values(fallbackKeys)].filter((key) => key !== ''), dispose: () => undefined };
  };
}

/** Environment variables as the CLI's secret source. */
export const envSecrets: SecretSource = {
  getApiKey: async (envName) => process.env[envName] || undefined,
  keySource: async (envName) => `the environment variable ${envName}`,
};
