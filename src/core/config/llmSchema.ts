import { z } from 'zod';
import { EDITOR_MODEL_SELECTOR_HELP, parseEditorModelSelector } from './editorModels';

/** `llm` in `.ralph/config.json`: the model — provider, endpoint, the ladder, prices, retries and fallbacks. */
const Price = z.strictObject({
  input: z.number().min(0).describe('USD per 1M input tokens'),
  output: z.number().min(0).describe('USD per 1M output tokens'),
  cachedInput: z
    .number()
    .min(0)
    .optional()
    .describe("USD per 1M input tokens served from the provider's prompt cache; the input price when absent"),
});

const FallbackEntry = z.strictObject({
  model: z.string().min(1).describe('model name sent to the fallback endpoint'),
  baseUrl: z.url().optional().describe('OpenAI-compatible endpoint of this fallback; default: llm.baseUrl'),
  apiKeyEnv: z
    .string()
    .min(1)
    .optional()
    .describe("environment variable holding this endpoint's key; default: the primary's key (same endpoint) or none (another endpoint)"),
});
export type FallbackConfig = z.infer<typeof FallbackEntry>;

export const LlmConfigSchema = z
  .strictObject({
    provider: z
      .enum(['openai', 'vscode'])
      .default('openai')
      .describe(
        '"openai": an OpenAI-compatible endpoint (llm.baseUrl, key in llm.apiKeyEnv); "vscode": the chat models the editor already has (GitHub Copilot or any extension contributing one, through VS Code\'s Language Model API; extension only, no key). With "vscode", llm.models entries name editor models as "<vendor>/<family>" or "<vendor>/<id>", e.g. "copilot/gpt-4.1"',
      ),
    baseUrl: z.url().optional().describe('OpenAI-compatible endpoint; the SDK default (api.openai.com) when absent'),
    apiKeyEnv: z.string().min(1).default('OPENAI_API_KEY').describe('environment variable holding the API key'),
    models: z.array(z.string().min(1)).min(1).default(['gpt-4.1-mini', 'gpt-4.1', 'o3']).describe('model ladder, cheapest first'),
    prices: z.record(z.string(), Price).default({}).describe('USD per 1M tokens, by model'),
    contextWindow: z
      .number()
      .int()
      .positive()
      .default(128000)
      .describe("the model's context size in tokens, for compaction (an editor model's own size wins)"),
    compactAt: z
      .number()
      .gt(0)
      .max(1)
      .default(0.8)
      .describe('compact the conversation when the next request would pass this share of the context window'),
    temperature: z
      .number()
      .min(0)
      .max(2)
      .optional()
      .describe("sampling temperature sent with every request; the provider's default when absent"),
    requestTimeoutMs: z.number().int().positive().default(120000).describe('time limit of one model request in ms, before it is retried'),
    maxRetries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(4)
      .describe(
        'retries of a transient failure (rate limit, 5xx, timeout, dropped connection), with exponential backoff honouring Retry-After',
      ),
    maxStepsPerIteration: z.number().int().positive().default(40).describe('tool-calling round trips per iteration'),
    fallback: z
      .array(FallbackEntry)
      .default([])
      .describe(
        'ordered models or endpoints used while the primary fails (quota exhausted, outage or rate limit after the retries); the primary is probed again after fallbackCooldownSec',
      ),
    fallbackCooldownSec: z
      .number()
      .int()
      .min(1)
      .default(300)
      .describe('seconds on a fallback before a probe request checks whether the primary is back'),
  })
  .superRefine((llm, ctx) => {
    if (llm.provider !== 'vscode') return;
    llm.models.forEach((entry, index) => {
      if (!parseEditorModelSelector(entry))
        ctx.addIssue({
          code: 'custom',
          path: ['models', index],
          message: `"${entry}" does not name an editor model: ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
    });
    // a fallback without its own baseUrl is another editor model; with one, an OpenAI-compatible endpoint
    llm.fallback.forEach((entry, index) => {
      if (entry.baseUrl === undefined && !parseEditorModelSelector(entry.model)) {
        ctx.addIssue({
          code: 'custom',
          path: ['fallback', index, 'model'],
          message: `"${entry.model}" does not name an editor model (give the entry a "baseUrl" to fall back to an OpenAI-compatible endpoint instead): ${EDITOR_MODEL_SELECTOR_HELP}`,
        });
      }
    });
  })
  .prefault({});
