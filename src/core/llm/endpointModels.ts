/** The models an OpenAI-compatible endpoint offers (`GET <baseUrl>/models`), for Ralph: Select Model. */
import { DEFAULT_BASE_URL } from './openaiClient';

export interface EndpointModelsOptions {
  baseUrl?: string;
  apiKey?: string;
  /** Give up after this long (default 5 s): the picker must not hang on an unreachable server. */
  timeoutMs?: number;
  fetch?: typeof globalThis.fetch;
}

/** Model ids, sorted; throws an Error saying why when the endpoint cannot be asked or answers oddly. */
export async function listEndpointModels(options: EndpointModelsOptions): Promise<string[]> {
  const base = (options.baseUrl ?? DEFAULT_BASE_URL).replace(/\/+$/, '');
  const doFetch = options.fetch ?? globalThis.fetch;
  const response = await doFetch(`${base}/models`, {
    headers: options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {},
    signal: AbortSignal.timeout(options.timeoutMs ?? 5000),
  });
  if (!response.ok) throw new Error(`GET /models answered HTTP ${response.status}`);
  const body = (await response.json()) as { data?: unknown };
  if (!Array.isArray(body?.data)) throw new Error('GET /models did not return a model list');
  const ids = body.data
    .map((m) => (m as { id?: unknown })?.id)
    .filter((id): id is string => typeof id === 'string' && id.length > 0 && id.length <= 200);
  return [...new Set(ids)].sort();
}
